"""What the reading stands on: the `DashboardAPI` protocol (the loops import no httpx), exact-id
detail reads and the fan-out (docs/identity.md, "Reads side by side"). Every method is a GET that
returns a validated wire object for the session asked (or the one the dashboard redirected to,
which callers check), or raises `HermesError`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from hermes_task.core.delegations import LedgerRecord
from hermes_task.core.lineage import BoundReached, StoreSession
from hermes_task.core.wire import PAGE_LIMIT, LatestDescendant, MessagesPage, SessionDetail


class DashboardAPI(Protocol):
    """The dashboard's read routes that the reading loops use."""

    @property
    def profile(self) -> str | None: ...  # the exact profile every response must name (None: default)

    def detail(self, sid: str) -> SessionDetail: ...  # GET /api/sessions/{sid}

    def messages(  # GET /api/sessions/{sid}/messages: one page of the transcript
        self, sid: str, *, offset: int = 0, limit: int = PAGE_LIMIT, order: str = "latest"
    ) -> MessagesPage: ...

    def latest_descendant(self, sid: str) -> LatestDescendant: ...  # a hint, never trusted

    def around(self, sid: str, row_id: int, *, limit: int = 120) -> MessagesPage: ...  # the rows around one


class StoreAPI(Protocol):
    """The local store's lookups, each may raise `StoreUnavailable`; proposals, never proof."""

    def children(self, session_id: str) -> list[StoreSession]: ...  # newest first, `MAX_CHILDREN` + 1

    def knows(self, session_id: str) -> bool: ...

    def first_user_text(self, session_id: str) -> str | None: ...  # the first `user` row's text

    def delegation(self, delegation_id: str) -> LedgerRecord | None: ...  # its `async_delegations` record

    def close(self) -> None: ...


MAX_DETAIL_READS = 100


@dataclass(eq=False)
class SharedDetails:
    """Details read in this run (or cycle): thread-safe; a failure is never held."""

    client: DashboardAPI
    held: dict[str, SessionDetail] = field(default_factory=dict, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)
    _reading: dict[str, threading.Lock] = field(default_factory=dict, init=False)

    def __call__(self, sid: str) -> SessionDetail:
        """The held detail of `sid`, else one request (threads asking meanwhile wait for it)."""
        found = self.held.get(sid)
        if found is not None:
            return found
        with self._lock:
            gate = self._reading.setdefault(sid, threading.Lock())
        with gate:
            return self.held.get(sid) or self.fresh(sid)

    def fresh(self, sid: str) -> SessionDetail:
        """Read `sid` again (the fresh read a page is checked with) and hold the new answer."""
        detail = self.client.detail(sid)
        with self._lock:
            self.held[sid] = detail
        return detail

    def clear(self) -> None:
        """Forget every answer (a watch's next cycle must see what changed)."""
        with self._lock:
            self.held.clear()


@dataclass(eq=False)
class DetailReader:
    """One fetch's details, each read once, at most `budget` reads (then `BoundReached`); with
    `shared`, a detail this run already read is taken from it (no request, not counted)."""

    client: DashboardAPI
    budget: int = MAX_DETAIL_READS
    shared: SharedDetails | None = None
    reads: int = field(default=0, init=False)
    cache: dict[str, SessionDetail] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        self.source = self.shared or SharedDetails(self.client)  # without `shared`: this fetch's own

    def __call__(self, sid: str) -> SessionDetail:
        if sid not in self.cache:
            if sid not in self.source.held:
                self.count()
            self.cache[sid] = self.source(sid)
        return self.cache[sid]

    def fresh(self, sid: str) -> SessionDetail:
        self.count()
        self.cache[sid] = self.source.fresh(sid)
        return self.cache[sid]

    def count(self) -> None:
        if self.reads >= self.budget:
            raise BoundReached(f"more than {self.budget} detail reads in one fetch")
        self.reads += 1


T = TypeVar("T")

MAX_IN_FLIGHT = 8


def gather(
    jobs: Sequence[Callable[[], T]],
    *,
    what: str,
    limit: int = MAX_IN_FLIGHT,
    debug: Callable[[str], None] | None = None,
) -> list[T]:
    """Run `jobs`, independent reads, at most `limit` at once; their results in job order, the first
    failure in job order raised once every job ended (one worker: on the caller's thread)."""
    if not jobs:
        return []
    workers = max(1, min(limit, len(jobs)))
    started = time.perf_counter()
    lock = threading.Lock()
    now = most = 0  # jobs running, and the most at once

    def run(job: Callable[[], T]) -> T:
        nonlocal now, most
        with lock:
            now += 1
            most = max(most, now)
        try:
            return job()
        finally:
            with lock:
                now -= 1

    if debug is not None:
        debug(f"fan-out {what}: {len(jobs)} jobs, at most {workers} in flight")
    if workers == 1:
        results = [run(job) for job in jobs]
    else:
        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="hermes-task-read")
        try:
            futures = [pool.submit(run, job) for job in jobs]
            for future in futures:
                future.exception()  # wait for every job, whatever it raised
        except BaseException:  # Ctrl-C, SIGTERM: nothing new starts; the interrupt goes on
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
        results = [future.result() for future in futures]  # the first failure, in job order
    if debug is not None:
        ms = (time.perf_counter() - started) * 1000
        debug(f"fan-out {what}: {len(jobs)} jobs done in {ms:.0f}ms, {most} in flight at most")
    return results
