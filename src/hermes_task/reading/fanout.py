"""Independent reads run side by side, a bounded number at a time (one connection pool).

A one-shot command's reads of different sessions do not depend on each other: the proof of
each store-proposed child, each task's child state, each child conversation of a
`--recursive` tree; `follow --parent` probes and reads its children the same way. `gather`
runs such jobs on at most `MAX_IN_FLIGHT` worker threads through the one `httpx.Client` the
command opened (thread-safe; its pool holds the connections) and returns their results in
the jobs' order.

Why this is safe (docs/identity.md, "Reads side by side"):
- each job is one task's own sequence of reads (its proof, then what the proof allows), run
  in order inside the job: one request in flight per task, as the seed wants per polled task;
- a job's result is used only after every job has finished, in the jobs' order, by the
  caller's thread: what is shown (rows, tasks, warnings, debug summaries) is decided exactly
  as a sequential run would decide it, and in the same order;
- a job that raises is reported as the sequential run would have reported it: `gather`
  re-raises the first failure in job order, once every job has ended; jobs that handle
  their own failures (a child that cannot be read is a `gap`) return them as values;
- Ctrl-C and SIGTERM reach the caller's thread: jobs not started are cancelled, and the
  interrupt ends the command as before (a read in flight ends within `--request-timeout`).

`--debug` says how many jobs ran, the limit, and the most that were in flight at once.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")

MAX_IN_FLIGHT = 8


class _Peak:
    """How many jobs run at once, and the most seen."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = 0
        self.most = 0

    def wrap(self, job: Callable[[], T]) -> Callable[[], T]:
        def run() -> T:
            with self.lock:
                self.now += 1
                self.most = max(self.most, self.now)
            try:
                return job()
            finally:
                with self.lock:
                    self.now -= 1

        return run


def gather(
    jobs: Sequence[Callable[[], T]],
    *,
    what: str,
    limit: int = MAX_IN_FLIGHT,
    debug: Callable[[str], None] | None = None,
) -> list[T]:
    """Run `jobs` with at most `limit` at once; their results in job order. The first
    exception in job order is raised once every started job has ended. One job (or a
    `limit` of 1) runs on the caller's thread."""
    if not jobs:
        return []
    workers = max(1, min(limit, len(jobs)))
    started = time.perf_counter()
    peak = _Peak()
    if debug is not None:
        debug(f"fan-out {what}: {len(jobs)} jobs, at most {workers} in flight")
    if workers == 1:
        results = [peak.wrap(job)() for job in jobs]
    else:
        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="hermes-task-read")
        futures: list[Future[T]] = []
        try:
            futures = [pool.submit(peak.wrap(job)) for job in jobs]
            for future in futures:
                future.exception()  # wait for every job, whatever it raised
        except BaseException:  # Ctrl-C, SIGTERM: nothing new starts; the interrupt goes on
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
        results = [future.result() for future in futures]  # the first failure, in job order
    if debug is not None:
        ms = (time.perf_counter() - started) * 1000
        debug(f"fan-out {what}: {len(jobs)} jobs done in {ms:.0f}ms, {peak.most} in flight at most")
    return results


__all__ = ["MAX_IN_FLIGHT", "gather"]
