"""Pages of a task's segments: the newest page of one segment (`newest_page`, stateless) and
earlier segments' windows (`Earlier`, the I/O half of `core/lineage.py`). Which answers are used (redirects, the whole task): docs/identity.md,
"Lineage and segments".

`newest_page` invariant: the rows are one contiguous, chronological slice ending with the
segment's newest row at the time of the read; `exhausted` only when it starts at the segment's
first row. 0.19.x ignores `order`, so the offset is counted from the detail's `message_count`
and, when that count was stale, pages are read forward until a short one; a pre-pagination
answer (0.18.x) is the whole active transcript. `Earlier` merges a segment's rows only from an
answer naming that segment (another session's marks it `blocked`), anchored (`core/window.py`).
"""

from __future__ import annotations

from msgspec import Struct, field
from msgspec.structs import replace

from hermes_task.core.window import MergeResult, Window, merge_anchored, merge_latest, older_request
from hermes_task.core.wire import MAX_LIMIT, PAGE_LIMIT, MessagesPage, SessionDetail, WireMessage
from hermes_task.failures import Code, HermesError
from hermes_task.reading.api import DashboardAPI

MAX_LEGACY_FORWARD_PAGES = 100


class NewestPage(Struct, frozen=True):
    """`page` is the first answer (its envelope names the session that answered); `offset`
    is the legacy oldest-first offset of `rows[0]` (None on current backends); `bound_hit`:
    newer rows than `MAX_LEGACY_FORWARD_PAGES` pages were left unread."""

    page: MessagesPage
    rows: list[WireMessage]
    exhausted: bool
    offset: int | None
    legacy: bool
    bound_hit: bool = False


def newest_page(
    client: DashboardAPI,
    tip: SessionDetail,
    legacy: bool | None,
    limit: int = PAGE_LIMIT,
    *,
    trust_count: bool = False,
) -> NewestPage:
    """The newest `limit` rows of `tip` (`legacy` None: not known yet, guessed from the
    detail). `trust_count` trusts a legacy `message_count` (an ended segment's is final):
    no page is read past it."""
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
    rows = list(page.messages)
    last = page
    forward = offset
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


class Earlier(Struct):
    """The windows of earlier segments read on their own, and the segments that cannot be."""

    windows: dict[str, Window] = field(default_factory=dict)
    blocked: set[str] = field(default_factory=set)

    def first(
        self, client: DashboardAPI, detail: SessionDetail, *, legacy: bool, limit: int
    ) -> MergeResult | None:
        """The newest `limit` rows of `detail`'s segment; None when another session answered."""
        newest = newest_page(client, detail, legacy, limit, trust_count=True)
        if newest.page.session_id != detail.id:
            self.blocked.add(detail.id)
            return None
        window = Window(canonical=detail.id)
        result = merge_latest(window, newest.rows, exhausted=newest.exhausted, offset=newest.offset)
        self.windows[detail.id] = result.window
        return replace(result, returned=len(newest.rows))

    def older(self, client: DashboardAPI, sid: str, *, legacy: bool, limit: int) -> MergeResult | None:
        """Up to `limit` rows older than segment `sid`'s window; None when nothing was read: no
        way to page further back (a legacy window without offsets), another session answered,
        or the ended segment changed under us; it is blocked then."""
        window = self.windows[sid]
        request = older_request(window, legacy=legacy, limit=limit, cap=MAX_LIMIT)
        if request is not None:
            page = client.messages(sid, offset=request.offset, limit=request.limit)
            if page.session_id == sid:
                result = merge_anchored(window, request, page.messages)
                if not result.detached:
                    self.windows[sid] = result.window
                    return replace(result, returned=len(page.messages))
        self.blocked.add(sid)
        return None
