"""The one poll loop of every live command: `follow CHILD`, `recover --watch`, `follow --parent`
(and the TUI, which runs `follow --parent`'s loop). Pure of typer and rich: clock, sleep and
jitter are parameters, so every timing decision is testable with a fake clock.

`PollLoop.run()` repeats one cycle (`cycle()`: the subclass's reads) and owns every rule of
pacing, failure and ending, written once (issue 35):

- a cycle every `interval` seconds from the cycle's start; one request flight at a time on
  the loop's own reader;
- a transient failure (404, network, timeout, 5xx, 429: each already retried once by the
  client) starts or extends a streak, reported once per streak (every retry of a final read);
  the wait after it is every interval for a 404, else backed off from `backoff_base` by
  doubling up to `backoff_cap`, scaled by a jitter factor in [0.5, 1), never shorter than one
  `interval`; any other failure is final;
- `--start-timeout` has one meaning everywhere: a loop none of whose reads succeeded yet, or a
  streak of 404s, ends after `start_timeout` seconds with that failure's own code (a typo or a
  dashboard that is down never waits out `--timeout`, nor forever without one);
- a final read (`settle()` asked for one: the task seen ended) that keeps failing ends the
  loop `final_read_failed` after `final_retries` retries;
- `--timeout` bounds the whole run (one read always happens). Exit 9 ("still running") only
  when the last read succeeded; when every read since the last success failed, the last
  failure's code and the age of the last successful read (`last_read_age`);
- Ctrl-C, SIGTERM and SIGHUP (`Interrupted`) end the loop `interrupted`; the result is
  reported exactly once, last, whatever the ending.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import ClassVar, Literal

from msgspec import Struct, field

from hermes_task.core.documents import TaskState
from hermes_task.core.projection import RowFilter
from hermes_task.failures import Code, HermesError, interrupt_status
from hermes_task.reading.reader import TaskReader

FINAL_RETRIES = 3
START_TIMEOUT = 60.0
BACKOFF_BASE = 2.0
BACKOFF_CAP = 30.0

Ending = Literal["ended", "partial_history", "timeout", "failed", "interrupted"]


class PollConfig(Struct, frozen=True):
    """Timing and exit policy of one live run (`follow`, `recover --watch`, `follow --parent`)."""

    interval: float = 2.0
    timeout: float | None = None
    start_timeout: float = START_TIMEOUT
    exit_status: bool = False
    final_retries: int = FINAL_RETRIES
    backoff_base: float = BACKOFF_BASE
    backoff_cap: float = BACKOFF_CAP
    rows: RowFilter = field(default_factory=RowFilter)  # --role; --tail: of the rows at the first read


class Outcome(Struct, frozen=True):
    """How a live run ended: the `result` event's fields, plus the failure if any."""

    ending: Ending
    state: TaskState
    end_reason: str | None
    exit_code: int
    failure: HermesError | None = None
    last_read_age: float | None = None  # seconds since the last successful read, on a failure


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


