"""Exact-id detail reads: per fetch (cached, bounded) and per run (shared).

`DetailReader` is what the lineage proof and `TaskReader` read details through: each id is
read at most once per fetch (a cache), and at most `budget` reads happen in one fetch; the
next raises `BoundReached` (reported as the `bound_reached` warning, never as a failure).

`SharedDetails` is the detail cache of one run of a one-shot command (`recover`), or of one
cycle of a watch (cleared as each cycle starts): every reader of that run takes a detail
another one already read instead of asking again, so a session's detail is requested once
(the ownership proof of a store-proposed child, its state check and the reading of its
conversation share one read). Only the fresh read a page is checked with (`fresh`: detail,
page, fresh detail, the seed's rule) asks again, and it replaces the held answer. Readers on
several threads (`reading/fanout.py`) asking the same id wait for one request.
"""

from __future__ import annotations

import threading

from hermes_task.core.lineage import BoundReached
from hermes_task.core.wire import SessionDetail
from hermes_task.reading.api import DashboardAPI

MAX_DETAIL_READS = 100


class SharedDetails:
    """Details read in this run (or cycle): thread-safe; a failure is never held."""

    def __init__(self, client: DashboardAPI) -> None:
        self.client = client
        self.held: dict[str, SessionDetail] = {}
        self.requests = 0
        self._lock = threading.Lock()
        self._reading: dict[str, threading.Lock] = {}

    def peek(self, sid: str) -> SessionDetail | None:
        return self.held.get(sid)

    def __call__(self, sid: str) -> SessionDetail:
        """The held detail of `sid`, else one request (others asking meanwhile wait for it)."""
        found = self.held.get(sid)
        if found is not None:
            return found
        with self._lock:
            gate = self._reading.setdefault(sid, threading.Lock())
        with gate:
            found = self.held.get(sid)
            return found if found is not None else self.fresh(sid)

    def fresh(self, sid: str) -> SessionDetail:
        """Read `sid` again and hold the new answer."""
        detail = self.client.detail(sid)
        with self._lock:
            self.requests += 1
            self.held[sid] = detail
        return detail

    def clear(self) -> None:
        """Forget every answer (a watch's next cycle must see what changed)."""
        with self._lock:
            self.held.clear()


class DetailReader:
    """Exact-id detail reads for one fetch: cached, and bounded to `budget` reads. With
    `shared`, a detail this run already read is taken from it (no request, not counted)."""

    def __init__(
        self, client: DashboardAPI, budget: int = MAX_DETAIL_READS, shared: SharedDetails | None = None
    ) -> None:
        self.client = client
        self.budget = budget
        self.shared = shared
        self.reads = 0
        self.cache: dict[str, SessionDetail] = {}

    def __call__(self, sid: str) -> SessionDetail:
        if sid not in self.cache:
            held = self.shared.peek(sid) if self.shared is not None else None
            if held is not None:
                self.cache[sid] = held
            else:
                self._count()
                self.cache[sid] = self.shared(sid) if self.shared is not None else self.client.detail(sid)
        return self.cache[sid]

    def fresh(self, sid: str) -> SessionDetail:
        self._count()
        detail = self.shared.fresh(sid) if self.shared is not None else self.client.detail(sid)
        self.cache[sid] = detail
        return detail

    def seed(self, detail: SessionDetail) -> None:
        """A detail read just before this fetch (`follow --parent`'s change probe): used as
        this fetch's read of that session, and counted as one."""
        self._count()
        self.cache[detail.id] = detail

    def _count(self) -> None:
        if self.reads >= self.budget:
            raise BoundReached(f"more than {self.budget} detail reads in one fetch")
        self.reads += 1
