"""The local store as the reading layer uses it: ids it proposes, proven over HTTP; nothing
read from it is shown or trusted (docs/identity.md, "The local store", "A parent's tasks",
"Where a parent id comes from"). Debug lines name what was dropped and why, never content.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import Protocol, TypeVar

from msgspec.structs import replace

from hermes_task.core import lineage
from hermes_task.core.delegations import LedgerRecord, number_order
from hermes_task.core.documents import (
    ParentEntry,
    Row,
    TaskEntry,
    WarningItem,
    first_words,
    warning,
)
from hermes_task.core.lineage import (
    AMBIGUOUS,
    MAX_PATH_NODES,
    LineageRejected,
    Spawn,
    StoreSession,
    StoreUnavailable,
    check_hop,
    children_of,
    is_delegated_child,
    match,
    normalise_goal,
    pairs,
    parse_model_config,
    propose_parents,
    same_profile,
    spawn_times,
)
from hermes_task.core.projection import project
from hermes_task.core.sanitize import clean_line, is_valid_id
from hermes_task.core.ui_strings import RECOVER, STORE_ADVICE, WarningCode, store_reason, store_warning
from hermes_task.core.wire import MessagesPage, SessionDetail, WireMessage
from hermes_task.failures import Code, HermesError
from hermes_task.reading.api import DashboardAPI, SharedDetails, StoreAPI, gather

T = TypeVar("T")


@dataclass(eq=False)
class StoreHints:
    """An optional store; every lookup answers `None` once it is off or failed (one warning)."""

    store: StoreAPI | None
    off: str | None = None
    _: KW_ONLY
    debug: Callable[[str], None] | None = None
    path: str | None = None  # named in the warning (a missing file, ...)
    warning: WarningItem | None = field(default=None, init=False)
    failed: bool = field(default=False, init=False)
    tried: int = field(default=0, init=False)
    unknown: int = field(default=0, init=False)
    # What HTTP showed of proposed children, kept for the run.
    shown: dict[str, StoreSession] = field(default_factory=dict, init=False)
    goals: dict[str, str | None] = field(default_factory=dict, init=False)
    # Proven stays proven: each task's child assigned over HTTP, by (call id, task index).
    assigned: dict[tuple[str, int | None], str] = field(default_factory=dict, init=False)
    locks: int = field(default=0, init=False)  # lookups a held lock failed (the next one asks again)
    cut: set[str] = field(default_factory=set, init=False)  # segments with over MAX_CHILDREN children
    left_out: set[str] = field(default_factory=set, init=False)  # tasks a cut left without a child
    _lock: threading.RLock = field(default_factory=threading.RLock, init=False)  # reads side by side

    def __post_init__(self) -> None:
        self.path = clean_line(self.path) if self.path else None

    def _unavailable(self, reason: str) -> None:
        if reason == "locked":
            self.locks += 1  # said once like any other reason, but the store is asked again
        else:
            self.failed = self.failed or reason != "foreign"
        if self.warning is None:
            self.warning = WarningItem(
                code=WarningCode.store_unavailable, message=store_warning(reason, self.path)
            )

    def _call(self, lookup: Callable[[StoreAPI], T]) -> T | None:
        with self._lock:
            if self.store is None:
                self._unavailable(self.off or "disabled")
                return None
            try:
                return lookup(self.store)
            except StoreUnavailable as exc:
                self._unavailable(exc.reason)
                return None

    def children(self, session_id: str) -> list[StoreSession] | None:
        """The store's newest `MAX_CHILDREN` children of a session; None when unavailable or foreign."""
        found = self._call(lambda s: s.children(session_id))
        if found == [] and self._call(lambda s: s.knows(session_id)) is False:
            self._unavailable("foreign")
            return None
        bound = lineage.MAX_CHILDREN
        if found is not None and len(found) > bound:
            self.cut.add(session_id)
            self.say(f"store: only the newest {bound} children of a session are proposed")
            found = found[:bound]
        return found

    def first_user_goal(self, session_id: str) -> str | None:
        return normalise_goal(self._call(lambda s: s.first_user_text(session_id)))

    def delegation(self, delegation_id: str) -> LedgerRecord | None:
        return self._call(lambda s: s.delegation(delegation_id))

    def say(self, line: str) -> None:
        if self.debug is not None:
            self.debug(line)

    def warnings(self) -> list[WarningItem]:
        if self.tried and self.tried == self.unknown:  # every proposal unknown: a foreign store
            self._unavailable("foreign")
        tasks = ", ".join(sorted(self.left_out, key=number_order))
        detail = RECOVER["store_bound"].format(n=lineage.MAX_CHILDREN, tasks=tasks)
        bound = [warning(WarningCode.bound_reached, detail)] if tasks else []
        return ([self.warning] if self.warning is not None else []) + bound

    def _kept(self, task: TaskEntry) -> TaskEntry:
        """The task with the child its transcript names, or the one proven earlier."""
        if task.child_session_id:
            return replace(task, child_ref_source="transcript")
        earlier = self.assigned.get((task.call_id or "", task.task_index))
        if earlier is None or task.call_id is None:
            return task
        return replace(task, child_session_id=earlier, child_ref_source="store", unavailable_reason=None)

    def _delegated(self, client: DashboardAPI, spawns: Sequence[Spawn]) -> list[StoreSession] | None:
        """The store's delegated children of the spawn calls' segments; None: it cannot say."""
        rows: list[StoreSession] = []
        for segment in sorted({s for spawn in spawns for s in spawn.segments}):
            found = self.children(segment)
            if found is None:
                return None
            rows += [
                r
                for r in found
                if is_delegated_child(r, segment) and same_profile(r, client.profile) and is_valid_id(r.id)
            ]
        return rows

    def _proven(
        self,
        client: DashboardAPI,
        rows: Sequence[StoreSession],
        proposed: Mapping[str, list[int]],
        segments: frozenset[str],
        shared: SharedDetails | None,
    ) -> tuple[list[StoreSession], dict[int, str]]:
        """The proposed children as HTTP shows them, and the tasks whose proof failed for now."""
        details = shared or client.detail
        ask = [row.id for row in rows if row.id in proposed and row.id not in self.shown]
        jobs = [lambda sid=sid: _over_http(client, details, sid, segments) for sid in ask]
        answers = dict(zip(ask, gather(jobs, what="child proofs", debug=self.debug), strict=True))
        shown: list[StoreSession] = []
        pending: dict[int, str] = {}
        for row in rows:
            keys = proposed.get(row.id)
            if not keys:
                continue
            got = answers.get(row.id) or self.shown[row.id]
            if isinstance(got, tuple):
                if got[1] is None:  # HTTP does not serve its goal row
                    self.say(
                        "store: a proven child's goal row is not served over HTTP (archived); the store's is matched"
                    )
                self.shown[row.id], self.goals[row.id] = got[0], got[1] or self.first_user_goal(row.id)
                got = got[0]
            tasks = ", ".join(map(str, keys))
            if isinstance(got, HermesError):  # failed for now: its code is the tasks' reason
                self.say(f"store: child proposal for task {tasks} not proven now (retry:{got.code.value})")
                pending.update(dict.fromkeys(keys, got.code.value))
                continue
            self.tried += 1
            self.unknown += got == Code.NOT_FOUND.value
            if isinstance(got, str):
                self.say(f"store: child proposal for task {tasks} dropped ({got})")
            elif same_profile(got, client.profile):
                shown.append(got)
        return shown, pending

    def close(self) -> None:
        if self.store is not None:
            self.store.close()