class PollLoop:
    """The loop (module doc) over one `TaskReader`; subclasses give the cycle and the endings."""

    label: ClassVar[str]  # the first word of each --debug line

    def __init__(
        self,
        reader: TaskReader,
        config: PollConfig,
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
        self.read_at: float | None = None  # when the last successful read ended

    # -- what a subclass gives ---------------------------------------------------------------

    def cycle(self) -> HermesError | None:
        """One cycle's reads. Raises `HermesError` when a read failed; returns a failure that
        still delivered what was verified (`follow`'s unreadable `--tip`), else None."""
        raise NotImplementedError

    def settle(self) -> Outcome | bool:
        """After a good cycle: the outcome that ends the run, True for a final read at once,
        False to wait for the next cycle."""
        raise NotImplementedError

    def finishing(self) -> bool:
        """Is the next read a final read (its failures counted against `final_retries`)?"""
        return False

    def unsettle(self) -> None:
        """A cycle delivered but failed part-way (an unreadable `--tip`): no ending yet."""

    def error(self, err: HermesError, *, retrying: bool, delay: float | None) -> None:
        raise NotImplementedError

    def failed(self, err: HermesError, age: float | None) -> Outcome:
        """The outcome of a final failure (its error already reported)."""
        raise NotImplementedError

    def timed_out(self) -> Outcome:
        """`--timeout` ran out after a successful read."""
        raise NotImplementedError

    def finish(self, outcome: Outcome) -> None:
        """Report the result (exactly once, last)."""
        raise NotImplementedError

    # -- the loop ----------------------------------------------------------------------------

    def run(self) -> Outcome:
        try:
            outcome = self._loop()
        except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM / SIGHUP as `Interrupted`
            outcome = Outcome("interrupted", "unknown", None, interrupt_status(exc))
            outcome = self.interrupted(outcome)
        self._note(f"stop {outcome.ending} exit={outcome.exit_code}")
        self.finish(outcome)
        return outcome

    def interrupted(self, outcome: Outcome) -> Outcome:
        """The outcome of an interrupted run (a follow names the task's state)."""
        return outcome

    def _loop(self) -> Outcome:
        config = self.config
        opened = self.clock()
        deadline = None if config.timeout is None else opened + config.timeout
        streak = Streak()
        while True:
            started = self.clock()
            final = self.finishing()
            try:
                err, raised = self.cycle(), False
            except HermesError as exc:
                err, raised = exc, True
            if err is None:
                streak.clear()
                self.read_at = self.clock()
                step = self.settle()
                if isinstance(step, Outcome):
                    return step
                if step:
                    self._note("final read")
                    continue  # at once, whatever the deadline: one bounded read
                wait = max(0.0, started + config.interval - self.clock())
            else:
                if not err.retryable:
                    return self.fail(err)
                streak.count(err, started)
                ends = self._ends(streak, err, opened, final=raised and final)
                if ends is not None:
                    return self.fail(ends)
                if not raised:
                    self.unsettle()
                wait = self._retry_wait(streak, err, opened)
            if self._wait(wait, deadline):
                return self._ran_out(streak.last)

    def _since(self, streak: Streak, opened: float) -> float | None:
        """When the streak that `--start-timeout` bounds began: the run's start while no read
        succeeded yet, else the current streak of 404s (None: no such streak)."""
        return opened if self.read_at is None else streak.missing_since

    def _ends(self, streak: Streak, err: HermesError, opened: float, *, final: bool) -> HermesError | None:
        """The failure that ends the run now: one that outlived `--start-timeout`, or a final
        read whose retries ran out; else None."""
        config = self.config
        since = self._since(streak, opened)
        if since is not None and self.clock() - since >= config.start_timeout:
            seconds = f"{config.start_timeout:g}s"
            if err.code is Code.NOT_FOUND:
                waited = f"still not found after --start-timeout {seconds}"
            else:
                waited = f"no read succeeded within --start-timeout {seconds}"
            detail = f"{err.detail}; {waited}" if err.detail else waited
            return HermesError(err.code, detail, retryable=False, status=err.status, hint=err.hint)
        if final and streak.failures > config.final_retries:
            return HermesError(Code.FINAL_READ_FAILED, err.code.value)
        return None

    def _retry_wait(self, streak: Streak, err: HermesError, opened: float) -> float:
        """After a failed read: the failure reported when it starts a streak (and on every
        retry of a final read), and the wait before the next read (every interval for a 404
        unless final, else backed off), never past `--start-timeout`."""
        config = self.config
        final = self.finishing()
        delay = None if not final and err.code is Code.NOT_FOUND else self._backoff(streak.failures)
        if final or err.code is not streak.code:
            self.error(err, retrying=True, delay=delay)
        streak.code = err.code
        wait = config.interval if delay is None else delay
        since = self._since(streak, opened)
        if since is not None:
            wait = min(wait, max(0.0, since + config.start_timeout - self.clock()))
        return wait

    def _ran_out(self, last: HermesError | None) -> Outcome:
        """`--timeout` ran out: after a failed read, that failure (a final read's:
        `final_read_failed`) with the age of the last successful read; else the subclass's."""
        if last is None:
            return self.timed_out()
        if self.finishing():  # the task ended, but its final read kept failing
            return self.fail(HermesError(Code.FINAL_READ_FAILED, "--timeout ran out"))
        ran_out = "every read failed until --timeout ran out"
        if self.read_at is not None:
            ran_out += f"; the last successful read was {self.clock() - self.read_at:.0f}s ago"
        detail = f"{last.detail}; {ran_out}" if last.detail else ran_out
        return self.fail(HermesError(last.code, detail, status=last.status, hint=last.hint))

    def fail(self, err: HermesError) -> Outcome:
        """A final failure: its error reported, then its outcome with the last read's age."""
        self.error(err, retrying=False, delay=None)
        age = None if self.read_at is None else round(self.clock() - self.read_at, 3)
        return self.failed(err, age)

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
