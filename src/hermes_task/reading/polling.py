"""`PollLoop`, the one poll loop of every live command: every rule of pacing, failure and ending
once (docs/decisions.md entry 11; docs/commands.md, `follow`). `Follower`, one task followed: rows
reported after a good cycle; `config.rows` only chooses which rows are reported: a dropped one is seen.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import ClassVar, Literal, Protocol

import msgspec
from msgspec import Struct
from msgspec.structs import replace

from hermes_task.core.documents import Row, TaskInfo, TaskState, WarningItem, warning
from hermes_task.core.projection import RowFilter, project
from hermes_task.core.ui_strings import WarningCode
from hermes_task.core.window import RowKey
from hermes_task.core.wire import SessionDetail
from hermes_task.failures import Code, ExitStatus, HermesError, interrupt_status
from hermes_task.reading.reader import Snapshot, TaskReader

FINAL_RETRIES = 3
START_TIMEOUT = 60.0

Ending = Literal["ended", "partial_history", "timeout", "failed", "interrupted"]


class PollConfig(Struct, frozen=True):
    interval: float = 2.0
    timeout: float | None = None
    start_timeout: float = START_TIMEOUT
    exit_status: bool = False
    final_retries: int = FINAL_RETRIES
    backoff_base: float = 2.0
    backoff_cap: float = 30.0
    rows: RowFilter = msgspec.field(default_factory=RowFilter)  # --role; --tail: of the first read's rows


class Outcome(Struct, frozen=True):
    """How a live run ended: the `result` event's fields, plus the failure if any."""

    ending: Ending
    state: TaskState
    end_reason: str | None
    exit_code: int
    failure: HermesError | None = None
    last_read_age: float | None = None  # seconds since the last successful read, on a failure


@dataclass
class Streak:  # the transient failures in a row
    failures: int = 0
    code: Code | None = None  # the code of the streak being reported (each is reported once)
    last: HermesError | None = None  # the latest read's failure (None after a good read)
    missing_since: float | None = None  # when the current streak of 404s began (--start-timeout)

    def clear(self) -> None:
        self.failures, self.code, self.last, self.missing_since = 0, None, None, None

    def count(self, err: HermesError, started: float) -> None:
        self.last, self.failures = err, self.failures + 1
        if err.code is not Code.NOT_FOUND:
            self.missing_since = None
        elif self.missing_since is None:
            self.missing_since = started


class Reports(Protocol):
    def warning(self, item: WarningItem) -> None: ...
    def error(self, error: HermesError, *, retrying: bool, delay: float | None) -> None: ...


