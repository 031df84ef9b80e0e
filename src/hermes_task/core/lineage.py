"""A task's lineage (pure): the proof that a segment continues it, the store's proposals (children,
continuations) and one window over the proven segments. The rules: docs/identity.md, "Lineage and
segments", "A parent's tasks", "Where a parent id comes from" and "The local store". Beyond them: a
hop also needs the same `profile_name` where both record one; a task root other than the anchor
ends the walk (`foreign_root`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import lru_cache
from typing import Any, Literal, TypeGuard

from msgspec import Struct

from hermes_task.core.sanitize import is_valid_id
from hermes_task.core.window import RowKey, Window
from hermes_task.core.wire import SessionDetail, WireMessage

MARKERS = ("_delegate_from", "_branched_from", "_reset_from")
MAX_PATH_NODES = 32
LEGACY_SOURCE_REWRITE = "legacy_source_rewrite"


class LineageRejected(Exception):
    """The candidate is not provably a segment of this task; `reason` is a stable code."""

    def __init__(self, reason: str, at: str | None = None) -> None:
        super().__init__(reason if at is None else f"{reason} at {at}")
        self.reason = reason
        self.at = at


class BoundReached(Exception):
    """A proof bound (path length or detail reads) stopped the walk."""


class ForkAmbiguous(Exception):
    """Two proven segments lie on different branches of the task."""

    def __init__(self, first: Sequence[str], second: Sequence[str]) -> None:
        super().__init__(f"{first[-1]} and {second[-1]} are on different branches")
        self.first = tuple(first)
        self.second = tuple(second)


class Proof(Struct, frozen=True):
    """A verified lineage: `path[0]` is the anchor, `path[-1]` the proven segment."""

    path: tuple[str, ...]
    notes: tuple[str, ...] = ()


def parse_model_config(detail: SessionDetail) -> dict[str, Any] | None:
    """The model config as a dict, or None when null; raises on a missing or bad value."""
    if not detail.has_model_config:
        raise LineageRejected("missing_field", detail.id)
    raw = detail.model_config_raw
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            raise LineageRejected("bad_model_config", detail.id) from None
    if raw is not None and not isinstance(raw, dict):
        raise LineageRejected("bad_model_config", detail.id)
    return raw


def _finite(value: object) -> TypeGuard[float]:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def names_direct_parent(node: SessionDetail) -> bool:
    """Does `node`'s model config name its parent (a delegation, branch or reset root)?"""
    try:
        markers = parse_model_config(node) or {}
    except LineageRejected:
        return False
    return node.parent_session_id is not None and any(
        markers.get(m) == node.parent_session_id for m in MARKERS
    )


# Does the backend's rotation rewrite `tool` into `subagent`? A value, or a thunk given the
# hop's child (asked only when the exception could apply).
RewritesSource = bool | Callable[[SessionDetail], bool]


def check_hop(child: SessionDetail, parent: SessionDetail, *, rewrites_source: RewritesSource) -> str | None:
    """Accept `child -> parent` as a compression edge or raise `LineageRejected` naming the first
    failing check; a note when the hop used the source-rewrite exception. The child may start
    before the parent's `ended_at`: the backend inserts it before it stamps the parent's closure."""
    if parent.end_reason != "compression":
        raise LineageRejected("not_compression_edge", child.id)
    start, parent_start, parent_end = child.started_at, parent.started_at, parent.ended_at
    if not (_finite(start) and _finite(parent_start) and _finite(parent_end)) or not (
        start >= parent_start and parent_end >= parent_start
    ):
        raise LineageRejected("bad_timestamps", child.id)
    if child.source is None or parent.source is None:
        raise LineageRejected("missing_field", child.id)
    note = None
    if child.source != parent.source:
        if not (
            parent.source == "tool"
            and child.source == "subagent"
            and (rewrites_source(child) if callable(rewrites_source) else rewrites_source)
        ):
            raise LineageRejected("source_changed", child.id)
        note = LEGACY_SOURCE_REWRITE
    child_mc, parent_mc = parse_model_config(child) or {}, parse_model_config(parent) or {}
    for marker in MARKERS:
        value = child_mc.get(marker)
        if value != parent_mc.get(marker):
            raise LineageRejected("marker_changed", child.id)
        if value is not None and value in (parent.id, child.id):
            raise LineageRejected("direct_parent_marker", child.id)
    if child.profile_name and parent.profile_name and child.profile_name != parent.profile_name:
        raise LineageRejected("profile_changed", child.id)
    return note


