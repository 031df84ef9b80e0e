"""The proven lineage of one task (`LineageProof`) and of one delegated child (`ChildProof`), by
docs/identity.md, "Lineage and segments". Invariant: `path` only holds segments proven back to the
anchor on one branch, over exact-id, profile-checked detail reads, before any row of them is read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import KW_ONLY, InitVar, dataclass
from typing import Literal

from msgspec.structs import replace

from hermes_task.core.capabilities import Capabilities
from hermes_task.core.documents import Candidate, Usage, lineage_usage
from hermes_task.core.lineage import (
    LEGACY_SOURCE_REWRITE,
    MARKERS,
    MAX_PATH_NODES,
    BoundReached,
    ForkAmbiguous,
    LineageRejected,
    Proof,
    combine,
    continues_parent,
    is_continuation,
    names_direct_parent,
    parse_model_config,
    prove,
    same_profile,
)
from hermes_task.core.sanitize import clean_line, is_valid_id
from hermes_task.core.wire import LatestDescendant, MessagesPage, SessionDetail, WireMessage
from hermes_task.failures import DESCENDANT_IGNORABLE, HINT_IGNORABLE, Code, HermesError
from hermes_task.reading.api import DashboardAPI, DetailReader, SharedDetails
from hermes_task.reading.hints import StoreHints, owned_by

Source = Literal["tip_option", "latest_descendant", "store"]
MAX_HINT_PATH = 8
MAX_STORE_CANDIDATES = 100


@dataclass(eq=False)
class LineageProof:
    """The proven lineage of one task, its queue of untrusted candidates, and their sources."""

    client: DashboardAPI
    anchor_id: str
    _: KW_ONLY
    tips: InitVar[Sequence[str]] = ()
    hint: bool = True
    store: StoreHints | None = None

    def __post_init__(self, tips: Sequence[str]) -> None:
        self.pending = list(dict.fromkeys(t for t in tips if t != self.anchor_id))
        self.path: tuple[str, ...] = (self.anchor_id,)
        self.caps = Capabilities()
        self.candidate = Candidate()
        self.notes: set[str] = set()
        self.bound_hit = False
        self.oldest: MessagesPage | None = None  # the anchor's oldest row, once read
        self.settled: set[str] = set()  # every source asked, and a successor proven
        self.hinted: set[str] = set()  # on the path of a hint answer that was proven
        # children of hops accepted under an assumed source-rewrite rule (`_rewrites_source`)
        self.assumed: set[str] = set()
        self._assuming: list[str] = []
        self.withdrawn: HermesError | None = None  # a --tip withdrawn by `rule_holds`

    def oldest_first(self) -> bool:
        """Do the backend's offsets count from the oldest row (`order` not honoured)?"""
        if self.caps.order is None:
            probe = self.client.messages(self.anchor_id, offset=0, limit=1)
            self.caps.learn(probe)
            if not probe.ordered:  # `order` ignored: offset 0 is the anchor's oldest row
                self.oldest = probe
        return not self.caps.order

    def _rewrites_source(self, child: SessionDetail) -> bool:
        """Does this backend's rotation turn `tool` into `subagent`? Assumed for a child other than
        the anchor until `rule_holds` decides it."""
        known = self.caps.source_rewrite
        if known is not None:
            return known
        if child.id != self.anchor_id:
            self._assuming.append(child.id)
            return True
        self._first_row_shows(child.id)
        return self.caps.ancestors_merged is False

    def _first_row_shows(self, sid: str) -> None:
        """Learn whether the backend merges ancestors from the proven segment `sid`'s oldest row."""
        page = self.client.messages(sid, offset=0, limit=1, order="oldest")
        self.caps.learn(page)
        if page.session_id == sid and page.messages and self.caps.ancestors_merged is None:
            self.caps.ancestors_merged = False

    def _prove(self, reader: DetailReader, sid: str) -> tuple[Proof, list[str]]:
        """`prove` from the verified path, and the hop children it assumed the rule for."""
        self._assuming = []
        proof = prove(
            reader(self.anchor_id), sid, reader, rewrites_source=self._rewrites_source, verified=self.path
        )
        return proof, self._assuming

    def truncate(self, path: tuple[str, ...]) -> None:
        """Keep only `path` (a prefix of the proven path); its newest segment is asked again."""
        self.path = path
        self.settled &= set(path[:-1])
        self.hinted &= set(path[:-1])
        self.assumed &= set(path)

    def rule_holds(self, tip: SessionDetail, rows: Sequence[WireMessage], *, exhausted: bool) -> bool:
        """Decide the source-rewrite rule a proof assumed from the tip's newest page `rows`, else
        one oldest-first row of the first segment adopted on it; refuted, the path is cut (False)."""
        if not self.assumed:
            return True
        own = bool(rows) and all(m.session_id == tip.id for m in rows)
        continuation = tip.id != self.anchor_id and tip.source != "tool"
        if self.caps.ancestors_merged is None and own and exhausted and continuation:
            self.caps.ancestors_merged = False
        first = next((s for s in self.path if s in self.assumed), None)
        if self.caps.ancestors_merged is None and first is not None:
            self._first_row_shows(first)
        if self.caps.ancestors_merged is not True:  # confirmed, or still not shown: it stands
            if self.caps.ancestors_merged is False:
                self.assumed.clear()
            return True
        cut = min((self.path.index(s) for s in self.assumed if s in self.path), default=len(self.path))
        dropped = self.path[cut:]
        self.assumed.clear()
        self.notes.discard(LEGACY_SOURCE_REWRITE)
        if not dropped:
            return True
        self.truncate(self.path[:cut])
        if self.candidate.id in dropped:
            explicit = self.candidate.source == "tip_option"
            self.candidate = replace(self.candidate, status="rejected", reason="source_changed")
            if explicit and self.candidate.id is not None:
                self.withdrawn = HermesError(
                    Code.LINEAGE_REJECTED, f"{clean_line(self.candidate.id)}: source_changed"
                )
        return False

    def _adopt(self, reader: DetailReader, sid: str, *, source: Source) -> HermesError | None:
        explicit = source == "tip_option"
        reader(self.anchor_id)  # the anchor's own failure is the task's, not the tip's
        try:
            proof, assuming = self._prove(reader, sid)
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
            # An explicit --tip that cannot be read is `unavailable`, reported after the rows.
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
            self.truncate(tuple(common) or (self.anchor_id,))
            self.candidate = Candidate(id=sid, status="rejected", reason="fork_ambiguous", source=source)
            return HermesError(
                Code.FORK_AMBIGUOUS, f"{clean_line(exc.first[-1])} and {clean_line(exc.second[-1])}"
            )
        self.notes.update(proof.notes)
        self.assumed.update(assuming)
        if explicit or self.candidate.status == "none" or source == self.candidate.source:
            reason = None if explicit else source
            self.candidate = Candidate(id=sid, status="proven", reason=reason, source=source)
        return None

    def _ignored(self, source: Source, reason: str) -> None:
        if source == "store" and self.store is not None:
            self.store.say(f"store: continuation candidate ignored ({reason})")

    def anchor_continues(self, reader: DetailReader, anchor: SessionDetail) -> bool | None:
        """Does the anchor continue an earlier segment (a cold open)? None: the budget ran out."""
        parent_id = anchor.parent_session_id
        if parent_id is None or names_direct_parent(anchor) or not is_valid_id(parent_id):
            return False
        try:
            parent = reader(parent_id)
        except BoundReached:
            self.bound_hit = True
            return None
        except HermesError as exc:
            if exc.code is not Code.NOT_FOUND:
                raise
            return False
        return continues_parent(anchor, parent, rewrites_source=self._rewrites_source)

    def adopt_redirect(self, reader: DetailReader, sid: str) -> None:
        """Accept an answer for another session only as a proven newer segment of this branch."""
        if not is_valid_id(sid):
            raise HermesError(Code.INCOMPATIBLE, "messages: invalid session_id")
        if reader(self.path[-1]).end_reason != "compression":
            reader.fresh(self.path[-1])  # it rotated since this cycle read it: prove on what is now
        try:
            proof, assuming = self._prove(reader, sid)
            path = combine(self.path, proof.path)
        except (LineageRejected, ForkAmbiguous):
            raise HermesError(
                Code.IDENTITY_MISMATCH, f"messages answered for {clean_line(sid)}, not proven on this task"
            ) from None
        except BoundReached:
            self.bound_hit = True
            raise
        if path[-1] != sid:
            raise HermesError(
                Code.IDENTITY_MISMATCH, f"messages answered for an earlier segment {clean_line(sid)}"
            )
        self.path = path
        self.notes.update(proof.notes)
        self.assumed.update(assuming)

    def discover(self, reader: DetailReader) -> HermesError | None:
        failure: HermesError | None = None
        waiting: list[str] = []
        while self.pending:
            sid = self.pending.pop(0)
            outcome = self._adopt(reader, sid, source="tip_option")
            if outcome is not None and outcome.retryable:  # not readable yet: asked next refresh
                waiting.append(sid)
            failure = outcome or failure
            if failure is not None and failure.code is Code.FORK_AMBIGUOUS:
                self.pending[:0] = waiting
                return failure
        self.pending[:0] = waiting
        return self.settle(reader) or failure

    def settle(self, reader: DetailReader) -> HermesError | None:
        """Ask the hint and the store about each unsettled segment that ended by compression."""
        hints = [self.hint]  # turned off for this refresh when the route does not answer
        budget = [MAX_STORE_CANDIDATES]
        while True:
            sid = next((s for s in self.path if s not in self.settled), None)
            if sid is None or reader(sid).end_reason != "compression":
                return None
            fork = self._ask_hint(reader, sid, hints) or self._ask_store(reader, sid, budget)
            if fork is not None:
                return fork
            if sid == self.path[-1]:
                return None  # nothing newer yet: asked again on the next refresh
            self.settled.add(sid)

    def _ask_hint(self, reader: DetailReader, sid: str, live: list[bool]) -> HermesError | None:
        if not live[0] or sid in self.hinted:
            return None
        try:
            hint = self.client.latest_descendant(sid)
        except HermesError as exc:
            if exc.code in DESCENDANT_IGNORABLE:
                live[0] = False
                return None
            raise
        answer = hint.session_id
        if answer == sid and sid != self.path[-1]:
            # No continuation of a segment that has one: the hint does not follow this chain.
            self.hinted.update(self.path)
            return None
        if answer == sid or not is_valid_id(answer):
            return None
        fork = None if answer in self.path else self._hint_path(reader, hint, sid)
        if fork is None and answer in self.path and answer in hint.path:
            self.hinted.update(hint.path[: hint.path.index(answer)])  # asking again says the same
        return fork

    def _hint_path(self, reader: DetailReader, hint: LatestDescendant, asked: str) -> HermesError | None:
        """Prove the hint's answer, else its `path`'s segments after the newest verified one."""
        answer, path = hint.session_id, list(hint.path)
        tried: set[str] = set()
        for _ in range(MAX_HINT_PATH):
            start = next((s for s in reversed(self.path) if s in path), asked)
            after = path[path.index(start) + 1 :] if start in path else path
            reach = after[: MAX_PATH_NODES - 1]
            order = ([answer] if answer not in path or answer in reach else []) + list(reversed(reach))
            pick = next((s for s in order if s not in self.path and s not in tried and is_valid_id(s)), None)
            if pick is None:
                return None
            tried.add(pick)
            fork = self._adopt(reader, pick, source="latest_descendant")
            if fork is not None or answer in self.path:
                return fork
        return None

    def _ask_store(self, reader: DetailReader, sid: str, budget: list[int]) -> HermesError | None:
        if self.store is None:
            return None
        rows = self.store.children(sid)
        if rows is None:
            return None
        tip = reader(sid)
        try:
            config = parse_model_config(tip) or {}
        except LineageRejected:
            return None
        markers = {m: config.get(m) for m in MARKERS}
        proposals = [
            r
            for r in rows
            if r.id not in self.path
            and is_valid_id(r.id)
            and is_continuation(r, tip.id, markers)
            and same_profile(r, self.client.profile)
        ]
        if len(proposals) > budget[0]:
            self.bound_hit = True
        for row in proposals[: budget[0]]:
            budget[0] -= 1
            fork = self._adopt(reader, row.id, source="store")
            if fork is not None:
                return fork
        return None