def _shown(detail: SessionDetail, parent: str) -> StoreSession:
    raw = detail.model_config_raw
    return StoreSession(
        id=detail.id,
        parent_session_id=parent,
        model_config=raw if isinstance(raw, str) or raw is None else json.dumps(raw),
        started_at=detail.started_at,
        ended_at=detail.ended_at,
        end_reason=detail.end_reason,
        source=detail.source,
        profile_name=detail.profile_name,
    )


def _over_http(
    client: DashboardAPI, details: Callable[[str], SessionDetail], child_id: str, segments: frozenset[str]
) -> tuple[StoreSession, str | None] | str | HermesError:
    """What HTTP shows of a proposed child (its goal None when not served), or why it is not used."""
    try:
        detail = details(child_id)
        parent = delegation_parent(detail)
        if parent is None or parent not in segments:
            return "names_another_parent"
        first = oldest_row(client, child_id)
    except HermesError as exc:
        if exc.code in (Code.NOT_FOUND, Code.IDENTITY_MISMATCH, Code.PROFILE_MISMATCH, Code.INCOMPATIBLE):
            return exc.code.value
        if exc.retryable:  # this child's failure, not the parent's: asked again next time
            return exc
        raise
    if first is not None and first.kind == "compaction_summary":  # archived rows are hidden
        return _shown(detail, parent), None
    goal = normalise_goal(first.text if first is not None and first.role == "user" else None)
    if goal is None:
        return "no_goal_row"  # not written yet: asked again on a later cycle
    return _shown(detail, parent), goal