def prove(
    anchor: SessionDetail,
    candidate: str,
    read: Callable[[str], SessionDetail],
    *,
    rewrites_source: RewritesSource,
    max_nodes: int = MAX_PATH_NODES,
    verified: Sequence[str] = (),
) -> Proof:
    """Walk from `candidate` back to `anchor`, or to a segment of the proven path `verified`, over
    `read` (exact-id, profile-checked details; may raise `BoundReached`)."""
    proven = tuple(verified) if verified and verified[0] == anchor.id else (anchor.id,)
    at = {sid: i for i, sid in enumerate(proven)}
    if candidate in at:  # already proven (a late reference to a verified segment)
        return Proof(proven[: at[candidate] + 1])
    node = read(candidate)
    start, end = node.started_at, node.ended_at
    if not _finite(start) or (end is not None and not (_finite(end) and end >= start)):
        raise LineageRejected("bad_timestamps", node.id)  # the candidate's own timestamps
    chain = [node]
    notes: list[str | None] = []
    while True:
        parent_id = node.parent_session_id
        if parent_id is None:
            raise LineageRejected("unrelated", node.id)
        if any(d.id == parent_id for d in chain):
            raise LineageRejected("cycle", parent_id)
        if len(chain) + 1 > max_nodes:
            raise BoundReached(f"lineage path longer than {max_nodes} nodes")
        if parent_id != anchor.id and names_direct_parent(node):
            # A delegation (branch, reset) root that is not the anchor: the walk left the task.
            raise LineageRejected("foreign_root", node.id)
        parent = anchor if parent_id == anchor.id else read(parent_id)
        notes.append(check_hop(node, parent, rewrites_source=rewrites_source))
        if parent.id in at:
            break
        chain.append(parent)
        node = parent
    walked = tuple(d.id for d in reversed(chain))
    return Proof(proven[: at[parent.id] + 1] + walked, tuple(n for n in dict.fromkeys(notes) if n))


def combine(current: Sequence[str], other: Sequence[str]) -> tuple[str, ...]:
    """The longer of two proven paths when one extends the other, else a fork."""
    a, b = tuple(current), tuple(other)
    if b[: len(a)] == a:
        return b
    if a[: len(b)] == b:
        return a
    raise ForkAmbiguous(a, b)


def continues_parent(
    anchor: SessionDetail, parent: SessionDetail, *, rewrites_source: RewritesSource
) -> bool:
    """Does the anchor itself continue its parent by compression (earlier segments exist)?"""
    try:
        check_hop(anchor, parent, rewrites_source=rewrites_source)
    except LineageRejected:
        return False
    return True


# The newest children of one session the store proposes; one more row read says the bound cut some.
MAX_CHILDREN = 1000
AMBIGUOUS = "ambiguous_match"


class StoreUnavailable(Exception):
    """The local store cannot be read without risk: `reason`, a `store_unavailable` code; `detail`, a hint."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


class StoreSession(Struct, frozen=True):
    """The few columns of one `sessions` row the store reader returns (`model_config` raw)."""

    id: str
    parent_session_id: str | None
    model_config: str | None
    started_at: float | None
    ended_at: float | None
    end_reason: str | None
    source: str | None
    profile_name: str | None


class Spawn(Struct, frozen=True):
    """One task that may own a child."""

    key: int  # identifies it to the caller
    goal: str | None
    segments: frozenset[str]  # the parent segments whose rows carry the spawn call
    spawned_at: float | None  # that row's timestamp


@lru_cache(maxsize=4096)
def config_markers(raw: str) -> tuple[Any, ...] | None:
    """The markers of one `model_config` text (cached: siblings share theirs); None: not an object."""
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    data = {} if data is None else data
    return tuple(data.get(m) for m in MARKERS) if isinstance(data, dict) else None


def markers(row: StoreSession) -> dict[str, Any] | None:
    """The model config's markers (none set for a NULL config), or None when it is not a JSON object."""
    found = config_markers("null" if row.model_config is None else row.model_config)
    return None if found is None else dict(zip(MARKERS, found, strict=True))


