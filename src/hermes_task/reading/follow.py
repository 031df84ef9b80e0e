"""The follow loop: poll one task until it ends, reporting each row once (pure of typer/rich).

`Follower` drives a `TaskReader`: one request flight at a time, each cycle a
`TaskReader.refresh()` (detail, newest page, fresh detail) merged into the reader's window.
Clock, sleep and jitter are parameters, so every timing decision is testable with a fake
clock. What the loop learns goes to a `Reporter` (the CLI renders it as terminal text or
NDJSON events).

Invariants:
- a row identity (`session_id`, `id`) is reported at most once, in window order, and only
  after a cycle finished successfully: rows of a cycle that straddled an advancement, or of
  a failed cycle, are taken from the reader's window, which only ever holds rows of
  verified segments (TaskReader discards pages of an older generation);
- rows between two reads that share nothing (a `gap`) are filled with older-page reads
  before the cycle reports, so output stays in order; a gap wider than `MAX_FILL_PAGES`
  pages is reported as a `gap` warning instead;
- the first time the newest verified segment is seen ended (any `end_reason` but
  "compression") or paused on partial history, one final read follows; its transient
  failures get `final_retries` retries, after which the follow fails `final_read_failed`;
- transient failures back off (404: every interval; network, timeout, 5xx, 429: exponential
  with jitter, capped) and are reported once per streak; any other failure is final;
- the `--timeout` deadline bounds the whole follow (at least one read always happens).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from hermes_task.core.documents import Row, TaskInfo, WarningItem
from hermes_task.core.messages import warning_message
from hermes_task.core.projection import project
from hermes_task.core.window import RowKey
from hermes_task.failures import Code, ExitStatus, HermesError, interrupt_status
from hermes_task.reading.reader import Snapshot, TaskReader

FINAL_RETRIES = 3
BACKOFF_BASE = 2.0
BACKOFF_CAP = 30.0
MAX_FILL_PAGES = 20
COMPRESSION = "compression"
# A delegated child's row is ended by its own agent's close(): `agent_close` on both
# backends, whatever the run's outcome (completed, failed, interrupted and timed-out runs
# all close the same way; the outcome lives in the parent's delegate_task result). Every
# other ending is a reaper or an interactive close (`startup_orphan_reap`,
# `orphaned_compression`, `cli_close`, ...): the child did not close itself.
SUCCESS_END_REASONS = frozenset({"agent_close"})

Ending = Literal["ended", "partial_history", "timeout", "failed", "interrupted"]


@dataclass(frozen=True)
class FollowConfig:
    """Timing and exit policy of one follow."""

    interval: float = 2.0
    timeout: float | None = None
    exit_status: bool = False
    final_retries: int = FINAL_RETRIES
    backoff_base: float = BACKOFF_BASE
    backoff_cap: float = BACKOFF_CAP


@dataclass(frozen=True)
class Outcome:
    """How a follow ended: the `result` event's fields plus the failure, if any."""

    ending: Ending
    state: str
    end_reason: str | None
    exit_code: int
    failure: HermesError | None = None


class Reporter(Protocol):
    """Where the loop reports; each method is called only for news."""

    def state(self, task: TaskInfo) -> None: ...
    def warning(self, item: WarningItem) -> None: ...
    def rows(self, rows: Sequence[Row]) -> None: ...
    def error(self, error: HermesError, *, retrying: bool, delay: float | None) -> None: ...
    def result(self, outcome: Outcome) -> None: ...


def ending_exit_code(end_reason: str | None, *, exit_status: bool) -> int:
    """Exit status of a task that ended: 0, or with `exit_status` 8 unless it closed itself."""
    if not exit_status or end_reason in SUCCESS_END_REASONS:
        return int(ExitStatus.OK)
    return int(ExitStatus.TASK_FAILED)