ChildState = Literal["running", "ended", "unknown"]


def state_of(tip: SessionDetail) -> ChildState:
    """The state of a child's newest proven segment."""
    if tip.end_reason == "compression":
        return "unknown"
    if tip.ended_at is None and tip.end_reason is None:
        return "running"
    return "ended"


class ChildProof(LineageProof):
    """One child's proven lineage and what the last check found, kept across checks."""

    def __init__(
        self, client: DashboardAPI, child_id: str, store: StoreHints, shared: SharedDetails | None = None
    ) -> None:
        super().__init__(client, child_id, store=store)
        self.shared = shared
        self.owned: bool | None = None
        self.state: ChildState | None = None
        self.details: dict[str, SessionDetail] = {}
        self.usage: Usage | None = None  # None until a check proved the child the task's

    def check(self, segments: frozenset[str]) -> ChildState | None:
        """Prove the lineage, read its state and sum its usage; None: not proven the task's."""
        reader = DetailReader(self.client, shared=self.shared)
        try:
            if self.owned is None:
                self.owned = owned_by(reader(self.anchor_id), segments)
            if not self.owned:
                return None
            fork = self.discover(reader) is not None  # two proven continuations: no tip to read
            state = "unknown" if fork else state_of(reader(self.path[-1]))
        except BoundReached:
            state = "unknown"
        self.details.update(reader.cache)
        later = state == "unknown" or self.path[-1] not in self.details
        self.usage = lineage_usage(self.path, self.details, later=later)
        return state
