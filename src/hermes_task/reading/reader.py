"""One task, read cycle by cycle (`TaskReader`), and what a read comes to: `Snapshot` (one cycle),
`Transcript` (a whole read) and the document's history parts, by docs/identity.md ("Lineage and
segments", "Warnings"). Invariants: what was verified before a failure stays in `window`; shown rows
come from `compose`; a refresh made during an older read travels with its result (`with_refreshes`).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import KW_ONLY, InitVar, dataclass

from msgspec import Struct, field
from msgspec.structs import replace

from hermes_task.core.capabilities import Capabilities
from hermes_task.core.documents import (
    Candidate,
    Coverage,
    Row,
    SegmentInfo,
    TaskInfo,
    TaskState,
    TranscriptDoc,
    Usage,
    WarningItem,
    lineage_usage,
    warning,
)
from hermes_task.core.lineage import BoundReached, Cursor, View, compose, cursor
from hermes_task.core.projection import project, states_goal
from hermes_task.core.sanitize import clean_line
from hermes_task.core.ui_strings import WarningCode, legacy_warning
from hermes_task.core.window import MergeResult, Window, advance, merge_anchored, merge_latest, older_request
from hermes_task.core.wire import MAX_LIMIT, PAGE_LIMIT, MessagesPage, SessionDetail
from hermes_task.failures import Code, HermesError
from hermes_task.reading.api import MAX_DETAIL_READS, DashboardAPI, DetailReader, SharedDetails
from hermes_task.reading.hints import StoreHints, read_goal
from hermes_task.reading.pages import NewestPage, newest_page
from hermes_task.reading.proof import LineageProof, state_of

FILL_OLDER = 4
MAX_REDIRECTS = 4


@dataclass(eq=False)
class TaskReader:
    """The read-only controller of one task, anchored at its first durable reference."""

    client: DashboardAPI
    anchor_id: str
    _: KW_ONLY
    tips: InitVar[Sequence[str]] = ()
    hint: InitVar[bool] = True
    store: InitVar[StoreHints | None] = None
    # Sees the anchor's first detail before any messages request; may raise.
    admit: Callable[[SessionDetail], None] | None = None
    shared: SharedDetails | None = None  # a one-shot run's details (reading/api.py): each read once

    def __post_init__(self, tips: Sequence[str], hint: bool, store: StoreHints | None) -> None:
        self.proof = LineageProof(self.client, self.anchor_id, tips=tips, hint=hint, store=store)
        self.window = Window()
        self.redirects: dict[str, str] = {}  # segment -> the session its messages answered for
        self.basis: SessionDetail | None = None  # the tip's detail its newest page was read under
        self.anchor: SessionDetail | None = None
        self.tip: SessionDetail | None = None
        self.earlier: dict[str, Window] = {}  # the windows of earlier segments read on their own
        self.blocked: set[str] = set()  # earlier segments that cannot be read
        self.details: dict[str, SessionDetail] = {}
        self.goal: str | None = None
        self.continues_parent: bool | None = None
        self.detail_budget = MAX_DETAIL_READS

    @property
    def path(self) -> tuple[str, ...]:
        return self.proof.path

    @property
    def caps(self) -> Capabilities:
        return self.proof.caps

    @property
    def candidate(self) -> Candidate:
        return self.proof.candidate

    def refresh(self, probe: SessionDetail | None = None) -> Snapshot:
        """One read cycle (`probe`: a detail read just before, `follow --parent`)."""
        reader = DetailReader(self.client, self.detail_budget, self.shared)
        if probe is not None:  # counted as this fetch's read of it
            reader.count()
            reader.cache[probe.id] = probe
        if self.anchor is None:
            anchor = reader(self.anchor_id)
            if self.admit is not None:
                self.admit(anchor)  # e.g. a child that does not name its parent (reading/hints.py)
            self.anchor = anchor
        try:
            return self._cycle(reader)
        except BoundReached:
            self.proof.bound_hit = True
            newest = self.path[-1]
            if self.tip is None or self.tip.id != newest:
                self.tip = reader.cache.get(newest) or self.details.get(newest) or self.anchor
            warnings = self._warnings(reader)
            failure, self.proof.withdrawn = self.proof.withdrawn, None
            return Snapshot(warnings=warnings, failure=failure)

    def _cycle(self, reader: DetailReader) -> Snapshot:
        snap = Snapshot()
        for attempt in range(2):
            try:
                snap.failure = self.proof.discover(reader) or snap.failure
            except BoundReached:
                self.proof.bound_hit = True
            # a segment whose page refutes a rule its proof assumed is withdrawn before a row is merged
            tip, newest = self._newest_of_path(reader)
            while not self.proof.rule_holds(tip, newest.rows, exhausted=newest.exhausted):
                tip, newest = self._newest_of_path(reader)
            self.basis = tip
            snap.failure, self.proof.withdrawn = snap.failure or self.proof.withdrawn, None
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
        snap.warnings = self._warnings(reader) + snap.warnings
        return snap

    def _newest_page(self, tip: SessionDetail) -> NewestPage:
        newest = newest_page(self.client, tip, self.caps.oldest_first)
        self.caps.learn(newest.page)
        self.proof.bound_hit = self.proof.bound_hit or newest.bound_hit
        return newest

    def _newest_of_path(self, reader: DetailReader) -> tuple[SessionDetail, NewestPage]:
        """The newest verified segment and its newest page, a redirected answer proven first."""
        tip = reader(self.path[-1])
        if self.window.canonical != tip.id:
            self.window = advance(self.window, tip.id)
        newest = self._newest_page(tip)
        for _ in range(MAX_REDIRECTS):
            sid = newest.page.session_id
            if sid == tip.id:
                return tip, newest
            self.redirects[tip.id] = sid
            self.proof.adopt_redirect(reader, sid)
            fork = self.proof.settle(reader)
            if fork is not None:
                raise fork
            tip = reader(self.path[-1])
            self.window = advance(self.window, tip.id)
            if newest.legacy or tip.id != sid:
                newest = self._newest_page(tip)
        if newest.page.session_id == tip.id:
            return tip, newest
        raise BoundReached(f"the task moved to a newer segment {MAX_REDIRECTS} times in one read")

    def read_older(self, limit: int = PAGE_LIMIT, *, across: bool = True) -> MergeResult | None:
        """Up to `limit` rows older than the oldest read (`across`: in earlier segments too)."""
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
        """The tip window's next older page; one that misses its anchor is retried after a refresh."""
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
        snap = self.refresh()
        return with_refreshes(MergeResult(self.window, (), restarted=True), joined, snap)

    def cursor(self) -> Cursor:
        """Where the next older read goes (`blocked` when the tip answers for another session)."""
        target = self.redirects.get(self.path[-1])
        if self.window.fresh and target is not None and target not in self.path:
            return Cursor("blocked", self.path[-1], self.window)
        counts = {sid: self.details[sid].message_count for sid in self.path if sid in self.details}
        return cursor(self.path, self.window, self.earlier, frozenset(self.blocked), counts)

    def view(self) -> View:
        return compose(self.path, self.window, self.earlier)

    def rows(self) -> list[Row]:
        return shown_rows(self.view())

    @property
    def reached_start(self) -> bool:
        """No older row can be read: the lineage's first row is held, or the rest is blocked."""
        return self.cursor().kind in ("start", "blocked")

    def _read_earlier(self, cur: Cursor, limit: int) -> MergeResult | None:
        """Earlier segment `cur.sid`'s newest `limit` rows (`first`), else its next older page; None
        (and the segment blocked for good) when nothing could be merged."""
        sid, windows = cur.sid, self.earlier
        assert sid is not None
        if sid not in self.redirects and cur.kind == "first":
            detail = self.details[sid] = self.details.get(sid) or self.client.detail(sid)
            newest = newest_page(self.client, detail, self.proof.oldest_first(), limit, trust_count=True)
            if newest.page.session_id == sid:
                window = Window(canonical=sid)
                result = merge_latest(window, newest.rows, exhausted=newest.exhausted, offset=newest.offset)
                windows[sid] = result.window
                return replace(result, returned=len(newest.rows))
        elif sid not in self.redirects:
            request = older_request(
                windows[sid], legacy=self.proof.oldest_first(), limit=limit, cap=MAX_LIMIT
            )
            if request is not None:
                page = self.client.messages(sid, offset=request.offset, limit=request.limit)
                if page.session_id == sid:
                    result = merge_anchored(windows[sid], request, page.messages)
                    if not result.detached:
                        windows[sid] = result.window
                        return replace(result, returned=len(page.messages))
        self.blocked.add(sid)
        return None

    def fill(self, rows: int = PAGE_LIMIT) -> None:
        """Fill the newest page up to `rows` shown rows from earlier segments."""
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
        """The task's goal: from the view once it holds the lineage's first row, else read."""
        if self.goal is None and not self.continues_parent:
            root = self.path[0]
            if self.cursor().kind == "start":
                self.goal = goal_of(row for row in self.rows() if row.session_id == root)
            if self.goal is None:
                oldest = self.proof.oldest if root == self.anchor_id else None
                self.goal = read_goal(self.client, root, oldest)
        return self.goal

    def _warnings(self, reader: DetailReader) -> list[WarningItem]:
        """A cycle's warnings (the first decides `continues_parent`), then the history's."""
        self.details.update(reader.cache)
        out: list[WarningItem] = []
        if self.caps.order is False:
            text = legacy_warning(paginated=bool(self.caps.pagination))
            out.append(WarningItem(code=WarningCode.legacy_backend, message=text))
        assert self.tip is not None
        assert self.anchor is not None
        if self.tip.end_reason == "compression":
            out.append(warning(WarningCode.partial_history))
        if self.continues_parent is None:
            self.continues_parent = self.proof.anchor_continues(reader, self.anchor)
        if self.proof.bound_hit:
            out.append(warning(WarningCode.bound_reached))
        if self.proof.store is not None:
            out += self.proof.store.warnings()
        return out + history_warnings(self.view(), self.cursor(), cold_open=self.continues_parent)

    def state(self) -> TaskState:
        return "unknown" if self.tip is None else state_of(self.tip)

    def usage(self) -> Usage:
        """From the details read (docs/identity.md, "Usage and cost")."""
        tip = self.details.get(self.path[-1]) or self.tip
        later = tip is None or tip.end_reason == "compression"
        return lineage_usage(self.path, self.details, later=later, earlier=self.continues_parent is not False)

    def document(
        self, warnings: Sequence[WarningItem], view: View | None = None, cur: Cursor | None = None
    ) -> TranscriptDoc:
        """The document of the history `view` read to `cur` (default: the reader's)."""
        tip, anchor = self.tip, self.anchor
        assert tip is not None
        assert anchor is not None
        view = self.view() if view is None else view
        cur = self.cursor() if cur is None else cur
        cold = self.continues_parent
        # `cold` None: not known whether the anchor continues a segment; the start not claimed
        has_older, at_start = cur.kind in ("page", "first"), cur.kind == "start" and cold is False
        # `partial_history` as the task stands now: once, after `legacy_backend`
        reported = [w for w in warnings if w.code != "partial_history"]
        if tip.end_reason == "compression":
            at = 1 if reported and reported[0].code == "legacy_backend" else 0
            reported.insert(at, warning(WarningCode.partial_history))
        rows = shown_rows(view)
        counts = Counter(row.session_id for row in rows)
        segments = [_segment(sid, self.details.get(sid), counts[sid]) for sid in self.path]
        return TranscriptDoc(
            task=TaskInfo(
                root_id=self.anchor_id,
                tip_id=tip.id,
                lineage=list(self.path),
                candidate=self.candidate,
                profile=self.client.profile,
                source=anchor.source,
                state=self.state(),
                end_reason=tip.end_reason,
                notes=sorted(self.proof.notes),
                goal=self.goal,
                segments=segments,
                usage=self.usage(),
            ),
            backend=self.caps.info(),
            rows=rows,
            coverage=Coverage(unique_rows=len(view.keys), has_older=has_older, at_start=at_start),
            warnings=merge_warnings(reported, history_warnings(view, cur, cold_open=cold)),
        )


