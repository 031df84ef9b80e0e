"""Reads of earlier lineage segments, each in its own window (the I/O half of `core/lineage.py`'s window).

Invariant: a segment's rows are merged only from an answer whose envelope names that very
segment; an answer for another session (a backend that redirects an ancestor to its tip)
marks the segment `blocked` instead, so it is never read again and never mixed in. A first
read is the segment's newest page (`reading/pages.py`); every later read is an anchored
older page (`core/window.py`), so no row is skipped or repeated.
"""

from __future__ import annotations

from msgspec import Struct, field
from msgspec.structs import replace

from hermes_task.core.window import MergeResult, Window, merge_anchored, merge_latest, older_request
from hermes_task.core.wire import MAX_LIMIT, SessionDetail
from hermes_task.reading.api import DashboardAPI
from hermes_task.reading.pages import newest_page


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
        """Up to `limit` rows older than segment `sid`'s window; None when nothing was read."""
        window = self.windows[sid]
        request = older_request(window, legacy=legacy, limit=limit, cap=MAX_LIMIT)
        if request is None:  # no way to page further back (a legacy window without offsets)
            self.blocked.add(sid)
            return None
        page = client.messages(sid, offset=request.offset, limit=request.limit)
        if page.session_id != sid:
            self.blocked.add(sid)
            return None
        result = merge_anchored(window, request, page.messages)
        if result.detached:  # an ended segment changed under us: read no further
            self.blocked.add(sid)
            return None
        self.windows[sid] = result.window
        return replace(result, returned=len(page.messages))
