"""What the follow and watch loops share: one reader, the pacing (clock, sleep, jitter) they
are given, the back-off after a transient failure, and their `--debug` notes.

Invariant: the wait before a retry is never shorter than one `interval`; beyond that it grows
from `backoff_base` by doubling up to `backoff_cap`, scaled by a jitter factor in [0.5, 1).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import ClassVar, Generic, Protocol, TypeVar

from hermes_task.reading.reader import TaskReader


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

    def _note(self, line: str) -> None:
        if self.debug is not None:
            self.debug(f"{self.label} {line}")