def is_delegated_child(row: StoreSession, parent_id: str) -> bool:
    found = markers(row)
    return row.parent_session_id == parent_id and found is not None and found["_delegate_from"] == parent_id


def is_continuation(row: StoreSession, segment_id: str, segment_markers: Mapping[str, Any]) -> bool:
    """Does `row` look like a compression continuation of the segment (a proposal only)?"""
    found = markers(row)
    return (
        row.parent_session_id == segment_id
        and found is not None
        and all(found[m] == segment_markers.get(m) and found[m] != segment_id for m in MARKERS)
    )


def same_profile(row: StoreSession, profile: str | None) -> bool:
    """Is `row` of the profile in use (`default` when none is named), or of none recorded?"""
    return row.profile_name is None or row.profile_name == (profile or "default")


def normalise_goal(text: object) -> str | None:
    """The goal compared: whitespace runs collapsed, ends stripped; None for a non-text goal."""
    flat = " ".join(text.split()) if isinstance(text, str) else ""
    return flat or None


def pairs(
    spawns: Sequence[Spawn], children: Sequence[StoreSession], goals: Mapping[str, str | None]
) -> Iterator[tuple[Spawn, StoreSession]]:
    """Every (task, child) where a delegated child of one of the task's segments, with the task's
    goal, started after its spawn; in task order, each task asking only its (segment, goal) keys."""
    index: dict[tuple[str, str], list[StoreSession]] = {}
    seen: set[str] = set()
    for child in children:
        parent, goal = child.parent_session_id, goals.get(child.id)
        if child.id in seen or parent is None or goal is None or not is_delegated_child(child, parent):
            continue
        seen.add(child.id)
        index.setdefault((parent, goal), []).append(child)
    for spawn in spawns:
        wanted = normalise_goal(spawn.goal)
        if wanted is None:
            continue
        for segment in sorted(spawn.segments):
            for child in index.get((segment, wanted), ()):
                spawned, started = spawn.spawned_at, child.started_at
                if _finite(spawned) and _finite(started) and started >= spawned:
                    yield spawn, child


def match(
    spawns: Sequence[Spawn], children: Sequence[StoreSession], goals: Mapping[str, str | None]
) -> dict[int, str]:
    """`{spawn.key: child id or AMBIGUOUS}`; `goals`: a child id's normalised first user row."""
    found: dict[int, list[str]] = {}
    owners: dict[str, list[int]] = {}
    for spawn, child in pairs(spawns, children, goals):
        found.setdefault(spawn.key, []).append(child.id)
        owners.setdefault(child.id, []).append(spawn.key)
    return {
        key: ids[0] if len(set(ids)) == 1 and len(set(owners[ids[0]])) == 1 else AMBIGUOUS
        for key, ids in found.items()
    }


def _delegated(rows: Sequence[StoreSession], profile: str | None, limit: int, *, parents: bool) -> list[str]:
    """The valid ids (`parents`: the parents' ids) of this profile's delegated children among
    `rows`, each once, at most `limit`."""
    out: list[str] = []
    for row in rows:
        parent = row.parent_session_id
        if not (parent and is_valid_id(row.id)) or (parents and not is_valid_id(parent)):
            continue
        found = parent if parents else row.id
        if found not in out and is_delegated_child(row, parent) and same_profile(row, profile):
            out.append(found)
            if len(out) >= limit:
                break
    return out


def recent_task_roots(rows: Sequence[StoreSession], profile: str | None, limit: int = 50) -> list[str]:
    """Delegated task roots among `rows` (newest first), as `_delegated`."""
    return _delegated(rows, profile, limit, parents=False)


def json_value(value: Any) -> Any:
    """A JSON text's value (None when it does not parse); any other value as it is."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except (ValueError, RecursionError):
            return None
    return value


def spawn_times(messages: Sequence[Any]) -> dict[str, float]:
    """For each tool call id on a non-tool row, the earliest timestamp of a row carrying it."""
    out: dict[str, float] = {}
    for msg in messages:
        if msg.role == "tool" or not _finite(msg.timestamp):
            continue
        calls = json_value(msg.tool_calls)
        for call in calls if isinstance(calls, list) else []:
            call_id = call.get("id") if isinstance(call, dict) else None
            if isinstance(call_id, str) and call_id:
                out[call_id] = min(out.get(call_id, math.inf), float(msg.timestamp))
    return out


def propose_parents(rows: Sequence[StoreSession], profile: str | None, limit: int) -> list[str]:
    """The parents of the delegated children among `rows` (newest first), as `_delegated`."""
    return _delegated(rows, profile, limit, parents=True)


def children_of(rows: Sequence[StoreSession], parent: str, profile: str | None) -> list[StoreSession]:
    """The store's delegated children of `parent` among `rows`, newest first (proposals)."""
    kids = [
        r for r in rows if is_delegated_child(r, parent) and same_profile(r, profile) and is_valid_id(r.id)
    ]
    return sorted(kids, key=lambda r: -math.inf if r.started_at is None else r.started_at, reverse=True)


