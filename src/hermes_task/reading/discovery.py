"""Candidate discovery and lineage proof for one task (the identity half of `TaskReader`).

Invariant: `path` only ever holds segments proven back to the anchor (the first durable
reference) on one branch. Candidates (`--tip`, `/latest-descendant` hints and the local
store's continuations while the newest verified segment ended by compression) are untrusted
until `core.lineage.prove` accepts them over exact-id, profile-checked detail reads (cached
per fetch and bounded by `DetailReader`); a candidate leaves the queue only with a proof
outcome. An explicit `--tip` that fails is reported; a proposal that fails (a hint or a store
row) is ignored, the store's named with its reason on `--debug`. Two proven branches are a
fork, never resolved by recency. The store walk is bounded: `MAX_PATH_NODES` segments and
`MAX_STORE_CANDIDATES` candidates per refresh. `task.candidate.source` says who proposed the
adopted candidate. What the backend can do (`caps`, core/capabilities.py) is learned from its
answers; the proof asks whether its rotation rewrites the source only for a `tool` ->
`subagent` hop, with one oldest-first row of that hop's child when no answer showed it yet.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from hermes_task.core.capabilities import Capabilities
from hermes_task.core.children import StoreSession, is_continuation, same_profile
from hermes_task.core.documents import Candidate
from hermes_task.core.ids import is_valid_id
from hermes_task.core.lineage import (
    MARKERS,
    MAX_PATH_NODES,
    BoundReached,
    ForkAmbiguous,
    LineageRejected,
    combine,
    continues_parent,
    parse_model_config,
    prove,
)
from hermes_task.core.sanitize import clean_line
from hermes_task.core.wire import LatestDescendant, MessagesPage, SessionDetail
from hermes_task.failures import DESCENDANT_IGNORABLE, HINT_IGNORABLE, Code, HermesError
from hermes_task.reading.api import DashboardAPI
from hermes_task.reading.details import DetailReader
from hermes_task.reading.storehints import StoreHints

MAX_HINT_HOPS = 4
MAX_HINT_PATH = 8
MAX_STORE_CANDIDATES = 100
Source = Literal["tip_option", "latest_descendant", "store"]


class LineageProof:
    """The proven lineage of one task and its queue of untrusted candidates."""

    def __init__(
        self,
        client: DashboardAPI,
        anchor_id: str,
        *,
        tips: Sequence[str] = (),
        hint: bool = True,
        store: StoreHints | None = None,
    ) -> None:
        self.client = client
        self.anchor_id = anchor_id
        self.pending = list(dict.fromkeys(t for t in tips if t != anchor_id))
        self.hint = hint
        self.store = store
        self.path: tuple[str, ...] = (anchor_id,)
        self.caps = Capabilities()
        self.candidate = Candidate()
        self.notes: set[str] = set()
        self.bound_hit = False
        self.oldest: MessagesPage | None = None  # the anchor's oldest row, once read

    def _oldest_first(self) -> bool:
        """Do the backend's offsets count from the oldest row (`order` not honoured)?"""
        if self.caps.order is None:
            probe = self.client.messages(self.anchor_id, offset=0, limit=1)
            self.caps.learn(probe)
            if not probe.ordered:  # `order` ignored: offset 0 is the anchor's oldest row
                self.oldest = probe
        return not self.caps.order

    def _rewrites_source(self, child: SessionDetail) -> bool:
        """Does this backend's rotation turn `tool` into `subagent`? Backends that merge a
        continuation's ancestors into its pages copy the parent's source instead; when no
        answer showed merging yet, one oldest-first row of `child` (a continuation) does.
        Unknown (an empty segment) is no."""
        if self.caps.ancestors_merged is None:
            page = self.client.messages(child.id, offset=0, limit=1, order="oldest")
            self.caps.learn(page)
            if page.session_id == child.id and page.messages and self.caps.ancestors_merged is None:
                self.caps.ancestors_merged = False
        return self.caps.ancestors_merged is False

    def add_candidate(self, sid: str) -> None:
        """Queue an untrusted newer-segment reference (proven on the next refresh)."""
        if sid not in self.path and sid not in self.pending:
            self.pending.append(sid)

    def _adopt(self, reader: DetailReader, sid: str, *, source: Source) -> HermesError | None:
        explicit = source == "tip_option"
        anchor = reader(self.anchor_id)  # the anchor's own failure is the task's, not the tip's
        try:
            proof = prove(anchor, sid, reader, rewrites_source=self._rewrites_source)
        except LineageRejected as exc:
            if explicit:
                self.candidate = Candidate(id=sid, status="rejected", reason=exc.reason, source=source)
                return HermesError(Code.LINEAGE_REJECTED, f"{clean_line(sid)}: {exc.reason}")
            self._ignored(source, exc.reason)
            return None
        except BoundReached:
            self.bound_hit = True
            if explicit:
                self.candidate = Candidate(id=sid, status="rejected", reason="bound_reached", source=source)
            return None
        except HermesError as exc:
            # A proposal naming a session the dashboard cannot show (404, a malformed detail)
            # only did not pan out. An explicit --tip that cannot be read hides nothing
            # verified: it is `unavailable`, and its failure is reported after the rows.
            if explicit:
                self.candidate = Candidate(id=sid, status="unavailable", reason=exc.code.value, source=source)
                return exc
            if not (exc.code in HINT_IGNORABLE or (source == "store" and exc.code is Code.PROFILE_MISMATCH)):
                raise
            self._ignored(source, exc.code.value)
            return None
        try:
            self.path = combine(self.path, proof.path)
        except ForkAmbiguous as exc:
            common = [a for a, b in zip(exc.first, exc.second, strict=False) if a == b]
            self.path = tuple(common) or (self.anchor_id,)
            self.candidate = Candidate(id=sid, status="rejected", reason="fork_ambiguous", source=source)
            return HermesError(
                Code.FORK_AMBIGUOUS, f"{clean_line(exc.first[-1])} and {clean_line(exc.second[-1])}"
            )
        self.notes.update(proof.notes)
        newer_store = source == "store" and self.candidate.source == "store"
        if explicit or self.candidate.status == "none" or newer_store:
            reason = None if explicit else source
            self.candidate = Candidate(id=sid, status="proven", reason=reason, source=source)
        return None

    def _ignored(self, source: Source, reason: str) -> None:
        if source == "store" and self.store is not None:
            self.store.say(f"store: continuation candidate ignored ({reason})")

    def _discover(self, reader: DetailReader) -> HermesError | None:
        failure: HermesError | None = None
        waiting: list[str] = []
        while self.pending:
            sid = self.pending.pop(0)
            outcome = self._adopt(reader, sid, source="tip_option")
            if outcome is not None and outcome.retryable:
                # Not readable yet (404: not flushed, a network error): queued for the next
                # refresh; a candidate leaves the queue only with a proof outcome.
                waiting.append(sid)
            failure = outcome or failure
            if failure is not None and failure.code is Code.FORK_AMBIGUOUS:
                self.pending[:0] = waiting
                return failure
        self.pending[:0] = waiting
        for _ in range(MAX_HINT_HOPS if self.hint else 0):
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
            fork = self._adopt(reader, hint.session_id, source="latest_descendant")
            if fork is None and self.path == before:
                fork = self._hint_path(reader, hint)
            if fork is not None:
                return fork
            if self.path == before:
                break
        return self._from_store(reader) or failure

    def _hint_path(self, reader: DetailReader, hint: LatestDescendant) -> HermesError | None:
        """0.19's hint follows any child, so its answer may be a grandchild (a delegation of a
        newer segment) that fails the proof. Then the segments of its `path` after the newest
        verified one are tried, newest first (at most `MAX_HINT_PATH`), each proven like any
        candidate; the first one proven ends the search. Nothing unproven is ever adopted."""
        tip = self.path[-1]
        after = hint.path[hint.path.index(tip) + 1 :] if tip in hint.path else hint.path
        tried = 0
        for sid in reversed(after):
            if sid == hint.session_id or sid in self.path or not is_valid_id(sid):
                continue
            if tried == MAX_HINT_PATH:
                break
            tried += 1
            before = self.path
            fork = self._adopt(reader, sid, source="latest_descendant")
            if fork is not None or self.path != before:
                return fork
        return None

    def _from_store(self, reader: DetailReader) -> HermesError | None:
        """Walk forward through the store's continuations of the newest verified segment."""
        if self.store is None:
            return None
        budget = MAX_STORE_CANDIDATES
        for _ in range(MAX_PATH_NODES):
            tip = reader(self.path[-1])
            if tip.end_reason != "compression":
                return None
            rows = self.store.children(tip.id)
            if rows is None:
                return None
            before = self.path
            for row in self._continuations(tip, rows)[:budget]:
                budget -= 1
                fork = self._adopt(reader, row.id, source="store")
                if fork is not None:
                    return fork
            if self.path == before or budget <= 0:
                return None
        return None

    def _continuations(self, tip: SessionDetail, rows: list[StoreSession]) -> list[StoreSession]:
        try:
            config = parse_model_config(tip) or {}
        except LineageRejected:
            return []
        markers = {m: config.get(m) for m in MARKERS}
        return [
            r
            for r in rows
            if r.id not in self.path
            and is_valid_id(r.id)
            and is_continuation(r, tip.id, markers)
            and same_profile(r, self.client.profile)
        ]

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
        return continues_parent(anchor, parent, rewrites_source=self._rewrites_source)

    def adopt_redirect(self, reader: DetailReader, sid: str) -> None:
        """Accept a messages answer for another session only as a proven newer segment of
        this branch (the path's new tip); anything else is an identity mismatch."""
        if not is_valid_id(sid):
            raise HermesError(Code.INCOMPATIBLE, "messages: invalid session_id")
        if reader(self.path[-1]).end_reason != "compression":
            reader.fresh(self.path[-1])  # it rotated since this cycle read it: prove on what is now
        try:
            proof = prove(reader(self.anchor_id), sid, reader, rewrites_source=self._rewrites_source)
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
