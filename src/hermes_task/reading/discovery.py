"""Candidate discovery and lineage proof for one task (the identity half of `TaskReader`).

Invariant: `path` only ever holds segments proven back to the anchor (the first durable
reference) on one branch. Candidates (`--tip`, `/latest-descendant` hints while the newest
verified segment ended by compression) are untrusted until `prove` accepts them; a
candidate leaves the queue only with a proof outcome (a failed read keeps it queued for the
next refresh). Detail reads are exact-id, cached per fetch and bounded (`DetailReader`).
"""

from __future__ import annotations

from collections.abc import Sequence

from hermes_task.core.documents import Candidate
from hermes_task.core.ids import is_valid_id
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
from hermes_task.core.sanitize import clean_line
from hermes_task.core.wire import MessagesPage, SessionDetail
from hermes_task.failures import Code, HermesError
from hermes_task.reading.api import DashboardAPI

MAX_DETAIL_READS = 100
MAX_HINT_HOPS = 4


class DetailReader:
    """Exact-id detail reads for one fetch: cached, and bounded to `budget` reads."""

    def __init__(self, client: DashboardAPI, budget: int = MAX_DETAIL_READS) -> None:
        self.client = client
        self.budget = budget
        self.reads = 0
        self.cache: dict[str, SessionDetail] = {}

    def __call__(self, sid: str) -> SessionDetail:
        if sid not in self.cache:
            self.cache[sid] = self.fresh(sid)
        return self.cache[sid]

    def fresh(self, sid: str) -> SessionDetail:
        if self.reads >= self.budget:
            raise BoundReached(f"more than {self.budget} detail reads in one fetch")
        self.reads += 1
        detail = self.client.detail(sid)
        self.cache[sid] = detail
        return detail


class LineageProof:
    """The proven lineage of one task and its queue of untrusted candidates."""

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
        self.path: tuple[str, ...] = (anchor_id,)
        self.legacy: bool | None = None
        self.candidate = Candidate()
        self.notes: set[str] = set()
        self.bound_hit = False
        self.oldest: MessagesPage | None = None  # the anchor's oldest row, once read

    def _legacy(self) -> bool:
        if self.legacy is None:
            probe = self.client.messages(self.anchor_id, offset=0, limit=1)
            self.legacy = probe.legacy
            if probe.legacy:  # `order` ignored: offset 0 is the anchor's oldest row
                self.oldest = probe
        return self.legacy

    def add_candidate(self, sid: str) -> None:
        """Queue an untrusted newer-segment reference (proven on the next refresh)."""
        if sid not in self.path and sid not in self.pending:
            self.pending.append(sid)

    def _adopt(self, reader: DetailReader, sid: str, *, explicit: bool) -> HermesError | None:
        try:
            proof = prove(reader(self.anchor_id), sid, reader, legacy=self._legacy)
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
            # only a hint that did not pan out; an explicit --tip's failure is reported.
            if explicit or exc.code not in (Code.NOT_FOUND, Code.INCOMPATIBLE, Code.IDENTITY_MISMATCH):
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
        while self.pending:
            sid = self.pending[0]
            # A read that fails (404: not flushed yet, a network error) raises here and the
            # candidate stays queued for the next refresh; it leaves only with an outcome.
            failure = self._adopt(reader, sid, explicit=True) or failure
            self.pending.pop(0)
            if failure is not None and failure.code is Code.FORK_AMBIGUOUS:
                return failure
        if not self.hint:
            return failure
        for _ in range(MAX_HINT_HOPS):
            tip = reader(self.path[-1])
            if tip.end_reason != "compression":
                break
            try:
                hint = self.client.latest_descendant(tip.id)
            except HermesError as exc:
                if exc.code in (Code.NOT_FOUND, Code.UNSUPPORTED, Code.BAD_REQUEST, Code.INCOMPATIBLE):
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

    def anchor_continues(self, reader: DetailReader, anchor: SessionDetail) -> bool:
        """Does the anchor itself continue an earlier segment (a cold open of a later one)?
        One extra exact-id, profile-checked read of the parent's metadata, and only when the
        anchor names no direct-parent marker; never the parent's messages."""
        parent_id = anchor.parent_session_id
        try:
            markers = parse_model_config(anchor) or {}
        except LineageRejected:
            markers = {}
        if (
            parent_id is None
            or any(markers.get(m) == parent_id for m in MARKERS)
            or not is_valid_id(parent_id)
        ):
            return False
        try:
            parent = reader(parent_id)
        except BoundReached:
            return False
        except HermesError as exc:
            if exc.code is not Code.NOT_FOUND:
                raise
            return False
        return continues_parent(anchor, parent, legacy=self._legacy)

    def adopt_redirect(self, reader: DetailReader, sid: str) -> None:
        """Accept a messages answer for another session only as a proven newer segment of
        this branch (the path's new tip); anything else is an identity mismatch."""
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
