"""The newest page of one segment (`newest_page`, stateless): one contiguous, chronological slice
ending with the segment's newest row at the time of the read; `exhausted` only when it starts at
the segment's first row. 0.19.x ignores `order`: the offset is counted from the detail's
`message_count`, then (a stale count) pages are read forward until a short one.
"""

from __future__ import annotations

from msgspec import Struct

from hermes_task.core.wire import PAGE_LIMIT, MessagesPage, SessionDetail, WireMessage
from hermes_task.failures import Code, HermesError
from hermes_task.reading.api import DashboardAPI

MAX_LEGACY_FORWARD_PAGES = 100


class NewestPage(Struct, frozen=True):
    page: MessagesPage  # the first answer (its envelope names the session that answered)
    rows: list[WireMessage]
    exhausted: bool
    offset: int | None  # the legacy oldest-first offset of `rows[0]` (None on current backends)
    legacy: bool
    bound_hit: bool = False  # rows newer than `MAX_LEGACY_FORWARD_PAGES` pages were left unread


def newest_page(
    client: DashboardAPI,
    tip: SessionDetail,
    legacy: bool | None,
    limit: int = PAGE_LIMIT,
    *,
    trust_count: bool = False,
) -> NewestPage:
    """The newest `limit` rows of `tip` (`legacy` None: guessed from the detail); `trust_count`: no
    page is read past a legacy `message_count` (an ended segment's is final)."""
    guess_legacy = legacy if legacy is not None else not tip.looks_current
    counted = max(0, (tip.message_count or 0) - limit)  # the legacy offset of the newest rows
    offset = counted if guess_legacy else 0
    page = client.messages(tip.id, offset=offset, limit=limit)
    if not page.paginated:  # every active row, the query ignored
        return NewestPage(page, list(page.messages), True, 0, True)
    if page.ordered:
        if offset != 0:
            page = client.messages(tip.id, offset=0, limit=limit)
        return NewestPage(page, list(page.messages), page.pagination.returned < limit, None, False)
    if offset == 0 and page.pagination.returned == limit and not guess_legacy:
        offset = counted
        page = client.messages(tip.id, offset=offset, limit=limit)
    rows, last, forward = list(page.messages), page, offset
    for _ in range(0 if trust_count else MAX_LEGACY_FORWARD_PAGES):
        if last.pagination.returned < limit:
            break
        forward += limit
        last = client.messages(tip.id, offset=forward, limit=limit)
        if last.session_id != page.session_id:
            raise HermesError(Code.IDENTITY_MISMATCH, "the segment changed while paging")
        rows.extend(last.messages)
    bound = not trust_count and last.pagination.returned >= limit
    return NewestPage(page, rows, offset == 0, offset, True, bound_hit=bound)
