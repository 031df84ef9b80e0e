"""One delegated child, proven to its newest segment from exact-id details: its state and usage.

`ChildProof` is what `recover` and `recover --watch` know of a task's child without reading
its rows (`reading/unreported.py` keeps one per child for the run). A check proves, in order:

- ownership, once: the root's detail must be a delegated child of one of the segments that
  carry the task's spawn call (`parent_session_id` and `_delegate_from`, reading/ownership.py);
  a child that fails is never read again;
- the lineage to the newest segment as `show` proves it (the dashboard's hint and the store's
  continuations while the newest segment ended by compression, each proven; at most
  `MAX_DETAIL_READS` detail reads per check), then that segment's state: `running`, `ended`,
  or `unknown` (it ended by compression with nothing newer proven, two continuations, a
  bound);
- the usage of the proven lineage (`core/documents.py`) from the details the proof read: no
  detail is read for usage alone. Details are kept across checks: a later check reads only
  the segments its proof asks for again (the newest), so an earlier segment's figures are
  the ones read when it was proven (a segment that ended by compression takes no more calls).

`shared` (reading/details.py) serves any detail the run (or a watch's cycle) already read: the
root's detail the store's assignment read over HTTP (reading/hints.py) is not read again. A check touches only its own child: checks of different
children run side by side (reading/unreported.py). A check that fails raises `HermesError`; what earlier
checks proved is kept.
"""

from __future__ import annotations

from typing import Literal

from hermes_task.core.documents import Usage, lineage_usage
from hermes_task.core.lineage import BoundReached
from hermes_task.core.wire import SessionDetail
from hermes_task.reading.api import DashboardAPI
from hermes_task.reading.details import DetailReader, SharedDetails
from hermes_task.reading.discovery import LineageProof
from hermes_task.reading.hints import StoreHints
from hermes_task.reading.ownership import owned_by

ChildState = Literal["running", "ended", "unknown"]


def state_of(tip: SessionDetail) -> ChildState:
    """The state of a child's newest proven segment (as `show`'s `task.state`)."""
    if tip.end_reason == "compression":
        return "unknown"
    if tip.ended_at is None and tip.end_reason is None:
        return "running"
    return "ended"


class ChildProof(LineageProof):
    """One child's proven lineage and what the last check found, kept across checks."""

    def __init__(
        self,
        client: DashboardAPI,
        child_id: str,
        store: StoreHints,
        shared: SharedDetails | None = None,
    ) -> None:
        super().__init__(client, child_id, hint=True, store=store)
        self.shared = shared  # the run's (or a watch cycle's) details: none is read twice
        self.owned: bool | None = None
        self.state: ChildState | None = None
        self.details: dict[str, SessionDetail] = {}
        self.usage: Usage | None = None  # None until a check proved the child the task's

    def check(self, segments: frozenset[str]) -> ChildState | None:
        """Prove the lineage to the newest segment, read its state and sum its usage; None
        when the child is not proven the task's. Failures raise `HermesError`."""
        reader = DetailReader(self.client, shared=self.shared)
        try:
            if self.owned is None:
                self.owned = owned_by(reader(self.anchor_id), segments)
            if not self.owned:
                return None
            fork = self._discover(reader) is not None  # two proven continuations: no tip to read
            state = "unknown" if fork else state_of(reader(self.path[-1]))
        except BoundReached:
            state = "unknown"
        self.details.update(reader.cache)
        later = state == "unknown" or self.path[-1] not in self.details
        self.usage = lineage_usage(self.path, self.details, later=later)
        return state


__all__ = ["ChildProof", "ChildState", "state_of"]
