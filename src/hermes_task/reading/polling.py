"""What the follow and watch loops share: one reader, the pacing (clock, sleep, jitter) they
are given, the back-off after a transient failure, and their `--debug` notes.

Invariant: the wait before a retry is never shorter than one `interval`; beyond that it grows
from `backoff_base` by doubling up to `backoff_cap`, scaled by a jitter factor in [0.5, 1).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import ClassVar, Generic, Protocol, TypeVar

from hermes_task.failures import Code, HermesError
from hermes_task.reading.reader import TaskReader


class Streak:
    """The transient failures in a row: how many, the code whose streak is being reported
    (each streak is reported once), the latest read's failure (None after a good read), and
    when the current streak of 404s began (for `--start-timeout`)."""

    def __init__(self) -> None:
        self.failures = 0
        self.code: Code | None = None
        self.last: HermesError | None = None
        self.missing_since: float | None = None

    def clear(self) -> None:
        """A read succeeded: no streak."""
        self.failures, self.code, self.last, self.missing_since = 0, None, None, None

    def count(self, err: HermesError, started: float) -> None:
        """A read that began at `started` failed with the transient `err`."""
        self.last, self.failures = err, self.failures + 1
        if err.code is not Code.NOT_FOUND:
            self.missing_since = None
        elif self.missing_since is None:
            self.missing_since = started


class Timing(Protocol):
    """The part of a loop's config that paces it (`FollowConfig`, `WatchConfig`)."""

    @property
    def interval(self) -> float: ...
    @property
    def backoff_base(self) -> float: ...
    @property
    def backoff_cap(self) -> float: ...


ConfigT = TypeVar("ConfigT", bound=Timing)


class PollLoop(Generic[ConfigT]):
    """A loop over one `TaskReader`; subclasses add their reporter and state."""

    label: ClassVar[str]  # the first word of each --debug line

    def __init__(
        self,
        reader: TaskReader,
        config: ConfigT,
        *,
        clock: Callable[[], float],
        sleep: Callable[[float], None],
        jitter: Callable[[], float] = random.random,
        debug: Callable[[str], None] | None = None,
    ) -> None:
        self.reader = reader
        self.config = config
        self.clock = clock
        self.sleep = sleep
        self.jitter = jitter
        self.debug = debug

    def _backoff(self, failures: int) -> float:
        """The wait after the `failures`-th transient failure in a row."""
        config = self.config
        delay = min(config.backoff_cap, config.backoff_base * 2.0 ** (failures - 1))
        return max(config.interval, delay * (0.5 + 0.5 * self.jitter()))

    def _wait(self, wait: float, deadline: float | None) -> bool:
        """Sleep `wait` seconds, never past `deadline`; True when the deadline has passed."""
        if deadline is not None:
            wait = min(wait, max(0.0, deadline - self.clock()))
        self._note(f"wait {wait:.2f}s")
        self.sleep(wait)
        return deadline is not None and self.clock() >= deadline

    def _note(self, line: str) -> None:
        if self.debug is not None:
            self.debug(f"{self.label} {line}")
