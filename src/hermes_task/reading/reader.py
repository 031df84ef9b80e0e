"""One task, read cycle by cycle: proof, newest page, fresh detail (the seed's controller).

`TaskReader` owns the verified lineage, the window and the request generation of one
task. Each `refresh()` is: prove pending candidates (`--tip`, then `/latest-descendant`
hints while the newest verified segment ended by compression) -> detail -> newest messages
page -> a fresh detail read that notices a compression finished during the request. A
messages answer for another session is used only once proven on the same branch. Older
pages (`read_older`) are read at offset == coverage of the current canonical segment.
Failures are raised as `HermesError`; what was verified before stays in `window`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from hermes_task.core.anchors import merge_anchored, older_request
from hermes_task.core.documents import (
    BackendInfo,
    Candidate,
    Coverage,
    TaskInfo,
    TaskState,
    TranscriptDoc,
    WarningCode,
    WarningItem,
)
from hermes_task.core.ids import is_valid_id
from hermes_task.core.limits import MAX_LIMIT, PAGE_LIMIT
from hermes_task.core.lineage import (
    MARKERS,
    BoundReached,
    ForkAmbiguous,
    LineageRejected,
    combine,
    continues_parent,
    parse_model_config,
    prove,
)
from hermes_task.core.messages import warning_message
from hermes_task.core.sanitize import clean_line
from hermes_task.core.window import MergeResult, Window, advance, merge_latest
from hermes_task.core.wire import MessagesPage, SessionDetail, WireMessage
from hermes_task.failures import DESCENDANT_IGNORABLE, HINT_IGNORABLE, Code, HermesError
from hermes_task.reading.api import DashboardAPI
from hermes_task.reading.details import MAX_DETAIL_READS, DetailReader

MAX_HINT_HOPS = 4
MAX_LEGACY_FORWARD_PAGES = 100


@dataclass
class Snapshot:
    """The outcome of one cycle: new rows, warnings, and a failure to report after the
    verified rows (a rejected or forked candidate)."""

    new_keys: tuple[tuple[str, int], ...] = ()
    warnings: list[WarningItem] = field(default_factory=list)
    failure: HermesError | None = None


class TaskReader:
    """The read-only controller of one task, anchored at its first durable reference."""

    def __init__(
        self,
        client: DashboardAPI,
        anchor_id: str,
        *,
        tips: Sequence[str] = (),
        hint: bool = True,
    ) -> None:
        self.client = client
        self.anchor_id = anchor_id
        self.pending = list(dict.fromkeys(t for t in tips if t != anchor_id))
        self.hint = hint
        self.anchor: SessionDetail | None = None
        self.tip: SessionDetail | None = None
        self.path: tuple[str, ...] = (anchor_id,)
        self.window = Window()
        self.legacy: bool | None = None
        self.candidate = Candidate()
        self.notes: set[str] = set()
        self.bound_hit = False
        self.continues_parent: bool | None = None
        self.detail_budget = MAX_DETAIL_READS

    # -- contract -------------------------------------------------------------------------

    def _legacy(self) -> bool:
        if self.legacy is None:
            probe = self.client.messages(self.anchor_id, offset=0, limit=1)
            self.legacy = probe.legacy
        return self.legacy

    # -- proof ----------------------------------------------------------------------------

    def add_candidate(self, sid: str) -> None:
        """Queue an untrusted newer-segment reference (proven on the next refresh)."""
        if sid not in self.path and sid not in self.pending:
            self.pending.append(sid)

    def _adopt(self, reader: DetailReader, sid: str, *, explicit: bool) -> HermesError | None:
        anchor = reader(self.anchor_id)  # the anchor's own failure is the task's, not the tip's
        try:
            proof = prove(anchor, sid, reader, legacy=self._legacy)
        except LineageRejected as exc:
            if explicit:
                self.candidate = Candidate(id=sid, status="rejected", reason=exc.reason)
                return HermesError(Code.LINEAGE_REJECTED, f"{clean_line(sid)}: {exc.reason}")
            return None
        except BoundReached:
            self.bound_hit = True
            if explicit:
                self.candidate = Candidate(id=sid, status="rejected", reason="bound_reached")
            return None
        except HermesError as exc:
            # A hint naming a session the dashboard cannot show (404, a malformed detail) is
            # only a hint that did not pan out. An explicit --tip that cannot be read hides
            # nothing verified: it is `unavailable`, and its failure is reported after the rows.
            if explicit:
                self.candidate = Candidate(id=sid, status="unavailable", reason=exc.code.value)
                return exc
            if exc.code not in HINT_IGNORABLE:
                raise
            return None
        try:
            self.path = combine(self.path, proof.path)
        except ForkAmbiguous as exc:
            common = [a for a, b in zip(exc.first, exc.second, strict=False) if a == b]
            self.path = tuple(common) or (self.anchor_id,)
            self.candidate = Candidate(id=sid, status="rejected", reason="fork_ambiguous")
            return HermesError(
                Code.FORK_AMBIGUOUS, f"{clean_line(exc.first[-1])} and {clean_line(exc.second[-1])}"
            )
        self.notes.update(proof.notes)
        if explicit or self.candidate.status == "none":
            self.candidate = Candidate(
                id=sid, status="proven", reason=None if explicit else "latest_descendant"
            )
        return None

    def _discover(self, reader: DetailReader) -> HermesError | None:
        failure: HermesError | None = None
        waiting: list[str] = []
        while self.pending:
            sid = self.pending.pop(0)
            outcome = self._adopt(reader, sid, explicit=True)
            if outcome is not None and outcome.retryable:
                # Not readable yet (404: not flushed, a network error): queued for the next
                # refresh; a candidate leaves the queue only with a proof outcome.
                waiting.append(sid)
            failure = outcome or failure
            if failure is not None and failure.code is Code.FORK_AMBIGUOUS:
                self.pending[:0] = waiting
                return failure
        self.pending[:0] = waiting
        if not self.hint:
            return failure
        for _ in range(MAX_HINT_HOPS):
            tip = reader(self.path[-1])
            if tip.end_reason != "compression":
                break
            try:
                hint = self.client.latest_descendant(tip.id)
            except HermesError as exc:
                if exc.code in DESCENDANT_IGNORABLE:
                    break
                raise
            if hint.session_id in self.path or not is_valid_id(hint.session_id):
                break
            before = self.path
            fork = self._adopt(reader, hint.session_id, explicit=False)
            if fork is not None:
                return fork
            if self.path == before:
                break
        return failure

    # -- pages ----------------------------------------------------------------------------

    def _newest_page(self, tip: SessionDetail) -> tuple[MessagesPage, list[WireMessage], bool, int | None]:
        """The newest page of `tip` (legacy backends ignore `order`: page from the count)."""
        guess_legacy = self.legacy if self.legacy is not None else not tip.looks_current
        offset = 0
        if guess_legacy:
            offset = max(0, (tip.message_count or 0) - PAGE_LIMIT)
        page = self.client.messages(tip.id, offset=offset)
        if self.legacy is None:
            self.legacy = page.legacy
        if not page.legacy:
            if offset != 0:
                page = self.client.messages(tip.id, offset=0)
            return page, list(page.messages), page.pagination.returned < PAGE_LIMIT, None
        rows = list(page.messages)
        if offset == 0 and page.pagination.returned == PAGE_LIMIT and not guess_legacy:
            offset = max(0, (tip.message_count or 0) - PAGE_LIMIT)
            page = self.client.messages(tip.id, offset=offset)
            rows = list(page.messages)
        last = page
        forward = offset
        for _ in range(MAX_LEGACY_FORWARD_PAGES):
            if last.pagination.returned < PAGE_LIMIT:
                break
            forward += PAGE_LIMIT
            last = self.client.messages(tip.id, offset=forward)
            if last.session_id != page.session_id:
                raise HermesError(Code.IDENTITY_MISMATCH, "the segment changed while paging")
            rows.extend(last.messages)
        if last.pagination.returned >= PAGE_LIMIT:
            self.bound_hit = True  # newer rows than MAX_LEGACY_FORWARD_PAGES pages: not read
        return page, rows, offset == 0, offset

    def refresh(self) -> Snapshot:
        """One read cycle; the window gains the newest page of the newest verified segment.
        A detail-read budget spent inside the cycle ends it with `bound_reached`, keeping
        what was verified (never an internal error)."""
        reader = DetailReader(self.client, self.detail_budget)
        if self.anchor is None:
            self.anchor = reader(self.anchor_id)
        try:
            return self._cycle(reader)
        except BoundReached:
            self.bound_hit = True
            if self.tip is None:
                self.tip = reader.cache.get(self.path[-1], self.anchor)
            return Snapshot(warnings=self._warnings(reader))

    def _cycle(self, reader: DetailReader) -> Snapshot:
        snap = Snapshot()
        for attempt in range(2):
            try:
                snap.failure = self._discover(reader) or snap.failure
            except BoundReached:
                self.bound_hit = True
            tip = reader(self.path[-1])
            if self.window.canonical != tip.id:
                self.window = advance(self.window, tip.id)
            generation = self.window.generation
            page, rows, exhausted, offset = self._newest_page(tip)
            if page.session_id != tip.id:
                tip = self._redirected(reader, page.session_id)
                page, rows, exhausted, offset = self._newest_page(tip)
                if page.session_id != tip.id:
                    raise HermesError(Code.IDENTITY_MISMATCH, "the messages answer names another session")
            if self.window.generation != generation:
                continue
            result = merge_latest(self.window, rows, exhausted=exhausted, offset=offset)
            self.window = result.window
            snap.new_keys += result.new_keys
            if result.gap:
                snap.warnings.append(WarningItem(code="gap", message=warning_message("gap")))
            fresh = reader.fresh(tip.id)
            self.tip = fresh
            if tip.id == self.anchor_id:
                self.anchor = fresh
            if fresh.end_reason == "compression" and tip.end_reason != "compression" and attempt == 0:
                continue  # a compression finished during the read: look for the newer segment
            break
        snap.warnings = self._warnings(reader) + snap.warnings
        return snap

    def _redirected(self, reader: DetailReader, sid: str) -> SessionDetail:
        if not is_valid_id(sid):
            raise HermesError(Code.INCOMPATIBLE, "messages: invalid session_id")
        try:
            proof = prove(reader(self.anchor_id), sid, reader, legacy=self._legacy)
            path = combine(self.path, proof.path)
        except (LineageRejected, ForkAmbiguous):
            raise HermesError(
                Code.IDENTITY_MISMATCH, f"messages answered for {clean_line(sid)}, not proven on this task"
            ) from None
        except BoundReached:
            self.bound_hit = True
            raise HermesError(Code.IDENTITY_MISMATCH, "messages answered for another session") from None
        if path[-1] != sid:
            raise HermesError(
                Code.IDENTITY_MISMATCH, f"messages answered for an earlier segment {clean_line(sid)}"
            )
        self.path = path
        self.notes.update(proof.notes)
        self.window = advance(self.window, sid)
        return reader(sid)

    def read_older(self, limit: int = PAGE_LIMIT) -> MergeResult | None:
        """Up to `limit` rows older than the window's newest block; None at the start.

        The read re-reads the block's first row as an anchor (`older_request`). A page of
        another session (the canonical segment changed during the read) or of another
        generation is never merged: the paging restarts with the newest page at offset 0.
        A page that misses its anchor (rows appended or removed since the block was read)
        is retried once after a refresh joined the head, then paging restarts.
        """
        if self.tip is None:
            self.refresh()
        joined: Snapshot | None = None
        for attempt in range(2):
            window = self.window
            if window.fresh:
                return self._restart(joined)
            request = older_request(window, legacy=bool(self.legacy), limit=limit, cap=MAX_LIMIT)
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
                return _with(merged, joined)
            if attempt == 0:
                joined = self.refresh()
        self.window = advance(self.window, self.window.canonical or self.anchor_id)
        return self._restart(joined)

    def _restart(self, joined: Snapshot | None) -> MergeResult:
        """Read the newest page again (offset 0 of the canonical segment)."""
        snap = self.refresh()
        return _with(MergeResult(self.window, (), restarted=True), joined, snap)

    # -- state ----------------------------------------------------------------------------

    def _anchor_continues(self, reader: DetailReader) -> bool:
        """Does the anchor itself continue an earlier segment? One extra exact-id,
        profile-checked read of the parent's metadata; never its messages."""
        if self.continues_parent is None:
            anchor = self.anchor
            assert anchor is not None
            parent_id = anchor.parent_session_id
            result = False
            try:
                markers = parse_model_config(anchor) or {}
            except LineageRejected:
                markers = {}
            direct = any(markers.get(m) == parent_id for m in MARKERS)
            if parent_id is not None and not direct and is_valid_id(parent_id):
                try:
                    parent = reader(parent_id)
                except BoundReached:
                    parent = None
                except HermesError as exc:
                    if exc.code is not Code.NOT_FOUND:
                        raise
                    parent = None
                result = parent is not None and continues_parent(anchor, parent, legacy=self._legacy)
            self.continues_parent = result
        return self.continues_parent

    def _warnings(self, reader: DetailReader) -> list[WarningItem]:
        out: list[WarningItem] = []

        def add(code: WarningCode, detail: str = "") -> None:
            out.append(WarningItem(code=code, message=warning_message(code, detail)))

        if self.legacy:
            add("legacy_backend")
        tip = self.tip
        assert tip is not None
        if tip.end_reason == "compression":
            add("partial_history")
        earlier = set(self.path[:-1])
        has_earlier = len(self.path) > 1 or self._anchor_continues(reader)
        if has_earlier:
            shown = any(k[0] != tip.id for k in self.window.keys if not earlier or k[0] in earlier)
            merges = not self.legacy and tip.source != "tool"
            if not shown and (not merges or not self.window.has_older):
                add("partial_ancestors")
        if self.bound_hit:
            add("bound_reached")
        return out

    def state(self) -> TaskState:
        tip = self.tip
        if tip is None or tip.end_reason == "compression":
            return "unknown"
        if tip.end_reason is None and tip.ended_at is None:
            return "running"
        return "ended"

    def document(self, warnings: Sequence[WarningItem]) -> TranscriptDoc:
        tip = self.tip
        assert tip is not None
        assert self.anchor is not None
        window = self.window
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
            ),
            backend=BackendInfo(contract="legacy" if self.legacy else "current"),
            rows=window.rows(),
            coverage=Coverage(
                unique_rows=len(window.keys), has_older=window.has_older, at_start=window.at_start
            ),
            warnings=list(warnings),
        )


def _with(result: MergeResult, *snaps: Snapshot | None) -> MergeResult:
    """`result` carrying the new rows and warnings of refreshes made during an older read."""
    new_keys, warnings, gap = dict.fromkeys(result.new_keys), list(result.warnings), result.gap
    for snap in snaps:
        if snap is not None:
            new_keys.update(dict.fromkeys(snap.new_keys))
            warnings += snap.warnings
            gap = gap or any(w.code == "gap" for w in snap.warnings)
    return replace(result, new_keys=tuple(new_keys), warnings=tuple(warnings), gap=gap)


__all__ = ["DetailReader", "Snapshot", "TaskReader"]
