"""Whose child a session is: proven from exact-id details before any row of it is read.

Hermes' `delegate_task` names the spawning session on the child twice: the row's
`parent_session_id` and its model config's `_delegate_from` (backend.md §4). A session is a
child of a parent chat only when both name the same segment and that segment belongs to the
parent's proven lineage. A reference to a later segment of a child (a rotated child: its
`parent_session_id` is its previous segment) is accepted only through a walk of compression
edges back to such a delegation root (`core/lineage.py`'s hop rules, at most 32 nodes; the
`tool` -> `subagent` rewrite is not assumed here).

Invariant: every path that reads a child's rows (`recover --recursive`, `follow --parent`,
store proposals, transcript references) asks this first; a child that fails is a task-level
`gap` with its code, never streamed.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from hermes_task.core.lineage import MAX_PATH_NODES, LineageRejected, check_hop, parse_model_config
from hermes_task.core.sanitize import clean_line, is_valid_id
from hermes_task.core.wire import SessionDetail
from hermes_task.failures import Code, HermesError

NOT_OWNED = "names_another_parent"


def _delegate_from(detail: SessionDetail) -> str | None:
    try:
        config = parse_model_config(detail) or {}
    except LineageRejected:
        return None
    value = config.get("_delegate_from")
    return value if isinstance(value, str) else None


def delegation_parent(detail: SessionDetail) -> str | None:
    """The session that delegated this one: its `parent_session_id` when `_delegate_from`
    names the same session; None for anything else (a continuation, a plain chat, a config
    that does not parse)."""
    parent = detail.parent_session_id
    return parent if parent is not None and _delegate_from(detail) == parent else None


def owned_by(
    detail: SessionDetail, parents: Collection[str], read: Callable[[str], SessionDetail] | None = None
) -> bool:
    """Is `detail` a delegated child of one of `parents` (segments of a proven lineage), or,
    with `read` (exact-id detail reads), a proven later segment of one? Only a session whose
    `_delegate_from` names one of `parents` is walked (a hop keeps the marker unchanged)."""
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


def not_owned(detail: SessionDetail) -> HermesError:
    """The failure of a child that does not name the parent: `identity_mismatch`, final."""
    return HermesError(
        Code.IDENTITY_MISMATCH,
        f"{clean_line(detail.id)} names another session as its parent",
        retryable=False,
        summary="not a child of this parent",
    )


def admit(
    parents: Collection[str], read: Callable[[str], SessionDetail] | None = None
) -> Callable[[SessionDetail], None]:
    """A `TaskReader` gate: raises `not_owned` unless the anchor's detail is owned by one of
    `parents` (`owned_by`); the reader asks it before its first messages request."""
    allowed = frozenset(parents)

    def check(detail: SessionDetail) -> None:
        if not owned_by(detail, allowed, read):
            raise not_owned(detail)

    return check


__all__ = ["NOT_OWNED", "admit", "delegation_parent", "not_owned", "owned_by"]