# Warnings that say a transcript was not read whole, in the order a shortfall names them.
INCOMPLETE = ("bound_reached", "partial_history", "partial_ancestors", "gap")


class Transcript(Struct, frozen=True, kw_only=True):
    """What reading one task came to."""

    rows: list[Row] = field(default_factory=list)  # the rows verified
    doc: TranscriptDoc | None = None  # None when a failure came first
    failure: HermesError | None = None  # to report after the rows
    segments: tuple[str, ...] = ()  # the proven segments, the anchor first

    @property
    def child_id(self) -> str:
        return self.segments[0]

    @property
    def warnings(self) -> list[WarningItem]:
        return self.doc.warnings if self.doc is not None else []

    @property
    def has_older(self) -> bool:
        return self.doc is None or self.doc.coverage.has_older

    def shortfall(self) -> tuple[str, str] | None:
        """(code, message): the failure, else the first `INCOMPLETE` warning."""
        if self.failure is not None:
            return self.failure.code.value, self.failure.message
        item = next((w for code in INCOMPLETE for w in self.warnings if w.code == code), None)
        return None if item is None else (item.code, item.message)


class Snapshot(Struct):
    """One cycle: new rows, warnings, and a failure to report after the verified rows."""

    new_keys: tuple[tuple[str, int], ...] = ()
    warnings: list[WarningItem] = field(default_factory=list)
    failure: HermesError | None = None


