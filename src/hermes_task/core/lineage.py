"""Prove that a candidate segment continues a task: a walk of `parent_session_id` (pure).

A newer segment is trusted only after a walk from it back to the task's anchor (the first
durable reference, `CHILD_ID`) in which every hop X -> Y is a compression edge:

- Y ended with `end_reason == "compression"`;
- timestamps are finite and coherent: X starts no earlier than Y, Y ends no earlier than it
  starts (X may start before Y.ended_at: the backend inserts the child before it stamps
  the parent's closure in the same transaction);
- X and Y have the same persisted `source` (one exception: on a backend whose rotation
  rewrites the source, official 0.19.x and upstream 0.20, exactly `tool` -> `subagent` is
  accepted and reported as the note `legacy_source_rewrite`; whether the backend rotates
  that way is learned from its answers, core/capabilities.py);
- both model configs are present and parse as a JSON object or null;
- the inherited markers `_delegate_from`, `_branched_from`, `_reset_from` are unchanged
  from Y, and none names X or Y (a marker naming the direct parent is a delegation, branch
  or reset edge, not a continuation);
- `profile_name`, where both record one, is the same.

The candidate itself (the walk's first node, which is no hop's parent) must be coherent on
its own: a finite start, and an end, when it has one, that is finite and no earlier than its
start.

A segment whose own marker names its direct parent is a task root (delegation, branch or
reset edge); reaching one that is not the anchor ends the walk: the candidate belongs to
another task (`foreign_root`).

The walk ends at the anchor, or at a segment already proven back to it (`verified`: a path
proven earlier, anchor first), whose own proof is not walked again. Each walk is bounded to
32 nodes, the candidate and the node it ends at included (the reader bounds detail reads per
fetch), so a lineage longer than 32 segments is proven in steps, each from a proven segment;
a walk past the bound raises `BoundReached`. Cycles and walks that end anywhere else are
rejected. Two proven paths that are not prefixes of one another are a fork: never resolved
by recency.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from typing import Any

from msgspec import Struct

from hermes_task.core.wire import SessionDetail

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
    if raw is None:
        return None
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            raise LineageRejected("bad_model_config", detail.id) from None
        if raw is None:
            return None
    if not isinstance(raw, dict):
        raise LineageRejected("bad_model_config", detail.id)
    return raw


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _names_direct_parent(node: SessionDetail) -> bool:
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
    """Accept `child -> parent` as a compression edge or raise `LineageRejected`.
    Returns a note when the accepted hop used the source-rewrite exception; a thunk
    `rewrites_source` is only asked when it could apply (a `tool` parent, a `subagent` child).
    The checks run in a fixed order, so the first failing one names the rejection."""
    if parent.end_reason != "compression":
        raise LineageRejected("not_compression_edge", child.id)
    _check_hop_times(child, parent)
    note = _check_source(child, parent, rewrites_source)
    _check_markers(child, parent)
    if child.profile_name and parent.profile_name and child.profile_name != parent.profile_name:
        raise LineageRejected("profile_changed", child.id)
    return note


def _check_hop_times(child: SessionDetail, parent: SessionDetail) -> None:
    """Finite starts and parent end; the child starts no earlier than the parent, which ends
    no earlier than it started."""
    if not (_finite(child.started_at) and _finite(parent.started_at) and _finite(parent.ended_at)):
        raise LineageRejected("bad_timestamps", child.id)
    assert child.started_at is not None
    assert parent.started_at is not None
    assert parent.ended_at is not None
    if child.started_at < parent.started_at or parent.ended_at < parent.started_at:
        raise LineageRejected("bad_timestamps", child.id)


def _check_source(child: SessionDetail, parent: SessionDetail, rewrites_source: RewritesSource) -> str | None:
    """Both sources present and equal, or `tool` rewritten into `subagent` by a backend that
    does so (the returned note says the exception was used)."""
    if child.source is None or parent.source is None:
        raise LineageRejected("missing_field", child.id)
    if child.source == parent.source:
        return None
    if (
        parent.source == "tool"
        and child.source == "subagent"
        and (rewrites_source(child) if callable(rewrites_source) else rewrites_source)
    ):
        return LEGACY_SOURCE_REWRITE
    raise LineageRejected("source_changed", child.id)


def _check_markers(child: SessionDetail, parent: SessionDetail) -> None:
    """Each delegation marker the same on both sides, and never naming either hop end."""
    child_mc = parse_model_config(child) or {}
    parent_mc = parse_model_config(parent) or {}
    for marker in MARKERS:
        value = child_mc.get(marker)
        if value != parent_mc.get(marker):
            raise LineageRejected("marker_changed", child.id)
        if value is not None and value in (parent.id, child.id):
            raise LineageRejected("direct_parent_marker", child.id)


def check_own_end(node: SessionDetail) -> None:
    """The candidate's own timestamps: a finite start, and an end (when it has one) that is
    finite and no earlier than the start; raises `LineageRejected` (`bad_timestamps`)."""
    if not _finite(node.started_at) or (node.ended_at is not None and not _finite(node.ended_at)):
        raise LineageRejected("bad_timestamps", node.id)
    assert node.started_at is not None
    if node.ended_at is not None and node.ended_at < node.started_at:
        raise LineageRejected("bad_timestamps", node.id)


def prove(
    anchor: SessionDetail,
    candidate: str,
    read: Callable[[str], SessionDetail],
    *,
    rewrites_source: RewritesSource,
    max_nodes: int = MAX_PATH_NODES,
    verified: Sequence[str] = (),
) -> Proof:
    """Walk from `candidate` back to `anchor`, or to a segment of `verified` (a path already
    proven, `verified[0]` the anchor). `read(id)` returns an exact-id, profile-checked detail
    (and may raise `BoundReached` when its read budget is spent). `rewrites_source` is passed
    to `check_hop` for every hop. The proof's path is the verified prefix up to where the
    walk ended, then the walked segments."""
    proven = tuple(verified) if verified and verified[0] == anchor.id else (anchor.id,)
    at = {sid: i for i, sid in enumerate(proven)}
    if candidate in at:  # already proven (a late reference to a verified segment)
        return Proof(proven[: at[candidate] + 1])
    node = read(candidate)
    check_own_end(node)
    chain = [node]
    seen = {node.id}
    notes: list[str] = []
    while True:
        parent_id = node.parent_session_id
        if parent_id is None:
            raise LineageRejected("unrelated", node.id)
        if parent_id in seen:
            raise LineageRejected("cycle", parent_id)
        if len(chain) + 1 > max_nodes:
            raise BoundReached(f"lineage path longer than {max_nodes} nodes")
        if parent_id != anchor.id and _names_direct_parent(node):
            # A delegation (branch, reset) root that is not the anchor: the walk left the task.
            raise LineageRejected("foreign_root", node.id)
        parent = anchor if parent_id == anchor.id else read(parent_id)
        note = check_hop(node, parent, rewrites_source=rewrites_source)
        if note and note not in notes:
            notes.append(note)
        if parent.id in at:
            break
        chain.append(parent)
        seen.add(parent.id)
        node = parent
    chain.reverse()
    return Proof(proven[: at[parent.id] + 1] + tuple(d.id for d in chain), tuple(notes))


def combine(current: Sequence[str], other: Sequence[str]) -> tuple[str, ...]:
    """The longer of two proven paths when one extends the other; a late ancestor
    reference never replaces a verified newer segment; anything else is a fork."""
    a, b = tuple(current), tuple(other)
    if b[: len(a)] == a:
        return b
    if a[: len(b)] == b:
        return a
    raise ForkAmbiguous(a, b)


def continues_parent(
    anchor: SessionDetail, parent: SessionDetail, *, rewrites_source: RewritesSource
) -> bool:
    """True when the anchor itself continues its parent by compression (so earlier task
    segments exist that the anchor's own pages may not show). A delegation, branch or reset
    marker naming the direct parent is not a continuation."""
    try:
        check_hop(anchor, parent, rewrites_source=rewrites_source)
    except LineageRejected:
        return False
    return True