def find_children(
    client: DashboardAPI,
    hints: StoreHints,
    messages: Sequence[WireMessage],
    tasks: Sequence[TaskEntry],
    shared: SharedDetails | None = None,
) -> list[TaskEntry]:
    """`tasks` with each missing child id proposed by the store, assigned by what HTTP shows."""
    from hermes_task.core.delegations import call_sessions  # lazy: recover's parsing, not on show's path

    out = [hints._kept(t) for t in tasks]
    open_tasks = [i for i, t in enumerate(out) if t.child_session_id is None and t.call_id is not None]
    if not open_tasks:
        return out
    segments_of, times = call_sessions(messages), spawn_times(messages)
    spawns = [
        Spawn(
            key=i,
            goal=out[i].goal,
            segments=segments_of.get(out[i].call_id or "", frozenset()),
            spawned_at=times.get(out[i].call_id or ""),
        )
        for i in open_tasks
    ]
    locks = hints.locks
    rows = hints._delegated(client, spawns)
    store_goals = {row.id: hints.first_user_goal(row.id) for row in rows or ()}
    if rows is None or hints.failed or hints.locks != locks:
        # The store could not say: the tasks it could have proposed a child for say so.
        unread = {i for i in open_tasks if out[i].unavailable_reason == "no_durable_child_reference"}
        return [
            replace(t, unavailable_reason="store_unavailable") if i in unread else t
            for i, t in enumerate(out)
        ]
    segments = frozenset(s for spawn in spawns for s in spawn.segments)
    proposed: dict[str, list[int]] = {}
    for spawn, row in pairs(spawns, rows, store_goals):  # the store itself proposes it for these
        proposed.setdefault(row.id, []).append(spawn.key)
    shown, pending = hints._proven(client, rows, proposed, segments, shared)
    found = match(spawns, shown, hints.goals)
    for key, code in pending.items():
        if key not in found:  # its proof failed for now: the task says so, asked again later
            out[key] = replace(out[key], unavailable_reason=code)
    for key, proposal in found.items():
        task = out[key]
        if proposal == AMBIGUOUS:
            out[key] = replace(task, unavailable_reason=AMBIGUOUS)
        else:
            hints.assigned[(task.call_id or "", task.task_index)] = proposal
            out[key] = replace(
                task, child_session_id=proposal, child_ref_source="store", unavailable_reason=None
            )
    for spawn in spawns:  # the tasks still without a child whose segment the bound cut children off
        task = out[spawn.key]
        if task.child_session_id is None and spawn.segments & hints.cut:
            hints.left_out.add(task.number or "?")
        else:
            hints.left_out.discard(task.number or "?")
    return out


def _delegate_from(detail: SessionDetail) -> str | None:
    try:
        config = parse_model_config(detail) or {}
    except LineageRejected:
        return None
    value = config.get("_delegate_from")
    return value if isinstance(value, str) else None


def delegation_parent(detail: SessionDetail) -> str | None:
    """The session that delegated this one: `parent_session_id` when `_delegate_from` names it."""
    parent = detail.parent_session_id
    return parent if parent is not None and _delegate_from(detail) == parent else None


def owned_by(
    detail: SessionDetail, parents: Collection[str], read: Callable[[str], SessionDetail] | None = None
) -> bool:
    """Is `detail` a delegated child of one of `parents` or, with `read`, a proven later
    segment of one (a hop keeps the `_delegate_from` marker)?"""
    claimed = _delegate_from(detail)
    if claimed is None or claimed not in parents:
        return False
    node, seen = detail, {detail.id}
    for _ in range(MAX_PATH_NODES):
        previous = node.parent_session_id
        if previous == claimed:
            return True  # the delegation root: parent and marker name the same segment
        if read is None or previous is None or previous in seen or not is_valid_id(previous):
            return False
        earlier = read(previous)
        try:
            check_hop(node, earlier, rewrites_source=False)
        except LineageRejected:
            return False
        node = earlier
        seen.add(node.id)
    return False


def admit(
    parents: Collection[str], read: Callable[[str], SessionDetail] | None = None
) -> Callable[[SessionDetail], None]:
    """A `TaskReader` gate before its first messages request: `identity_mismatch` unless owned."""
    allowed = frozenset(parents)

    def check(detail: SessionDetail) -> None:
        if not owned_by(detail, allowed, read):
            raise HermesError(
                Code.IDENTITY_MISMATCH,
                f"{clean_line(detail.id)} names another session as its parent",
                retryable=False,
                summary="not a child of this parent",
            )

    return check


def _unless(codes: Collection[Code], call: Callable[[str], T], sid: str) -> T | None:
    """`call(sid)`, or None when it fails with one of `codes` (the dashboard does not show it)."""
    try:
        return call(sid)
    except HermesError as exc:
        if exc.code in codes:
            return None
        raise