def with_refreshes(result: MergeResult, *snaps: Snapshot | None) -> MergeResult:
    """`result` carrying the new rows and warnings of refreshes made during an older read."""
    new_keys, warnings, gap = dict.fromkeys(result.new_keys), list(result.warnings), result.gap
    for snap in snaps:
        if snap is not None:
            new_keys.update(dict.fromkeys(snap.new_keys))
            warnings += snap.warnings
            gap = gap or any(w.code == "gap" for w in snap.warnings)
    return replace(result, new_keys=tuple(new_keys), warnings=tuple(warnings), gap=gap)


def shown_rows(view: View | Window) -> list[Row]:
    """Displayed rows in order (server-hidden rows omitted)."""
    return [row for key in view.keys if (row := project(view.messages[key])) is not None]


def _segment(sid: str, detail: SessionDetail | None, shown: int) -> SegmentInfo:
    started, ended = (detail.started_at, detail.ended_at) if detail is not None else (None, None)
    started, ended = (None if v is None or not math.isfinite(v) else float(v) for v in (started, ended))
    end_reason = detail.end_reason if detail is not None else None
    return SegmentInfo(id=sid, started_at=started, ended_at=ended, end_reason=end_reason, rows_shown=shown)


ANCESTORS: dict[str, str] = {
    "cold_open": "this segment continues an earlier one; open the task's first segment to read them",
    "unknown": "whether this segment continues an earlier one is not known: a read bound stopped the check",
    "blocked": "the pages of segment {sid} answer for a newer segment, so its own rows cannot be read",
}


