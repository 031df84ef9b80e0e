"""Where the candidates for newer segments come from (the discovery half of `TaskReader`).

Sources: `--tip` (explicit: a failure is reported), the dashboard's `/latest-descendant`
hint and the local store's compression continuations (proposals: a failure is ignored). Each
candidate is proven by `reading/proof.py` before anything of it is used.

Forks are never resolved by recency: every source is asked about every segment of the path
that ended by compression (`_settle`), whichever source proved its successor first, and two
proven continuations of one segment are `fork_ambiguous`. A segment is asked once it has a
proven successor (`settled`); the newest one is asked again on every refresh while it stays
compressed with nothing newer proven. The hint alone, with no sibling evidence, stays usable.
The store's candidates are bounded (`MAX_STORE_CANDIDATES` per refresh). `task.candidate.source`
says who proposed the adopted candidate.
"""

from __future__ import annotations

from hermes_task.core.lineage import (
    MARKERS,
    MAX_PATH_NODES,
    LineageRejected,
    StoreSession,
    is_continuation,
    parse_model_config,
    same_profile,
)
from hermes_task.core.sanitize import is_valid_id
from hermes_task.core.wire import LatestDescendant, SessionDetail
from hermes_task.failures import DESCENDANT_IGNORABLE, Code, HermesError
from hermes_task.reading.details import DetailReader
from hermes_task.reading.proof import ProvenPath

MAX_HINT_PATH = 8
MAX_STORE_CANDIDATES = 100


class LineageProof(ProvenPath):
    """The proven lineage of one task, and every source of candidates asked about it."""

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
        return self._settle(reader) or failure

    def _settle(self, reader: DetailReader) -> HermesError | None:
        """Ask the hint and the store about each segment of the path that ended by
        compression and is not settled yet, oldest first: a proposal that extends the path
        is adopted, one that proves on another branch is a fork."""
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
            # It names no continuation of a segment that has a proven one: this backend's hint
            # does not follow this chain (iot: delegated and `tool` chains), so asking it
            # about the later segments would say the same.
            self.hinted.update(self.path)
            return None
        if answer == sid or not is_valid_id(answer):
            return None
        fork = None if answer in self.path else self._hint_path(reader, hint, sid)
        if fork is None and answer in self.path and answer in hint.path:
            self.hinted.update(hint.path[: hint.path.index(answer)])  # asking again says the same
        return fork

    def _hint_path(self, reader: DetailReader, hint: LatestDescendant, asked: str) -> HermesError | None:
        """Prove the hint's answer, or the segments its `path` names after the newest
        verified one (0.19's hint follows any child, so the answer may be a grandchild that
        fails the proof), newest first within one proof walk of the verified path, at most
        `MAX_HINT_PATH` of them; each one proven brings the answer closer, so it is tried
        again from there. Nothing unproven is ever adopted."""
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
        """The store's compression continuations of segment `sid`, each proven like a tip."""
        if self.store is None:
            return None
        rows = self.store.children(sid)
        if rows is None:
            return None
        proposals = self._continuations(reader(sid), rows)
        if len(proposals) > budget[0]:
            self.bound_hit = True
        for row in proposals[: budget[0]]:
            budget[0] -= 1
            fork = self._adopt(reader, row.id, source="store")
            if fork is not None:
                return fork
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
