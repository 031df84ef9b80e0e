"""`Clock`: a fake clock and sleep for the CLI's polling loops (watch, follow --parent), handed to
a run through its injected `Environment`. The unit tests get one as the `clock` fixture
(tests/unit/conftest.py); tests/unit/test_poll.py has the reading loops' own, step-driven one."""

from __future__ import annotations

from collections.abc import Callable


class Clock:
    """Time starts at 1000.0 and moves only when slept. `sleeps` records every sleep (rounded
    to the millisecond); `hooks[n]` runs once, right after the n-th sleep (1-based)."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []
        self.hooks: dict[int, Callable[[], None]] = {}

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(round(seconds, 3))
        self.now += seconds
        hook = self.hooks.pop(len(self.sleeps), None)
        if hook is not None:
            hook()
