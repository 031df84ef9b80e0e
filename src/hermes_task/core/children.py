"""Which store row is a task's child, or a segment's continuation (pure; the store only proposes).

Rules (docs/identity.md, "The local store"):

- A delegated child of segment P is a store row with `parent_session_id == P` whose model
  config's `_delegate_from` is P. A compression continuation of segment X is a row with
  `parent_session_id == X` whose markers (`_delegate_from`, `_branched_from`, `_reset_from`)
  equal X's and none names X (the rule `core/lineage.py` applies over HTTP).
- A task is matched to a child by goal and by order: the child's first `user` row equals the
  task's goal after whitespace normalisation (both sides stripped, runs of whitespace made one
  space; the backend writes the goal verbatim as the child's first user message), its parent
  is a segment that carries the spawn call, and it started no earlier than the spawn call
  was written. A child that started before its spawn call matches nothing.
- Never a guess: a task is matched only when exactly one child fits it and that child fits
  no other task. Otherwise every task that some child fits is `ambiguous`. A task that no
  child fits stays unmatched. Identical goals inside one delegation are therefore always
  ambiguous (the store records no task index).

- The store proposes a session as a parent (`hermes-task parents`) when one of its newest
  rows with a parent is a delegated child of it (only Hermes' `delegate_task` writes that
  pair), of the profile in use, with both ids passing the id check; proposals come in the
  order of their newest such child, each once. `reading/parentfinder.py` proves them: the
  parent's own detail and at least one proposed child whose detail names it as its
  delegation parent (docs/identity.md, "Where a parent id comes from").

The rules take `StoreSession` records, so the same `match` decides twice: once on the store's
columns (which ids to propose) and once on what HTTP shows of the proposed children (their
details and first user rows over HTTP), and only the second assignment is used
(`reading/hints.py`).

Cost: linear in tasks and children. Each distinct `model_config` text is parsed once (a
bounded cache), and a task is compared only with the children indexed under its own
(segment, goal) key (`pairs`), never with every child: N tasks with N distinct goals cost N
comparisons, not N * N (identical goals in one segment cost their group's product).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping, Sequence
from functools import lru_cache
from typing import Any

from msgspec import Struct

from hermes_task.core.sanitize import is_valid_id

MARKERS = ("_delegate_from", "_branched_from", "_reset_from")
# The children of one session the store proposes: the newest ones. The reader returns one more
# row so its callers know when the bound cut older children off (and say so).
MAX_CHILDREN = 1000
AMBIGUOUS = "ambiguous_match"


class StoreUnavailable(Exception):
    """The local store cannot be read without risk; `reason` is a stable code (the
    `store_unavailable` reasons of `core/ui_strings.py`), `detail` a hint."""

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
    """One task that may own a child: `key` identifies it to the caller; `segments` are the
    parent segments whose rows carry the spawn call; `spawned_at` is that row's timestamp."""

    key: int
    goal: str | None
    segments: frozenset[str]
    spawned_at: float | None


@lru_cache(maxsize=4096)
def config_markers(raw: str) -> tuple[Any, ...] | None:
    """The markers of one `model_config` text, parsed once per distinct text (children of one
    parent mostly share theirs); None when it is not a JSON object or null."""
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if data is None:
        return (None,) * len(MARKERS)
    if not isinstance(data, dict):
        return None
    return tuple(data.get(m) for m in MARKERS)


def markers(row: StoreSession) -> dict[str, Any] | None:
    """The model config's markers (none set for a NULL or JSON-null config, as the lineage
    proof reads a null config), or None when the config is not a JSON object."""
    raw = row.model_config
    if raw is None:
        return dict.fromkeys(MARKERS)
    if not isinstance(raw, str):
        return None
    found = config_markers(raw)
    return None if found is None else dict(zip(MARKERS, found, strict=True))


def is_delegated_child(row: StoreSession, parent_id: str) -> bool:
    found = markers(row)
    return row.parent_session_id == parent_id and found is not None and found["_delegate_from"] == parent_id


def is_continuation(row: StoreSession, segment_id: str, segment_markers: Mapping[str, Any]) -> bool:
    """Does `row` look like a compression continuation of the segment (markers equal, none
    naming it)? Only a proposal: the HTTP proof decides."""
    found = markers(row)
    if row.parent_session_id != segment_id or found is None:
        return False
    if any(found[m] != segment_markers.get(m) for m in MARKERS):
        return False
    return all(found[m] != segment_id for m in MARKERS)


def same_profile(row: StoreSession, profile: str | None) -> bool:
    """A row recorded for another profile is never proposed (`profile` is the dashboard
    profile in use, `default` when none is named); a row that records none may be."""
    return row.profile_name is None or row.profile_name == (profile or "default")


