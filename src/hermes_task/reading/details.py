"""Exact-id detail reads for one read cycle: cached, and bounded.

`DetailReader` is what the lineage proof and `TaskReader` read details through: each id is
read at most once per cycle (a cache), and at most `budget` reads happen in one cycle; the
next raises `BoundReached` (reported as the `bound_reached` warning, never as a failure).
"""

from __future__ import annotations

from hermes_task.core.lineage import BoundReached
from hermes_task.dashboard.wire import SessionDetail
from hermes_task.reading.api import DashboardAPI

MAX_DETAIL_READS = 100


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
