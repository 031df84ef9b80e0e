"""One task, read cycle by cycle: proof, newest page, fresh detail.

`TaskReader` owns the verified lineage, the window and the request generation of one task. Each `refresh()`
proves pending candidates (`reading/discovery.py`: `--tip`, then hints and the store's continuations while
the newest segment ended by compression), then reads the detail, the newest messages page and a fresh detail
that notices a compression finished during the request. A messages answer for another session is used only
once proven on the same branch. Failures raise `HermesError`; what was verified before stays in `window`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from msgspec.structs import replace

from hermes_task.core.documents import (
    Row,
    TaskInfo,
    TaskState,
    TranscriptDoc,
    Usage,
    WarningItem,
    lineage_usage,
    warning,
)
from hermes_task.core.lineage import BoundReached, Cursor, View, compose, cursor
from hermes_task.core.ui_strings import WarningCode, legacy_warning
from hermes_task.core.window import MergeResult, advance, merge_anchored, merge_latest, older_request
from hermes_task.core.wire import MAX_LIMIT, PAGE_LIMIT, SessionDetail
from hermes_task.reading.api import DashboardAPI
from hermes_task.reading.details import MAX_DETAIL_READS, DetailReader, SharedDetails
from hermes_task.reading.earlier_segments import Earlier
from hermes_task.reading.hints import StoreHints
from hermes_task.reading.snapshot import Snapshot, with_refreshes
from hermes_task.reading.tippage import TipPages
from hermes_task.reading.transcript import (
    coverage,
    goal_in,
    history_warnings,
    merge_warnings,
    read_goal,
    segments,
    shown_rows,
    state_warnings,
)

FILL_OLDER = 4


class TaskReader(TipPages):
    """The read-only controller of one task, anchored at its first durable reference."""

    def __init__(
        self,
        client: DashboardAPI,
        anchor_id: str,
        *,
        tips: Sequence[str] = (),
        hint: bool = True,
        store: StoreHints | None = None,
        admit: Callable[[SessionDetail], None] | None = None,
        shared: SharedDetails | None = None,
    ) -> None:
        super().__init__(client, anchor_id, tips=tips, hint=hint, store=store)
        self.admit = admit  # sees the anchor's first detail before any messages request; may raise
        self.shared = shared  # a one-shot run's details (reading/details.py): each read once
        self.basis: SessionDetail | None = None  # the tip's detail its newest page was read under
        self.anchor: SessionDetail | None = None
        self.tip: SessionDetail | None = None
        self.earlier = Earlier()
        self.details: dict[str, SessionDetail] = {}
        self.goal: str | None = None
        self.continues_parent: bool | None = None
        self.detail_budget = MAX_DETAIL_READS

    def refresh(self, probe: SessionDetail | None = None) -> Snapshot:
        """One read cycle; the window gains the newest page of the newest verified segment. A
        detail-read budget spent inside the cycle ends it with `bound_reached`, keeping what was verified
        (never an internal error). `probe`: the newest segment's detail read just before (`follow
        --parent`'s change probe), this cycle's read of it."""
        reader = DetailReader(self.client, self.detail_budget, self.shared)
        if probe is not None:
            reader.seed(probe)
        if self.anchor is None:
            anchor = reader(self.anchor_id)
            if self.admit is not None:
                self.admit(anchor)  # e.g. a child that does not name its parent (reading/ownership.py)
            self.anchor = anchor
        try:
            return self._cycle(reader)
        except BoundReached:
            self.bound_hit = True
            newest = self.path[-1]
            if self.tip is None or self.tip.id != newest:
                self.tip = reader.cache.get(newest) or self.details.get(newest) or self.anchor
            self.details.update(reader.cache)
            warnings = self._warnings(reader)
            history = history_warnings(self.view(), self.cursor(), cold_open=self.continues_parent)
            failure, self.withdrawn = self.withdrawn, None
            return Snapshot(warnings=warnings + history, failure=failure)

    def _cycle(self, reader: DetailReader) -> Snapshot:
        snap = Snapshot()
        for attempt in range(2):
            try:
                snap.failure = self._discover(reader) or snap.failure
            except BoundReached:
                self.bound_hit = True
            tip, newest = self._tip_page(reader)
            self.basis = tip
            snap.failure, self.withdrawn = snap.failure or self.withdrawn, None
            result = merge_latest(self.window, newest.rows, exhausted=newest.exhausted, offset=newest.offset)
            self.window = result.window
            snap.new_keys += result.new_keys
            if result.gap:
                snap.warnings.append(warning(WarningCode.gap))
            fresh = reader.fresh(tip.id)
            self.tip = fresh
            if tip.id == self.anchor_id:
                self.anchor = fresh
            if fresh.end_reason == "compression" and tip.end_reason != "compression" and attempt == 0:
                continue  # a compression finished during the read: look for the newer segment
            break
        self.details.update(reader.cache)
        warnings = self._warnings(reader)  # decides `continues_parent` on the first cycle
        history = history_warnings(self.view(), self.cursor(), cold_open=self.continues_parent)
        snap.warnings = warnings + history + snap.warnings
        return snap

    def read_older(self, limit: int = PAGE_LIMIT, *, across: bool = True) -> MergeResult | None:
        """Up to `limit` rows older than the history's oldest read row; None at the start.

        While the tip window has older rows, they come first; then (`across`) the previous proven segments,
        segment by segment (`core/lineage.py`). In the tip window, the read re-reads the block's first row as
        an anchor (`older_request`). A page of another session (the canonical segment changed during the
        read) or of another generation is never merged: the paging restarts with the newest page at offset 0.
        A page that misses its anchor (rows appended or removed since the block was read) is retried once
        after a refresh joined the head, then paging restarts.
        """
        if self.tip is None:
            self.refresh()
        cur = self.cursor()
        if across and (cur.window is not self.window or cur.kind != "page"):
            if cur.kind not in ("page", "first"):
                return None
            # None: the segment was blocked, so the next cursor differs
            return self._read_earlier(cur, limit) or self.read_older(limit)
        return self._read_tip_older(limit)

    def _read_tip_older(self, limit: int) -> MergeResult | None:
        """The tip window's next older page, anchored; a detached page is retried once after
        a refresh, then the paging restarts (see `read_older`)."""
        joined: Snapshot | None = None
        for attempt in range(2):
            window = self.window
            if window.fresh:
                return self._restart(joined)
            request = older_request(window, legacy=not self.caps.order, limit=limit, cap=MAX_LIMIT)
            if request is None:
                return None
            assert window.canonical is not None
            page = self.client.messages(window.canonical, offset=request.offset, limit=request.limit)
            if page.session_id != window.canonical:
                return self._restart(joined)
            result = merge_anchored(self.window, request, page.messages)
            if not result.detached:
                if not result.stale:
                    self.window = result.window
                merged = replace(result, returned=len(page.messages), restarted=joined is not None)
                return with_refreshes(merged, joined)
            if attempt == 0:
                joined = self.refresh()
        self.window = advance(self.window, self.window.canonical or self.anchor_id)
        return self._restart(joined)

    def _restart(self, joined: Snapshot | None) -> MergeResult:
        """Read the newest page again (offset 0 of the canonical segment)."""
        snap = self.refresh()
        return with_refreshes(MergeResult(self.window, (), restarted=True), joined, snap)

    def cursor(self) -> Cursor:
        """Where the next older read of the whole lineage goes (`core/lineage.py`). The tip
        segment whose messages answer for a session not proven (a redirect past the proof's
        bounds) is `blocked`: none of its pages can be read as its own."""
        target = self.redirects.get(self.path[-1])
        if self.window.fresh and target is not None and target not in self.path:
            return Cursor("blocked", self.path[-1], self.window)
        counts = {sid: self.details[sid].message_count for sid in self.path if sid in self.details}
        return cursor(self.path, self.window, self.earlier.windows, frozenset(self.earlier.blocked), counts)

    def view(self) -> View:
        return compose(self.path, self.window, self.earlier.windows)

    def rows(self) -> list[Row]:
        """The rows shown so far (every one of a proven segment)."""
        return shown_rows(self.view())

    @property
    def reached_start(self) -> bool:
        """No older row can be read: the lineage's first row is held, or the rest is blocked."""
        return self.cursor().kind in ("start", "blocked")

    def _detail(self, sid: str) -> SessionDetail:
        if sid not in self.details:
            self.details[sid] = self.client.detail(sid)
        return self.details[sid]

    def _read_earlier(self, cur: Cursor, limit: int) -> MergeResult | None:
        assert cur.sid is not None
        if cur.sid in self.redirects:  # its messages answer for a newer segment: not read again
            self.earlier.blocked.add(cur.sid)
            return None
        if cur.kind == "first":
            detail = self._detail(cur.sid)
            return self.earlier.first(self.client, detail, legacy=self._oldest_first(), limit=limit)
        return self.earlier.older(self.client, cur.sid, legacy=self._oldest_first(), limit=limit)

    def fill(self, rows: int = PAGE_LIMIT) -> None:
        """Fill the newest page up to `rows` shown rows from the previous proven segments:
        their newest pages, and older pages of them where copies of one durable row showed
        as one (at most `FILL_OLDER` of those)."""
        for _ in range(len(self.path) + FILL_OLDER):
            have = len(self.view().keys)
            cur = self.cursor()
            earlier = cur.kind == "page" and cur.window is not self.window
            if have >= rows or not (cur.kind == "first" or earlier):
                return
            result = self._read_earlier(cur, rows - have)
            if earlier and (result is None or not result.new_keys):
                return

    def read_goal(self) -> str | None:
        """The task's goal (`TaskInfo.goal`): from the view, else one one-row read of the root."""
        if self.goal is None and not self.continues_parent:
            self.goal = goal_in(self.view(), self.path[0], self.cursor())
            if self.goal is None:
                oldest = self.oldest if self.path[0] == self.anchor_id else None
                self.goal = read_goal(self.client, self.path[0], oldest)
        return self.goal

    def _warnings(self, reader: DetailReader) -> list[WarningItem]:
        out: list[WarningItem] = []

        if self.caps.order is False:
            text = legacy_warning(paginated=bool(self.caps.pagination))
            out.append(WarningItem(code=WarningCode.legacy_backend, message=text))
        tip = self.tip
        assert tip is not None
        assert self.anchor is not None
        if tip.end_reason == "compression":
            out.append(warning(WarningCode.partial_history))
        if self.continues_parent is None:
            self.continues_parent = self.anchor_continues(reader, self.anchor)
        if self.bound_hit:
            out.append(warning(WarningCode.bound_reached))
        if self.store is not None:
            out += self.store.warnings()
        return out

    def state(self) -> TaskState:
        tip = self.tip
        if tip is None or tip.end_reason == "compression":
            return "unknown"
        if tip.end_reason is None and tip.ended_at is None:
            return "running"
        return "ended"

    def usage(self) -> Usage:
        """The task's usage from the details the proof read (`core/documents.py`): a later segment may exist
        while the tip ended by compression, an earlier one unless the anchor is known not to continue one."""
        tip = self.details.get(self.path[-1]) or self.tip
        later = tip is None or tip.end_reason == "compression"
        return lineage_usage(self.path, self.details, later=later, earlier=self.continues_parent is not False)

    def document(self, warnings: Sequence[WarningItem]) -> TranscriptDoc:
        tip = self.tip
        assert tip is not None
        assert self.anchor is not None
        view, cur, cold = self.view(), self.cursor(), self.continues_parent
        rows = shown_rows(view)
        return TranscriptDoc(
            task=TaskInfo(
                root_id=self.anchor_id,
                tip_id=tip.id,
                lineage=list(self.path),
                candidate=self.candidate,
                profile=self.client.profile,
                source=self.anchor.source,
                state=self.state(),
                end_reason=tip.end_reason,
                notes=sorted(self.notes),
                goal=self.goal,
                segments=segments(self.path, self.details, rows),
                usage=self.usage(),
            ),
            backend=self.caps.info(),
            rows=rows,
            coverage=coverage(view, cur, cold_open=cold),
            warnings=merge_warnings(
                state_warnings(warnings, partial=tip.end_reason == "compression"),
                history_warnings(view, cur, cold_open=cold),
            ),
        )


__all__ = ["Snapshot", "TaskReader"]