@dataclass(eq=False)
class PollLoop(ABC):
    """The loop over one `TaskReader`. A subclass gives `cycle` (raises, or returns a failure
    that still delivered what was verified), `settle` (the ending `Outcome`, True for a final
    read at once, False to wait), `timed_out` and `finish` (the result, once, last)."""

    label: ClassVar[str]  # the first word of each --debug line
    reader: TaskReader
    reporter: Reports
    config: PollConfig
    _: KW_ONLY
    clock: Callable[[], float]
    sleep: Callable[[float], None]
    jitter: Callable[[], float] = random.random
    debug: Callable[[str], None] | None = None
    read_at: float | None = field(default=None, init=False)  # when the last successful read ended
    warned: set[str] = field(default_factory=set, init=False)  # warning codes not to report again

    @abstractmethod
    def cycle(self) -> HermesError | None: ...
    @abstractmethod
    def settle(self) -> Outcome | bool: ...
    @abstractmethod
    def timed_out(self) -> Outcome: ...
    @abstractmethod
    def finish(self, outcome: Outcome) -> None: ...

    def finishing(self) -> bool:
        """Is the next read a final read (its failures counted against `final_retries`)?"""
        return False

    def unsettle(self) -> None:  # noqa: B027 (an optional hook: most loops keep no pending ending)
        """A cycle delivered but failed part-way: no ending yet."""

    def outcome(self, ending: Ending, code: int, failure: HermesError | None = None) -> Outcome:
        """How the run ended (a watch's: its state and end reason unknown)."""
        return Outcome(ending, "unknown", None, code, failure)

    def run(self) -> Outcome:
        try:
            outcome = self._loop()
        except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM / SIGHUP as `Interrupted`
            outcome = self.outcome("interrupted", interrupt_status(exc))
        self._note(f"stop {outcome.ending} exit={outcome.exit_code}")
        self.finish(outcome)
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
                retry = self._retry(streak, err, opened, raised=raised, final_read=raised and final)
                if isinstance(retry, HermesError):
                    return self.fail(retry)
                wait = retry
            if self._wait(wait, deadline):
                return self._ran_out(streak.last)

    def _retry(
        self, streak: Streak, err: HermesError, opened: float, *, raised: bool, final_read: bool
    ) -> HermesError | float:
        """After a transient failure: the error that ends the run, else the wait before the next
        read (the failure reported when it starts a streak; a final read's, always)."""
        config = self.config
        # what `--start-timeout` bounds: the run while no read succeeded yet, else a streak of 404s
        since = opened if self.read_at is None else streak.missing_since
        if since is not None and self.clock() - since >= config.start_timeout:
            why = "still not found after" if err.code is Code.NOT_FOUND else "no read succeeded within"
            waited = f"{why} --start-timeout {config.start_timeout:g}s"
            detail = f"{err.detail}; {waited}" if err.detail else waited
            return HermesError(err.code, detail, retryable=False, status=err.status, hint=err.hint)
        if final_read and streak.failures > config.final_retries:
            return HermesError(Code.FINAL_READ_FAILED, err.code.value)
        if not raised:
            self.unsettle()
        final = self.finishing()
        delay = None  # every interval for a 404 unless final, else backed off
        if final or err.code is not Code.NOT_FOUND:
            backoff = min(config.backoff_cap, config.backoff_base * 2.0 ** (streak.failures - 1))
            delay = max(config.interval, backoff * (0.5 + 0.5 * self.jitter()))
        if final or err.code is not streak.code:
            self.reporter.error(err, retrying=True, delay=delay)
        streak.code = err.code
        wait = config.interval if delay is None else delay
        if since is not None:
            wait = min(wait, max(0.0, since + config.start_timeout - self.clock()))
        return wait

    def _ran_out(self, last: HermesError | None) -> Outcome:
        """`--timeout` ran out: the last failure (with the last good read's age), if any."""
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
        self.reporter.error(err, retrying=False, delay=None)
        age = None if self.read_at is None else round(self.clock() - self.read_at, 3)
        return replace(self.outcome("failed", int(err.exit_status), err), last_read_age=age)

    def _wait(self, wait: float, deadline: float | None) -> bool:
        """Sleep `wait`, never past `deadline`; True when it has passed."""
        if deadline is not None:
            wait = min(wait, max(0.0, deadline - self.clock()))
        self._note(f"wait {wait:.2f}s")
        self.sleep(wait)
        return deadline is not None and self.clock() >= deadline

    def _warn(self, warnings: Sequence[WarningItem]) -> set[str]:
        """Report each code once, unless `warned` has it (`gap` every time); the codes seen."""
        codes: set[str] = set()
        for item in warnings:
            if item.code not in codes and (item.code == "gap" or item.code not in self.warned):
                self.reporter.warning(item)
            codes.add(item.code)
        return codes

    def _note(self, line: str) -> None:
        if self.debug is not None:
            self.debug(f"{self.label} {line}")


MAX_FILL_PAGES = 20
COMPRESSION = "compression"
# The child closed itself, whatever its run's outcome (docs/commands.md, "`end_reason` and
# `--exit-status`"); every other ending is a reaper or an interactive close.
SUCCESS_END_REASONS = frozenset({"agent_close"})


class Reporter(Reports, Protocol):
    def state(self, task: TaskInfo) -> None: ...
    def rows(self, rows: Sequence[Row]) -> None: ...
    def result(self, outcome: Outcome) -> None: ...


def ending_exit_code(end_reason: str | None, *, exit_status: bool) -> int:
    """Exit status of a task that ended: 0, or with `exit_status` 8 unless it closed itself."""
    if not exit_status or end_reason in SUCCESS_END_REASONS:
        return int(ExitStatus.OK)
    return int(ExitStatus.TASK_FAILED)


Fetched = tuple[Snapshot, bool]  # a cycle's snapshot, and whether its rows join those reported