def history_warnings(view: View, cur: Cursor, *, cold_open: bool | None) -> list[WarningItem]:
    """The warnings the history itself implies; a tip that cannot be read is not about ancestors."""
    out: list[WarningItem] = []
    if cold_open is not False:
        out.append(warning(WarningCode.partial_ancestors, ANCESTORS["cold_open" if cold_open else "unknown"]))
    elif cur.kind == "blocked" and cur.sid != cur.window.canonical:
        blocked = ANCESTORS["blocked"].format(sid=clean_line(cur.sid or ""))
        out.append(warning(WarningCode.partial_ancestors, blocked))
    if view.foreign:
        out.append(warning(WarningCode.foreign_rows, f"{view.foreign} row{'s' if view.foreign != 1 else ''}"))
    return out


def merge_warnings(reported: Sequence[WarningItem], history: Sequence[WarningItem]) -> list[WarningItem]:
    """The reported warnings, with the history's own ones as they stand now (one per code)."""
    return [*(w for w in reported if w.code not in ("partial_ancestors", "foreign_rows")), *history]


def goal_of(rows: Iterable[Row]) -> str | None:
    """The goal: the first user text row of a segment's first page, or of the lineage's root."""
    return next((row.text for row in rows if states_goal(row)), None)


def read_around(reader: TaskReader, row_ids: Sequence[int], snap: Snapshot) -> Snapshot:
    """Replace the reader's window with the union of the windows around `row_ids`, in offset order."""
    canonical = reader.window.canonical
    assert canonical is not None
    pages: list[MessagesPage] = []
    for row_id in dict.fromkeys(row_ids):
        try:
            page = reader.client.around(canonical, row_id)
        except HermesError as exc:
            if exc.code is Code.UNSUPPORTED:
                reader.caps.around = False
            raise
        reader.caps.around = True
        if page.session_id != canonical:
            raise HermesError(Code.IDENTITY_MISMATCH, "around answered for another session")
        first = page.messages[0] if page.messages else None
        if first is None or first.id != row_id or first.session_id != canonical:
            raise HermesError(Code.NOT_FOUND, f"row {row_id} is not a prompt of this task's segment")
        pages.append(page)
    pages.sort(key=lambda p: p.pagination.offset or 0)
    window = Window(canonical=canonical, generation=reader.window.generation)
    warnings = [w for w in snap.warnings if w.code != "gap"]
    for page in pages:
        result = merge_latest(window, page.messages, exhausted=(page.pagination.offset or 0) == 0)
        window = result.window
        if result.gap:
            warnings.append(warning(WarningCode.gap))
    reader.window = window
    return Snapshot(new_keys=tuple(window.keys), warnings=warnings, failure=snap.failure)
