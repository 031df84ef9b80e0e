"""`hermes-task parents`: the newest chats that called `delegate_task`, proposed by the local
store and proven over HTTP before a line is printed.

Invariant (docs/identity.md, "Where a parent id comes from"): an entry exists only when the
dashboard showed, over exact-id, profile-checked detail reads, the proposed session itself
and at least one child naming it as its delegation parent (`parent_session_id` and
`_delegate_from`: only `delegate_task` writes that pair). Its numbers and texts come from
those reads, never from the store. A proposal the dashboard does not show (404, another
id, another profile) is dropped and said in a `--debug` line; when it shows none of them,
the store is another dashboard's (`store_unavailable`, reason `foreign`). The store's
failure is the command's failure: it has no other source.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from hermes_task.core import lineage
from hermes_task.core.documents import (
    ParentEntry,
    WarningItem,
    first_words,
    warning,
)
from hermes_task.core.lineage import (
    StoreSession,
    StoreUnavailable,
    children_of,
    propose_parents,
)
from hermes_task.core.sanitize import clean_line
from hermes_task.core.ui_strings import STORE_ADVICE, WarningCode, store_reason
from hermes_task.core.wire import SessionDetail
from hermes_task.failures import Code, HermesError
from hermes_task.reading.api import DashboardAPI
from hermes_task.reading.ownership import delegation_parent
from hermes_task.reading.transcript import read_goal

SCAN = 2000  # the newest store rows with a parent that are read for proposals
CHILD_CHECKS = 50  # the children proven per parent (the count says "more" beyond)
UNSHOWN = frozenset({Code.NOT_FOUND, Code.IDENTITY_MISMATCH, Code.PROFILE_MISMATCH})

DebugWriter = Callable[[str], None]


class ParentStore(Protocol):
    """What `parents` asks the store (`dashboard.store.Store`); both may raise StoreUnavailable."""

    def recent_with_parent(self, scan: int = ...) -> list[StoreSession]:
        """The newest `scan` rows that have a parent, newest first."""
        ...

    def children(self, session_id: str) -> list[StoreSession]:
        """The rows whose `parent_session_id` is `session_id`, newest first (at most
        `MAX_CHILDREN + 1`: more than `MAX_CHILDREN` says the bound cut older ones off)."""
        ...


def store_failure(reason: str, path: str | None) -> HermesError:
    """`store_unavailable`: why the store could not serve, and what to do (the hint)."""
    return HermesError(
        Code.STORE_UNAVAILABLE, clean_line(store_reason(reason, path)), hint=STORE_ADVICE.get(reason)
    )


def _shown(client: DashboardAPI, sid: str) -> SessionDetail | None:
    """The exact-id, profile-checked detail, or None when the dashboard does not show it."""
    try:
        return client.detail(sid)
    except HermesError as exc:
        if exc.code in UNSHOWN:
            return None
        raise


def _seconds(value: float | None) -> float | None:
    return None if value is None else float(value)


NOT_SHOWN = "not_shown"
NO_CHILD = "no_child_shown"


def prove(client: DashboardAPI, store: ParentStore, parent: str) -> ParentEntry | str:
    """The entry of one proposed parent, or why HTTP does not prove it: `not_shown` (the
    dashboard does not show the session), `no_child_shown` (none of the proposed children
    it shows names it as its delegation parent)."""
    detail = _shown(client, parent)
    if detail is None:
        return NOT_SHOWN
    rows = store.children(parent)  # newest first; more than the bound: older ones were cut off
    cut = len(rows) > lineage.MAX_CHILDREN
    proposed = children_of(rows[: lineage.MAX_CHILDREN], parent, client.profile)
    proven: list[SessionDetail] = []
    for row in proposed[:CHILD_CHECKS]:
        child = _shown(client, row.id)
        if child is not None and delegation_parent(child) == parent:
            proven.append(child)
    if not proven:
        return NO_CHILD
    title = " ".join(clean_line(detail.title or "").split()) or None
    starts = [float(c.started_at) for c in proven if c.started_at is not None]
    return ParentEntry(
        id=detail.id,
        source=clean_line(detail.source) if detail.source is not None else None,
        started_at=_seconds(detail.started_at),
        ended_at=_seconds(detail.ended_at),
        end_reason=clean_line(detail.end_reason) if detail.end_reason is not None else None,
        state="open" if detail.ended_at is None else "ended",
        title=title,
        first_words=None if title else first_words(read_goal(client, parent)),
        delegated_children=len(proven),
        more_children=cut or len(proposed) > CHILD_CHECKS,
        last_delegated_at=max(starts) if starts else None,
        delegated_by=delegation_parent(detail),
    )


def _newest_first(entry: ParentEntry) -> float:
    return -entry.last_delegated_at if entry.last_delegated_at is not None else float("inf")


def find_parents(
    client: DashboardAPI,
    store: ParentStore | None,
    limit: int,
    *,
    off: str | None = None,
    path: str | None = None,
    debug: DebugWriter | None = None,
) -> tuple[list[ParentEntry], list[WarningItem]]:
    """The newest `limit` proven parents, most recent delegation first, and the warnings:
    proposals are proven in the store's order until `limit` are. Raises `store_unavailable`
    when there is no store, it cannot be read, or the dashboard shows none of its proposals."""
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
    if dropped and not entries and set(dropped) == {NOT_SHOWN}:
        raise store_failure("foreign", path)
    entries.sort(key=_newest_first)
    warnings: list[WarningItem] = []
    if len(rows) >= SCAN and len(entries) < limit:
        detail = f"only the newest {SCAN} sessions with a parent in the store were read"
        warnings.append(warning(WarningCode.bound_reached, detail))
    return entries, warnings


__all__ = [
    "CHILD_CHECKS",
    "NOT_SHOWN",
    "NO_CHILD",
    "SCAN",
    "ParentStore",
    "find_parents",
    "prove",
    "store_failure",
]