class Follower:
    """One follow of one task. `run()` reports a result exactly once and returns it."""

    def __init__(
        self,
        reader: TaskReader,
        reporter: Reporter,
        config: FollowConfig,
        *,
        clock: Callable[[], float],
        sleep: Callable[[float], None],
        jitter: Callable[[], float] = random.random,
        debug: Callable[[str], None] | None = None,
    ) -> None:
        self.reader = reader
        self.reporter = reporter
        self.config = config
        self.clock = clock
        self.sleep = sleep
        self.jitter = jitter
        self.debug = debug
        self.seen: set[RowKey] = set()
        self.abandoned: set[RowKey] = set()
        self.last_state: tuple[object, ...] | None = None
        self.warned: set[str] = set()
        self.gap = False

    # -- the loop -------------------------------------------------------------------------

    def run(self) -> Outcome:
        try:
            outcome = self._loop()
        except KeyboardInterrupt as exc:
            outcome = self._outcome("interrupted", interrupt_status(exc))
        self._note(f"stop {outcome.ending} exit={outcome.exit_code}")
        self.reporter.result(outcome)
        return outcome

    def _loop(self) -> Outcome:
        config = self.config
        deadline = None if config.timeout is None else self.clock() + config.timeout
        # (tip, end_reason) seen ended or paused: the next read is the final one, and a read
        # that moves to another segment or ending needs its own final read.
        final: tuple[str, str | None] | None = None
        failures = 0
        streak: Code | None = None
        while True:
            started = self.clock()
            try:
                snap = self._cycle()
            except HermesError as err:
                if not err.retryable:
                    return self._fail(err)
                failures += 1
                if final is not None and failures > config.final_retries:
                    return self._fail(HermesError(Code.FINAL_READ_FAILED, err.code.value))
                delay = None if final is None and err.code is Code.NOT_FOUND else self._backoff(failures)
                if final is not None or err.code is not streak:
                    self.reporter.error(err, retrying=True, delay=delay)
                streak = err.code
                wait = config.interval if delay is None else delay
            else:
                failures, streak = 0, None
                if snap.failure is not None:
                    return self._fail(snap.failure)
                tip = self.reader.tip
                assert tip is not None
                done = self.reader.state() == "ended" or tip.end_reason == COMPRESSION
                seen = (tip.id, tip.end_reason)
                if done and final == seen:
                    return self._finished()
                final = seen if done else None
                if final is not None:
                    self._note("final read")
                    continue  # at once, whatever the deadline: one bounded read
                wait = max(0.0, started + config.interval - self.clock())
            if deadline is not None:
                wait = min(wait, max(0.0, deadline - self.clock()))
            self._note(f"wait {wait:.2f}s")
            self.sleep(wait)
            if deadline is not None and self.clock() >= deadline:
                return self._timed_out(final is not None)

    def _backoff(self, failures: int) -> float:
        config = self.config
        delay = min(config.backoff_cap, config.backoff_base * 2.0 ** (failures - 1))
        return max(config.interval, delay * (0.5 + 0.5 * self.jitter()))

    # -- one cycle ------------------------------------------------------------------------

    def step(self) -> Snapshot:
        """One cycle outside `run()` (`follow --parent` drives many followers): refresh, fill a
        gap, report what is new; failures raise `HermesError` as in `run()`."""
        return self._cycle()

    def _cycle(self) -> Snapshot:
        snap = self.reader.refresh()
        self.gap = self.gap or any(w.code == "gap" for w in snap.warnings)
        warnings = [w for w in snap.warnings if w.code != "gap"]
        connected = self._fill()
        if connected:
            self.gap = False
        elif self.gap:
            warnings.append(WarningItem(code="gap", message=warning_message("gap")))
        self._publish(warnings)
        self.gap = False
        return snap

    def _fill(self) -> bool:
        """Read older pages until the window being paged reaches rows already reported
        (True), or the lineage's start, no progress or `MAX_FILL_PAGES` stop it (False).
        Across a rotation this reads the previous segment's newest rows (the ones written
        between the last read and the rotation) unless the new tip's pages include them."""
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

    def _publish(self, warnings: Sequence[WarningItem]) -> None:
        reader = self.reader
        tip = reader.tip
        assert tip is not None
        key = (reader.state(), tip.id, tuple(reader.path), tip.end_reason, reader.candidate)
        if key != self.last_state:
            self.last_state = key
            self.reporter.state(reader.document([]).task)
        codes: set[str] = set()
        for item in warnings:
            if item.code not in codes and (item.code == "gap" or item.code not in self.warned):
                self.reporter.warning(item)
            codes.add(item.code)
        self.warned = codes
        fresh: list[Row] = []
        view = reader.view()  # earlier segments' windows first: rows of a rotated segment lead
        for row_key in view.keys:
            if row_key not in self.seen:
                self.seen.add(row_key)
                row = project(view.messages[row_key])
                if row is not None:
                    fresh.append(row)
        if fresh:
            self.reporter.rows(fresh)

    # -- endings --------------------------------------------------------------------------

    def _outcome(self, ending: Ending, code: int, failure: HermesError | None = None) -> Outcome:
        tip = self.reader.tip
        state = self.reader.state() if tip is not None else "unknown"
        return Outcome(ending, state, tip.end_reason if tip else None, code, failure)

    def _fail(self, err: HermesError) -> Outcome:
        self.reporter.error(err, retrying=False, delay=None)
        return self._outcome("failed", int(err.exit_status), err)

    def _finished(self) -> Outcome:
        tip = self.reader.tip
        assert tip is not None
        if tip.end_reason == COMPRESSION:
            code = ExitStatus.STILL_RUNNING if self.config.exit_status else ExitStatus.OK
            return self._outcome("partial_history", int(code))
        return self._outcome("ended", ending_exit_code(tip.end_reason, exit_status=self.config.exit_status))

    def _timed_out(self, final: bool) -> Outcome:
        if final:  # the task ended, but its final read kept failing until the deadline
            return self._fail(HermesError(Code.FINAL_READ_FAILED, "--timeout ran out"))
        return self._outcome("timeout", int(ExitStatus.STILL_RUNNING))

    def _note(self, line: str) -> None:
        if self.debug is not None:
            self.debug(f"follow {line}")
