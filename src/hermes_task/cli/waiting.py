"""Waiting between reads that also watches stdout (`follow`, `follow --parent`, `recover --watch`).

Invariant: the sleep returns after `seconds`, or raises BrokenPipeError as soon as stdout's
reader has gone, even while nothing is printed, so a closed pipe ends a poll loop quietly.
"""

from __future__ import annotations

import math
import select
import time
from collections.abc import Callable
from typing import Any


def idle_sleep(stream: Any) -> Callable[[float], None]:
    """A sleep that returns early with BrokenPipeError once `stream`'s reader has gone (poll
    reports POLLERR/POLLHUP on the write end of a closed pipe); plain sleep otherwise."""
    try:
        fd = stream.fileno()
        poller = select.poll()
    except (AttributeError, OSError, ValueError):
        return time.sleep
    poller.register(fd, 0)  # no events asked: only POLLERR, POLLHUP and POLLNVAL come back
    gone = select.POLLERR | select.POLLHUP | select.POLLNVAL

    def sleep(seconds: float) -> None:
        deadline = time.monotonic() + max(0.0, seconds)
        while True:
            left = deadline - time.monotonic()
            if any(ev & gone for _fd, ev in poller.poll(max(0, math.ceil(left * 1000)))):
                raise BrokenPipeError("stdout was closed")
            if time.monotonic() >= deadline:
                return

    return sleep
