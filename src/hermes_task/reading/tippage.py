"""The newest page of a task's newest proven segment (the page half of `TaskReader`'s cycle).

Invariant: a page is used only when it answers for a proven segment of the path. An answer
for another session (a backend that redirects a segment to its newest continuation) is used
only once that session is proven on the same branch, and then every source is asked about the
segments it added; a redirect the proof cannot reach within its bounds is not used at all
(`BoundReached`). The page is also checked against any rule the proof assumed (`rule_holds`)
before it is returned, so a segment the page refutes is withdrawn before a row of it is merged.
"""

from __future__ import annotations

from collections.abc import Sequence

from hermes_task.core.lineage import BoundReached
from hermes_task.core.window import Window, advance
from hermes_task.core.wire import SessionDetail
from hermes_task.reading.api import DashboardAPI
from hermes_task.reading.details import DetailReader
from hermes_task.reading.discovery import LineageProof
from hermes_task.reading.hints import StoreHints
from hermes_task.reading.pages import NewestPage, newest_page

MAX_REDIRECTS = 4


class TipPages(LineageProof):
    """The proven lineage of one task, its window, and the newest page of its tip."""

    def __init__(
        self,
        client: DashboardAPI,
        anchor_id: str,
        *,
        tips: Sequence[str] = (),
        hint: bool = True,
        store: StoreHints | None = None,
    ) -> None:
        super().__init__(client, anchor_id, tips=tips, hint=hint, store=store)
        self.window = Window()
        self.redirects: dict[str, str] = {}  # segment -> the session its messages answered for

    def _newest_page(self, tip: SessionDetail) -> NewestPage:
        newest = newest_page(self.client, tip, self.caps.oldest_first)
        self.caps.learn(newest.page)
        self.bound_hit = self.bound_hit or newest.bound_hit
        return newest

    def _tip_page(self, reader: DetailReader) -> tuple[SessionDetail, NewestPage]:
        """The newest verified segment and its newest page, once the page agrees with every
        rule the proof assumed (`rule_holds`; a segment it refutes is withdrawn first)."""
        tip, newest = self._newest_of_path(reader)
        while not self.rule_holds(tip, newest.rows, exhausted=newest.exhausted):
            tip, newest = self._newest_of_path(reader)
        return tip, newest

    def _newest_of_path(self, reader: DetailReader) -> tuple[SessionDetail, NewestPage]:
        """An answer for another session is used only once proven a newer segment of this
        branch (`adopt_redirect`, then every source is asked about the segments it added),
        again for each rotation during the cycle, at most `MAX_REDIRECTS` times (then
        `BoundReached`); it is used as it is, but a legacy one (offset from the old segment's
        count) is read again. A redirect the proof cannot reach within its bounds ends the
        cycle with `BoundReached`: nothing of the answer is used."""
        tip = reader(self.path[-1])
        if self.window.canonical != tip.id:
            self.window = advance(self.window, tip.id)
        newest = self._newest_page(tip)
        for _ in range(MAX_REDIRECTS):
            sid = newest.page.session_id
            if sid == tip.id:
                return tip, newest
            self.redirects[tip.id] = sid
            self.adopt_redirect(reader, sid)
            fork = self._settle(reader)
            if fork is not None:
                raise fork
            tip = reader(self.path[-1])
            self.window = advance(self.window, tip.id)
            if newest.legacy or tip.id != sid:
                newest = self._newest_page(tip)
        if newest.page.session_id == tip.id:
            return tip, newest
        raise BoundReached(f"the task moved to a newer segment {MAX_REDIRECTS} times in one read")