def oldest_row(client: DashboardAPI, root: str, oldest: MessagesPage | None = None) -> Row | None:
    """The root's oldest visible row if its own (from `oldest`, else a one-row read), or None."""
    unserved = (Code.NOT_FOUND, Code.INCOMPATIBLE, Code.BAD_REQUEST, Code.UNSUPPORTED)
    page = oldest or _unless(
        unserved, lambda sid: client.messages(sid, offset=0, limit=1, order="oldest"), root
    )
    first = page.messages[0] if page is not None and page.messages else None
    return project(first) if first is not None and first.session_id == root else None


def read_goal(client: DashboardAPI, root: str, oldest: MessagesPage | None = None) -> str | None:
    row = oldest_row(client, root, oldest)
    return row.text if row is not None and row.role == "user" else None


SCAN = 2000  # the newest store rows with a parent that are read for proposals
CHILD_CHECKS = 50  # the children proven per parent (the count says "more" beyond)
UNSHOWN = frozenset({Code.NOT_FOUND, Code.IDENTITY_MISMATCH, Code.PROFILE_MISMATCH})


class ParentStore(Protocol):
    """What `parents` asks the store (`dashboard.store.Store`); both may raise StoreUnavailable."""

    def recent_with_parent(self, scan: int = ...) -> list[StoreSession]: ...  # newest first
    def children(self, session_id: str) -> list[StoreSession]: ...  # as `StoreAPI.children`


def store_failure(reason: str, path: str | None) -> HermesError:
    return HermesError(
        Code.STORE_UNAVAILABLE, clean_line(store_reason(reason, path)), hint=STORE_ADVICE.get(reason)
    )


def prove(client: DashboardAPI, store: ParentStore, parent: str) -> ParentEntry | str:
    """The entry of one proposed parent, or why HTTP does not prove it."""
    detail = _unless(UNSHOWN, client.detail, parent)
    if detail is None:
        return "not_shown"
    rows = store.children(parent)  # newest first; more than the bound: older ones were cut off
    cut = len(rows) > lineage.MAX_CHILDREN
    proposed = children_of(rows[: lineage.MAX_CHILDREN], parent, client.profile)
    shown = (_unless(UNSHOWN, client.detail, row.id) for row in proposed[:CHILD_CHECKS])
    proven = [child for child in shown if child is not None and delegation_parent(child) == parent]
    if not proven:
        return "no_child_shown"
    title = " ".join(clean_line(detail.title or "").split()) or None
    starts = [float(c.started_at) for c in proven if c.started_at is not None]
    return ParentEntry(
        id=detail.id,
        source=clean_line(detail.source) if detail.source is not None else None,
        started_at=None if detail.started_at is None else float(detail.started_at),
        ended_at=None if detail.ended_at is None else float(detail.ended_at),
        end_reason=clean_line(detail.end_reason) if detail.end_reason is not None else None,
        state="open" if detail.ended_at is None else "ended",
        title=title,
        first_words=None if title else first_words(read_goal(client, parent)),
        delegated_children=len(proven),
        more_children=cut or len(proposed) > CHILD_CHECKS,
        last_delegated_at=max(starts) if starts else None,
        delegated_by=delegation_parent(detail),
    )


def find_parents(
    client: DashboardAPI,
    store: ParentStore | None,
    limit: int,
    *,
    off: str | None = None,
    path: str | None = None,
    debug: Callable[[str], None] | None = None,
) -> tuple[list[ParentEntry], list[WarningItem]]:
    """The newest `limit` proven parents, latest delegation first, and the warnings."""
    say = debug or (lambda _line: None)
    if store is None:
        raise store_failure(off or "disabled", path)
    entries: list[ParentEntry] = []
    dropped: list[str] = []
    try:
        rows = store.recent_with_parent(SCAN)
        for sid in propose_parents(rows, client.profile, SCAN):
            got = prove(client, store, sid)
            if isinstance(got, str):
                dropped.append(got)
                say(f"parents: a proposal was dropped ({got})")
                continue
            entries.append(got)
            if len(entries) >= limit:
                break
    except StoreUnavailable as exc:
        raise store_failure(exc.reason, path) from None
    if dropped and not entries and set(dropped) == {"not_shown"}:
        raise store_failure("foreign", path)
    entries.sort(key=lambda e: -e.last_delegated_at if e.last_delegated_at is not None else float("inf"))
    warnings: list[WarningItem] = []
    if len(rows) >= SCAN and len(entries) < limit:
        detail = f"only the newest {SCAN} sessions with a parent in the store were read"
        warnings.append(warning(WarningCode.bound_reached, detail))
    return entries, warnings