def normalise_goal(text: object) -> str | None:
    """The goal compared: whitespace runs collapsed, ends stripped; None for a non-text goal."""
    if not isinstance(text, str):
        return None
    flat = " ".join(text.split())
    return flat or None


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def fits(spawn: Spawn, child: StoreSession, goal: str | None) -> bool:
    """Could `child` (with first user row `goal`) be the child of `spawn`? (the rules above)"""
    parent = child.parent_session_id
    if parent is None or parent not in spawn.segments or not is_delegated_child(child, parent):
        return False
    wanted = normalise_goal(spawn.goal)
    if wanted is None or goal is None or wanted != goal:
        return False
    spawned, started = spawn.spawned_at, child.started_at
    if spawned is None or started is None or not (_finite(spawned) and _finite(started)):
        return False
    return started >= spawned


def pairs(
    spawns: Sequence[Spawn], children: Sequence[StoreSession], goals: Mapping[str, str | None]
) -> Iterator[tuple[Spawn, StoreSession]]:
    """Every (task, child) that `fits`, in task order: the children are indexed once by their
    delegating segment and goal, and each task asks only its own keys (linear; see above)."""
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
                if fits(spawn, child, goals.get(child.id)):
                    yield spawn, child


def match(
    spawns: Sequence[Spawn], children: Sequence[StoreSession], goals: Mapping[str, str | None]
) -> dict[int, str]:
    """`{spawn.key: child id or AMBIGUOUS}` for every task some child fits (rules above).
    `goals` maps a child id to its normalised first user row (None when unknown)."""
    found: dict[int, list[str]] = {}
    owners: dict[str, list[int]] = {}
    for spawn, child in pairs(spawns, children, goals):
        found.setdefault(spawn.key, []).append(child.id)
        owners.setdefault(child.id, []).append(spawn.key)
    out: dict[int, str] = {}
    for key, ids in found.items():
        unique = len(set(ids)) == 1 and len(set(owners[ids[0]])) == 1
        out[key] = ids[0] if unique else AMBIGUOUS
    return out


def recent_task_roots(rows: Sequence[StoreSession], profile: str | None, limit: int = 50) -> list[str]:
    """Delegated task roots among `rows` (newest first): a row whose `_delegate_from` names
    its own parent, of this profile, whose id the id check accepts (the store only proposes:
    an id with a control sequence, surrounding whitespace or `..` is never offered); at most
    `limit`, in the given order, each once."""
    out: list[str] = []
    for row in rows:
        parent = row.parent_session_id
        if not (parent and is_valid_id(row.id)) or row.id in out:
            continue
        if is_delegated_child(row, parent) and same_profile(row, profile):
            out.append(row.id)
            if len(out) >= limit:
                break
    return out


def spawn_times(messages: Sequence[Any]) -> dict[str, float]:
    """For each tool call id on a non-tool row, the earliest timestamp of a row carrying it
    (a cloned row in a later segment keeps the original's time or a later one)."""
    out: dict[str, float] = {}
    for msg in messages:
        if msg.role == "tool" or not _finite(msg.timestamp):
            continue
        calls = msg.tool_calls
        if isinstance(calls, str):
            try:
                calls = json.loads(calls)
            except (ValueError, RecursionError):
                continue
        for call in calls if isinstance(calls, list) else []:
            call_id = call.get("id") if isinstance(call, dict) else None
            if isinstance(call_id, str) and call_id:
                out[call_id] = min(out.get(call_id, math.inf), float(msg.timestamp))
    return out


def propose_parents(rows: Sequence[StoreSession], profile: str | None, limit: int) -> list[str]:
    """The parents of the delegated children among `rows` (newest first), in the order of
    their newest child, each once, at most `limit` (module docstring)."""
    out: list[str] = []
    for row in rows:
        parent = row.parent_session_id
        if parent is None or parent in out or not (is_valid_id(parent) and is_valid_id(row.id)):
            continue
        if is_delegated_child(row, parent) and same_profile(row, profile):
            out.append(parent)
            if len(out) >= limit:
                break
    return out


def children_of(rows: Sequence[StoreSession], parent: str, profile: str | None) -> list[StoreSession]:
    """The store's delegated children of `parent` among `rows`, newest first (proposals)."""
    kids = [
        r for r in rows if is_delegated_child(r, parent) and same_profile(r, profile) and is_valid_id(r.id)
    ]
    return sorted(
        kids, key=lambda r: r.started_at if r.started_at is not None else float("-inf"), reverse=True
    )


__all__ = [
    "AMBIGUOUS",
    "MARKERS",
    "MAX_CHILDREN",
    "Spawn",
    "StoreSession",
    "StoreUnavailable",
    "children_of",
    "config_markers",
    "fits",
    "is_continuation",
    "is_delegated_child",
    "markers",
    "match",
    "normalise_goal",
    "pairs",
    "propose_parents",
    "recent_task_roots",
    "same_profile",
    "spawn_times",
]
