"""The follow loop: poll one task until it ends, reporting each row once (pure of typer/rich).

`Follower` drives a `TaskReader`: one request flight at a time, each cycle a
`TaskReader.refresh()` (detail, newest page, fresh detail) merged into the reader's window.
Clock, sleep and jitter are parameters, so every timing decision is testable with a fake
clock. What the loop learns goes to a `Reporter` (terminal text or NDJSON events).

Invariants:
- a row identity (`session_id`, `id`), and a durable row (`message_uid`, where the backend
  gives one: any copy of it), is reported at most once, in window order, and only
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
- a streak of 404s lasts at most `start_timeout` seconds, then the follow fails `not_found`
  (exit 4), naming the id;
- a `--tip` that cannot be read (`Snapshot.failure`, retryable) does not hide the verified
  rows: they are reported while the tip is retried, and the follow does not end meanwhile;
- the `--timeout` deadline bounds the whole follow (at least one read always happens); it
  exits 9 only when the latest read succeeded (the task is known to be running), otherwise
  with the failure of that read; a pause on partial history exits 9 too;
- the `ended` state is reported after the rows of the final read, right before the result;
- `config.rows` only chooses which rows are reported (`--role`; `--tail N`: the last N of the
  rows already there at the first successful read, then every new one): a row it drops is
  still seen, never reported later.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from msgspec.structs import replace

from hermes_task.core.documents import Row, TaskInfo, WarningItem
from hermes_task.core.projection import project
from hermes_task.core.ui_strings import warning_message
from hermes_task.core.window import RowKey
from hermes_task.dashboard.wire import SessionDetail
from hermes_task.failures import Code, ExitStatus, HermesError, interrupt_status
from hermes_task.reading.follow_outcome import (
    COMPRESSION,
    MAX_FILL_PAGES,
    Ending,
    FollowConfig,
    FollowOutcome,
    Reporter,
    ending_exit_code,
)
from hermes_task.reading.polling import PollLoop, Streak
from hermes_task.reading.reader import Snapshot, TaskReader

Fetched = tuple[Snapshot, bool]  # a cycle's snapshot, and whether its rows join those reported


class Follower(PollLoop[FollowConfig]):
    """One follow of one task. `run()` reports a result exactly once and returns it."""

    label = "follow"

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
        super().__init__(reader, config, clock=clock, sleep=sleep, jitter=jitter, debug=debug)
        self.reporter = reporter
        self.seen: set[RowKey] = set()
        self.seen_uids: set[str] = set()  # durable row ids (`message_uid`) reported
        self.abandoned: set[RowKey] = set()
        self.last_state: tuple[object, ...] | None = None
        self.held_state: TaskInfo | None = None
        self.warned: set[str] = set()
        self.gap = False
        self.backlog = True  # the next report is the first: the rows already there
        self.read_at: float | None = None  # when the last successful read ended

    # -- the loop -------------------------------------------------------------------------

    def run(self) -> FollowOutcome:
        try:
            outcome = self._loop()
        except KeyboardInterrupt as exc:
            outcome = self._outcome("interrupted", interrupt_status(exc))
        self._note(f"stop {outcome.ending} exit={outcome.exit_code}")
        self._release_state()
        self.reporter.result(outcome)
        return outcome

    def _loop(self) -> FollowOutcome:
        config = self.config
        deadline = None if config.timeout is None else self.clock() + config.timeout
        # (tip, end_reason) seen ended or paused: the next read is the final one, and a read
        # that moves to another segment or ending needs its own final read.
        final: tuple[str, str | None] | None = None
        streak = Streak()
        while True:
            started = self.clock()
            snap, err = self._read()
            if err is not None and not err.retryable:
                return self._fail(err)
            ends = self._tally(streak, err, started, final_read=snap is None and final is not None)
            if ends is not None:
                return self._fail(ends)
            if snap is not None and err is None:
                self.read_at = self.clock()
                seen = self._ending_seen()
                if seen is not None and final == seen:
                    return self._finished()
                final = seen
                if final is not None:
                    self._note("final read")
                    continue  # at once, whatever the deadline: one bounded read
                wait = max(0.0, started + config.interval - self.clock())
            else:
                assert err is not None
                if snap is not None:
                    final = None  # a pending --tip may continue the task: no ending yet
                wait = self._retry_wait(streak, err, final=final is not None)
            if self._wait(wait, deadline):
                return self._timed_out(final is not None, streak.last)

    def _read(self) -> tuple[Snapshot | None, HermesError | None]:
        """One cycle: its snapshot (None when it raised) and its failure; a snapshot with a
        failure is an unreadable --tip, whose verified rows were published."""
        try:
            snap = self.step()
        except HermesError as exc:
            return None, exc
        return snap, snap.failure

    def _tally(
        self, streak: Streak, err: HermesError | None, started: float, *, final_read: bool
    ) -> HermesError | None:
        """Count the read (`err`: its transient failure, or None) in the streak; the failure
        that ends the follow when a 404 outlived --start-timeout, or (`final_read`: the final
        read raised) the final read's retries ran out."""
        if err is None:
            streak.clear()
            return None
        streak.count(err, started)
        if (
            streak.missing_since is not None
            and self.clock() - streak.missing_since >= self.config.start_timeout
        ):
            return self._gave_up(err)
        if final_read and streak.failures > self.config.final_retries:
            return HermesError(Code.FINAL_READ_FAILED, err.code.value)
        return None

    def _ending_seen(self) -> tuple[str, str | None] | None:
        """(tip, end_reason) when the newest verified segment is ended or paused on partial
        history (compression), else None."""
        tip = self.reader.tip
        assert tip is not None
        done = self.reader.state() == "ended" or tip.end_reason == COMPRESSION
        return (tip.id, tip.end_reason) if done else None

    def _retry_wait(self, streak: Streak, err: HermesError, *, final: bool) -> float:
        """After a failed read: the failure reported when it starts a streak (and on every
        retry of a final read), and the wait before the next read: every interval for a 404
        (backed off when `final`), else backed off; never past --start-timeout."""
        config = self.config
        delay = None if not final and err.code is Code.NOT_FOUND else self._backoff(streak.failures)
        if final or err.code is not streak.code:
            self.reporter.error(err, retrying=True, delay=delay)
        streak.code = err.code
        wait = config.interval if delay is None else delay
        if streak.missing_since is not None:
            wait = min(wait, max(0.0, streak.missing_since + config.start_timeout - self.clock()))
        return wait

    def _gave_up(self, err: HermesError) -> HermesError:
        """A 404 that outlived --start-timeout: final, exit 4, still naming the id."""
        waited = f"still not found after --start-timeout {self.config.start_timeout:g}s"
        detail = f"{err.detail}; {waited}" if err.detail else waited
        return HermesError(Code.NOT_FOUND, detail, retryable=False, status=err.status, hint=err.hint)

    # -- one cycle ------------------------------------------------------------------------

    def step(self, probe: SessionDetail | None = None) -> Snapshot:
        """One cycle outside `run()`: `fetch`, then `deliver`; failures raise `HermesError`."""
        return self.deliver(self.fetch(probe))

    def fetch(self, probe: SessionDetail | None = None) -> Fetched:
        """The reads of one cycle (refresh, older pages to close a gap), reporting nothing:
        `follow --parent` fetches children side by side (each touching only its own reader),
        then `deliver`s them in order. `probe`: the tip's detail read just before."""
        snap = self.reader.refresh(probe)
        self.gap = self.gap or any(w.code == "gap" for w in snap.warnings)
        return snap, self._fill()

    def deliver(self, fetched: Fetched) -> Snapshot:
        """Report what one `fetch` brought: its warnings, then its new rows."""
        snap, connected = fetched
        warnings = [w for w in snap.warnings if w.code != "gap"]
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
        """Report a cycle: the task's state when it changed (an `ended` one is held), the
        warnings not reported in the cycle before (`gap` every time), then the new rows."""
        self._hold_state()
        self._warn(warnings)
        # --tail cuts only the rows already there at the first read; --role every report
        fresh = self.config.rows.select(self._unreported(), tail=self.backlog)
        self.backlog = False
        if fresh:
            self.reporter.rows(fresh)

    def _hold_state(self) -> None:
        """The task's state, taken when it changed: reported now unless it is `ended`."""
        reader = self.reader
        tip = reader.tip
        assert tip is not None
        key = (reader.state(), tip.id, tuple(reader.path), tip.end_reason, reader.candidate)
        if key != self.last_state:
            self.last_state = key
            self.held_state = reader.document([]).task
        if self.held_state is not None and self.held_state.state != "ended":
            self._release_state()

    def _warn(self, warnings: Sequence[WarningItem]) -> None:
        """Each code once per cycle, and only if the cycle before did not report it (but
        `gap`, reported every time)."""
        codes: set[str] = set()
        for item in warnings:
            if item.code not in codes and (item.code == "gap" or item.code not in self.warned):
                self.reporter.warning(item)
            codes.add(item.code)
        self.warned = codes

    def _unreported(self) -> list[Row]:
        """The view's rows not seen before, in order, now seen; a durable row (`message_uid`)
        reported once whatever the number of its copies."""
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
            row = project(view.messages[row_key])
            if row is not None:
                fresh.append(row)
        return fresh

    def _release_state(self) -> None:
        """Report the held state. An `ended` state is held until the follow ends, so that it
        comes after the rows of the final read: a consumer that stops there loses nothing."""
        if self.held_state is not None:
            self.reporter.state(self.held_state)
            self.held_state = None

    # -- endings --------------------------------------------------------------------------

    def _outcome(self, ending: Ending, code: int, failure: HermesError | None = None) -> FollowOutcome:
        tip = self.reader.tip
        state = self.reader.state() if tip is not None else "unknown"
        return FollowOutcome(ending, state, tip.end_reason if tip else None, code, failure)

    def _fail(self, err: HermesError) -> FollowOutcome:
        self._release_state()
        self.reporter.error(err, retrying=False, delay=None)
        outcome = self._outcome("failed", int(err.exit_status), err)
        if self.read_at is None:
            return outcome
        return replace(outcome, last_read_age=round(self.clock() - self.read_at, 3))

    def _finished(self) -> FollowOutcome:
        tip = self.reader.tip
        assert tip is not None
        if tip.end_reason == COMPRESSION:  # not seen ending: 0 would not be true
            return self._outcome("partial_history", int(ExitStatus.STILL_RUNNING))
        return self._outcome("ended", ending_exit_code(tip.end_reason, exit_status=self.config.exit_status))

    def _timed_out(self, final: bool, last: HermesError | None) -> FollowOutcome:
        if final and last is not None:  # the task ended, but its final read kept failing
            return self._fail(HermesError(Code.FINAL_READ_FAILED, "--timeout ran out"))
        if last is not None:  # every read of the final stretch failed: not known running
            ran_out = "every read failed until --timeout ran out"
            detail = f"{last.detail}; {ran_out}" if last.detail else ran_out
            return self._fail(HermesError(last.code, detail, status=last.status, hint=last.hint))
        return self._outcome("timeout", int(ExitStatus.STILL_RUNNING))


__all__ = ["MAX_FILL_PAGES", "FollowConfig", "FollowOutcome", "Follower", "Reporter", "ending_exit_code"]