@dataclass(eq=False)
class Follower(PollLoop):
    label = "follow"
    reporter: Reporter

    def __post_init__(self) -> None:
        self.seen: set[RowKey] = set()
        self.seen_uids: set[str] = set()  # durable row ids (`message_uid`) reported
        self.abandoned: set[RowKey] = set()
        self.last_state: tuple[object, ...] | None = None
        self.held_state: TaskInfo | None = None
        self.gap = False
        self.backlog = True  # the next report is the first: the rows already there
        # (tip, end_reason) seen ended or paused: the next read is the final one, and a read
        # that moves to another segment or ending needs its own final read.
        self.final: tuple[str, str | None] | None = None

    def cycle(self) -> HermesError | None:
        return self.deliver(self.fetch()).failure

    def settle(self) -> Outcome | bool:
        """A final read at once on an ending; the follow ends when it sees the same ending again."""
        tip = self.reader.tip
        assert tip is not None
        done = self.reader.state() == "ended" or tip.end_reason == COMPRESSION
        seen = (tip.id, tip.end_reason) if done else None
        if seen is None or self.final != seen:
            self.final = seen
            return seen is not None
        if tip.end_reason == COMPRESSION:  # not seen ending: 0 would not be true
            return self.outcome("partial_history", int(ExitStatus.STILL_RUNNING))
        return self.outcome("ended", ending_exit_code(tip.end_reason, exit_status=self.config.exit_status))

    def finishing(self) -> bool:
        return self.final is not None

    def unsettle(self) -> None:
        self.final = None  # a pending --tip may continue the task: no ending yet

    def fail(self, err: HermesError) -> Outcome:
        self._release_state()  # the state the follow knew, before its error
        return super().fail(err)

    def timed_out(self) -> Outcome:
        return self.outcome("timeout", int(ExitStatus.STILL_RUNNING))

    def finish(self, outcome: Outcome) -> None:
        self._release_state()
        self.reporter.result(outcome)

    def outcome(self, ending: Ending, code: int, failure: HermesError | None = None) -> Outcome:
        tip = self.reader.tip
        return Outcome(ending, self.reader.state(), tip.end_reason if tip else None, code, failure)

    def fetch(self, probe: SessionDetail | None = None) -> Fetched:
        """One cycle's reads, reporting nothing; `probe`: the tip's detail read just before."""
        snap = self.reader.refresh(probe)
        self.gap = self.gap or any(w.code == "gap" for w in snap.warnings)
        return snap, self._fill()

    def deliver(self, fetched: Fetched) -> Snapshot:
        """Report what a `fetch` brought: a changed state (an `ended` one held), warnings, new rows."""
        snap, connected = fetched
        warnings = [w for w in snap.warnings if w.code != "gap"]
        if not connected and self.gap:
            warnings.append(warning(WarningCode.gap))
        self.gap = False
        reader = self.reader
        tip = reader.tip
        assert tip is not None
        key = (reader.state(), tip.id, tuple(reader.path), tip.end_reason, reader.candidate)
        if key != self.last_state:
            self.last_state = key
            self.held_state = reader.document([]).task
        if self.held_state is not None and self.held_state.state != "ended":
            self._release_state()
        self.warned = self._warn(warnings)
        # --tail cuts only the rows already there at the first read; --role every report
        fresh = self.config.rows.select(self._unreported(), tail=self.backlog)
        self.backlog = False
        if fresh:
            self.reporter.rows(fresh)
        return snap

    def _fill(self) -> bool:
        """Older pages until the paged window reaches reported rows (True), or the start, no
        progress or `MAX_FILL_PAGES` stop it (False); across a rotation, the previous segment's."""
        if not self.seen:
            return True
        for pages in range(MAX_FILL_PAGES + 1):
            cur = self.reader.cursor()
            window = cur.window
            block = window.keys[window.block_start :] if not window.fresh else ()
            if any(key in self.seen for key in block):
                return True
            if not block and window is self.reader.window and cur.kind == "page":
                return True  # nothing read yet in the tip window
            if cur.kind in ("start", "blocked") or (block and block[0] in self.abandoned):
                return False
            if pages == MAX_FILL_PAGES:
                if block:
                    self.abandoned.add(block[0])
                return False
            self._note(f"fill: read older than {len(block)} unreported rows of {cur.sid}")
            result = self.reader.read_older()
            if result is None or not result.new_keys:
                return False
        raise AssertionError("unreachable")  # pragma: no cover

    def _unreported(self) -> list[Row]:
        fresh: list[Row] = []
        view = self.reader.view()  # earlier segments' windows first: rows of a rotated segment lead
        for row_key in view.keys:
            if row_key in self.seen:
                continue
            self.seen.add(row_key)
            uid = view.messages[row_key].message_uid
            if uid and uid in self.seen_uids:
                continue  # the same durable row, reported already (another copy of it)
            if uid:
                self.seen_uids.add(uid)
            if (row := project(view.messages[row_key])) is not None:
                fresh.append(row)
        return fresh

    def _release_state(self) -> None:
        if self.held_state is not None:
            self.reporter.state(self.held_state)
            self.held_state = None