class Cursor(Struct, frozen=True):
    """Where the next older read goes: `page` (older rows of `window`), `first` (segment `sid`'s
    newest page), `start` (the lineage's first row is held) or `blocked` (`sid` cannot be read)."""

    kind: Literal["page", "first", "start", "blocked"]
    sid: str | None
    window: Window


def held(sid: str, windows: Sequence[Window]) -> int:
    """Active rows of segment `sid` held by any of `windows` (what its `message_count` counts)."""
    return len({k for w in windows for k in w.keys if k[0] == sid and w.messages[k].active != 0})


def must_read(have: int, total: int | None) -> bool:
    """Is an earlier segment read on its own: the windows hold fewer of its active rows than `total`?"""
    return not have or (total is not None and have < total)


def cursor(
    path: tuple[str, ...],
    tip: Window,
    earlier: Mapping[str, Window],
    blocked: frozenset[str] = frozenset(),
    counts: Mapping[str, int | None] | None = None,
) -> Cursor:
    """The next older read of the history; `counts`: the segments' detail `message_count`."""
    counts = counts or {}
    current = tip
    windows = [tip, *earlier.values()]
    for sid in reversed(path[:-1]):
        if not current.at_start:
            return Cursor("page", current.canonical, current)
        if sid in blocked:
            return Cursor("blocked", sid, current)
        if sid in earlier:
            current = earlier[sid]
            continue
        if must_read(held(sid, windows), counts.get(sid)):
            return Cursor("first", sid, current)
    if not current.at_start:
        return Cursor("page", current.canonical, current)
    return Cursor("start", path[0], current)


class View(Struct, frozen=True):
    """The shown identities in display order, every known message, and the foreign identities."""

    keys: tuple[RowKey, ...]
    messages: Mapping[RowKey, WireMessage]
    foreign: int


def compose(path: tuple[str, ...], tip: Window, earlier: Mapping[str, Window]) -> View:
    """Earlier windows (oldest segment first), then the tip window, each identity once; a later
    window's copy of a message replaces an earlier one's."""
    owned = {sid: i for i, sid in enumerate(path)}
    windows = [*(earlier[sid] for sid in path if sid in earlier and sid != tip.canonical), tip]
    messages = {key: msg for window in windows for key, msg in window.messages.items()}
    entries = [(key, messages[key].message_uid) for window in windows for key in window.keys]
    first: dict[str, int] = {}
    for key, uid in entries:
        earliest(first, uid, owned.get(key[0]))
    marked = list(shown_once(entries, owned, first))
    shown = tuple(key for key, owned_row in marked if owned_row)
    return View(shown, messages, len(marked) - len(shown))


def earliest(first: dict[str, int], uid: str | None, at: int | None) -> None:
    """Keep in `first` each uid's earliest segment `at` (its lineage index; None: foreign)."""
    if uid and at is not None:
        first[uid] = min(first.get(uid, at), at)


def shown_once(
    entries: Iterable[tuple[RowKey, str | None]], owned: Mapping[str, int], first: dict[str, int]
) -> Iterator[tuple[RowKey, bool]]:
    """Each identity of `entries` (key, `message_uid`) once, in order: (key, shown); a row outside
    the lineage (`owned`) is not shown, a uid only as its copy in the earliest segment `first` names
    (docs/identity.md, "Durable identity"; `first`, from `earliest` over the same entries, is consumed)."""
    seen: set[RowKey] = set()
    for key, uid in entries:
        if key in seen:
            continue
        seen.add(key)
        at = owned.get(key[0])
        if at is None:
            yield key, False
            continue
        if uid:
            if first.get(uid) != at:
                continue
            del first[uid]  # the earliest copy is shown; every other is the same row
        yield key, True
