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

from hermes_task.core.documents import Row, TaskInfo, WarningItem, warning
from hermes_task.core.projection import project
from hermes_task.core.ui_strings import WarningCode
from hermes_task.core.window import RowKey
from hermes_task.core.wire import SessionDetail
from hermes_task.failures import ExitStatus, HermesError
from hermes_task.reading.follow_outcome import COMPRESSION, MAX_FILL_PAGES, Reporter, ending_exit_code
from hermes_task.reading.polling import Ending, Outcome, PollConfig, PollLoop
from hermes_task.reading.reader import Snapshot, TaskReader

Fetched = tuple[Snapshot, bool]  # a cycle's snapshot, and whether its rows join those reported


class Follower(PollLoop):
    """One follow of one task. `run()` reports a result exactly once and returns it."""

    label = "follow"

    def __init__(
        self,
        reader: TaskReader,
        reporter: Reporter,
        config: PollConfig,
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
        # (tip, end_reason) seen ended or paused: the next read is the final one, and a read
        # that moves to another segment or ending needs its own final read.
        self.final: tuple[str, str | None] | None = None

    # -- the loop's hooks (reading/polling.py runs the loop) ---------------------------------

    def cycle(self) -> HermesError | None:
        return self.step().failure

    def settle(self) -> Outcome | bool:
        """The task seen ended (or paused on partial history): one final read at once, and
        the follow ends after a read that saw the same ending again."""
        seen = self._ending_seen()
        if seen is not None and self.final == seen:
            return self._finished()
        self.final = seen
        return seen is not None

    def finishing(self) -> bool:
        return self.final is not None

    def unsettle(self) -> None:
        self.final = None  # a pending --tip may continue the task: no ending yet

    def error(self, err: HermesError, *, retrying: bool, delay: float | None) -> None:
        self.reporter.error(err, retrying=retrying, delay=delay)

    def fail(self, err: HermesError) -> Outcome:
        self._release_state()  # the state the follow knew, before its error
        return super().fail(err)

    def failed(self, err: HermesError, age: float | None) -> Outcome:
        return replace(self._outcome("failed", int(err.exit_status), err), last_read_age=age)

    def timed_out(self) -> Outcome:
        return self._outcome("timeout", int(ExitStatus.STILL_RUNNING))

    def interrupted(self, outcome: Outcome) -> Outcome:
        return self._outcome("interrupted", outcome.exit_code)

    def finish(self, outcome: Outcome) -> None:
        self._release_state()
        self.reporter.result(outcome)

    def _ending_seen(self) -> tuple[str, str | None] | None:
        """(tip, end_reason) when the newest verified segment is ended or paused on partial
        history (compression), else None."""
        tip = self.reader.tip
        assert tip is not None
        done = self.reader.state() == "ended" or tip.end_reason == COMPRESSION
        return (tip.id, tip.end_reason) if done else None

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
            warnings.append(warning(WarningCode.gap))
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

    def _outcome(self, ending: Ending, code: int, failure: HermesError | None = None) -> Outcome:
        tip = self.reader.tip
        state = self.reader.state() if tip is not None else "unknown"
        return Outcome(ending, state, tip.end_reason if tip else None, code, failure)

    def _finished(self) -> Outcome:
        tip = self.reader.tip
        assert tip is not None
        if tip.end_reason == COMPRESSION:  # not seen ending: 0 would not be true
            return self._outcome("partial_history", int(ExitStatus.STILL_RUNNING))
        return self._outcome("ended", ending_exit_code(tip.end_reason, exit_status=self.config.exit_status))


__all__ = ["MAX_FILL_PAGES", "Follower", "Reporter", "ending_exit_code"]
