"""The watch loop of `recover --watch`: poll a parent chat until every delegated task is terminal.

`Watcher` drives one `TaskReader` anchored at the parent, with the follow loop's rules
(`follow.py`): one request in flight on the parent, a cycle every `interval` seconds from the
cycle's start, transient failures backed off from `backoff_base` to `backoff_cap` seconds with
jitter (404 every interval) and reported once per streak, any other failure final, `timeout`
bounding the whole watch (one read always happens). Clock, sleep and jitter are parameters.

Invariants:
- the history is read once (the first cycle: newest page, then every older page); each later
  cycle is one anchored `TaskReader.refresh()` (detail, newest page, fresh detail), plus older
  pages only to close a gap back to rows already known (at most `MAX_FILL_PAGES`, else a `gap`
  warning): never the whole history again;
- the task list is recomputed only when a cycle brought new rows; in a cycle without,
  `recheck` (reading/unreported.py) checks the known tasks' children again, so a child's end
  is noticed without a parent row; a child proven once is not proven again (`StoreHints.shown`,
  a check keeps its proof): a new parent row costs the parent's reads and `recheck`'s bounded
  checks whatever the number of tasks, and a cycle reads each detail once (`shared`); a task is
  reported when it first appears and when its entry changes, keyed by its `CALL.TASK` number;
- the watch ends `ended` when there is at least one task, every task is terminal and
  `recheck` is steady (an end it just noticed had its second look), `timeout`
  when the deadline passed first, `failed` on a final failure, and `interrupted` on Ctrl-C or
  the shell's `Interrupted` (SIGTERM, SIGHUP); `result` is reported exactly once, last;
- exit 9 means what it says: only when the last read succeeded and showed a task still
  running. A parent that never answered, or a streak of 404s, ends after `start_timeout` with
  that failure's own code (4, 7, ...); when every read failed until the deadline, with the last
  failure's code and the age of the last successful read (`last_read_age`); every task terminal
  at the deadline (`follow --parent` still reading a child) ends by the verdict;
- tasks are built from the reader's path-filtered view only (rows of the proven lineage).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Literal, Protocol

from msgspec import Struct

from hermes_task.core.delegations import recover
from hermes_task.core.documents import TaskEntry, WarningItem
from hermes_task.core.ui_strings import RETRYING, warning_message
from hermes_task.core.verdict import all_terminal, exit_status, verdict
from hermes_task.dashboard.wire import WireMessage
from hermes_task.failures import Code, ExitStatus, HermesError, interrupt_status
from hermes_task.reading.details import SharedDetails
from hermes_task.reading.follow_outcome import (
    BACKOFF_BASE,
    BACKOFF_CAP,
    FINAL_RETRIES,
    MAX_FILL_PAGES,
    START_TIMEOUT,
)
from hermes_task.reading.polling import PollLoop, Streak
from hermes_task.reading.reader import TaskReader
from hermes_task.reading.tasktree import read_history

Ending = Literal["ended", "timeout", "failed", "interrupted"]


class WatchConfig(Struct, frozen=True):
    interval: float = 2.0
    timeout: float | None = None
    exit_status: bool = False
    start_timeout: float = START_TIMEOUT
    backoff_base: float = BACKOFF_BASE
    backoff_cap: float = BACKOFF_CAP


class WatchOutcome(Struct, frozen=True):
    """How a watch ended: the `result` event's fields, plus the failure if any."""

    ending: Ending
    state: Literal["running", "ended", "unknown"]
    end_reason: str | None
    exit_code: int
    failure: HermesError | None = None
    last_read_age: float | None = None  # seconds since the last successful read, on a failure


class WatchReporter(Protocol):
    def task(self, entry: TaskEntry) -> None: ...
    def tasks(self, entries: Sequence[TaskEntry]) -> None: ...
    def warning(self, item: WarningItem) -> None: ...
    def error(self, error: HermesError, *, retrying: bool, delay: float | None) -> None: ...
    def result(self, outcome: WatchOutcome, entries: Sequence[TaskEntry]) -> None: ...


# Child ids the transcript lacks, proposed by the local store and proven over HTTP
# (store/hints.py `find_children`), or the tasks as they are.
Resolve = Callable[[Sequence[WireMessage], list[TaskEntry]], list[TaskEntry]]


class Recheck(Protocol):
    """Tasks that change without new parent rows: a child's proven end (reading/unreported.py)."""

    def again(self) -> list[TaskEntry]: ...  # the last resolved tasks, checked once more
    def steady(self) -> bool: ...  # may the watch end on what the last check found?


class Watcher(PollLoop[WatchConfig]):
    """One watch of one parent chat. `run()` reports a result exactly once and returns it."""

    label = "watch"

    def __init__(
        self,
        reader: TaskReader,
        reporter: WatchReporter,
        config: WatchConfig,
        *,
        clock: Callable[[], float],
        sleep: Callable[[float], None],
        jitter: Callable[[], float] = random.random,
        debug: Callable[[str], None] | None = None,
        resolve: Resolve | None = None,
        recheck: Recheck | None = None,
        shared: SharedDetails | None = None,
        notes: Callable[[], list[WarningItem]] | None = None,
    ) -> None:
        super().__init__(reader, config, clock=clock, sleep=sleep, jitter=jitter, debug=debug)
        self.reporter = reporter
        self.resolve = resolve
        self.recheck = recheck
        self.notes = notes  # the run's own warnings (the local store's), published once each
        # Is the task list built from every row the window holds? Only a whole build (resolve
        # included) sets it: a cycle that failed part-way consumes no row (issue 35).
        self.built = False
        self.retried = 0  # cycles since every task was terminal with a child's proof failing
        self.shared = shared  # one cycle's details (`resolve`, `recheck`): cleared as each starts
        self.opened = False
        self.entries: list[TaskEntry] = []
        self.known: dict[str, TaskEntry] = {}
        self.warned: set[str] = set()
        self.cycles = 0
        self.read_at: float | None = None

    def run(self) -> WatchOutcome:
        try:
            outcome = self._loop()
        except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM / SIGHUP as `Interrupted`
            outcome = WatchOutcome("interrupted", "unknown", None, interrupt_status(exc))
        self._note(f"stop {outcome.ending} exit={outcome.exit_code}")
        self.reporter.result(outcome, self.entries)
        return outcome

    def _loop(self) -> WatchOutcome:
        config = self.config
        opened = self.clock()
        deadline = None if config.timeout is None else opened + config.timeout
        streak = Streak()
        self.read_at = None  # when the last successful read ended
        while True:
            started = self.clock()
            try:
                changed = self._cycle()
            except HermesError as err:
                if not err.retryable:
                    return self._fail(err)
                streak.count(err, started)
                # --start-timeout: a parent that never answered, or a streak of 404s, ends
                # with that failure's own code (a typo never waits out --timeout).
                since = opened if self.read_at is None else streak.missing_since
                if since is not None and self.clock() - since >= config.start_timeout:
                    return self._fail(self._gave_up(err))
                wait = self._retry_wait(streak, err, since)
            else:
                streak.clear()
                self.read_at = self.clock()
                ended = self._settle(changed)
                if ended is not None:
                    return ended
                wait = max(0.0, started + config.interval - self.clock())
            if self._wait(wait, deadline):
                return self._timed_out(streak.last)

    def _retry_wait(self, streak: Streak, err: HermesError, since: float | None) -> float:
        """After a failed read: the failure reported when it starts a streak, and the wait
        before the next read (every interval for a 404, else backed off), never past
        `since` + --start-timeout."""
        config = self.config
        delay = None if err.code is Code.NOT_FOUND else self._backoff(streak.failures)
        if err.code is not streak.code:
            self.reporter.error(err, retrying=True, delay=delay)
        streak.code = err.code
        wait = config.interval if delay is None else delay
        if since is not None:
            wait = min(wait, max(0.0, since + config.start_timeout - self.clock()))
        return wait

    def _settle(self, changed: bool) -> WatchOutcome | None:
        """After a good read: the task list when it `changed`, the subclass's own step, and
        the ending when every task is terminal and the watch may end."""
        if changed:
            self.reporter.tasks(self.entries)
        self.after_cycle()
        if all_terminal(self.entries) and self.settled() and self._proofs_settled():
            code = exit_status(self.entries) if self.config.exit_status else ExitStatus.OK
            return WatchOutcome("ended", "ended", verdict(self.entries), int(code))
        return None

    def _timed_out(self, last: HermesError | None) -> WatchOutcome:
        """--timeout ran out. Exit 9 only when the last read succeeded and showed a task still
        running; every read since then failed: that failure's code (and the read's age);
        every task terminal (`follow --parent` still reading a child): the verdict."""
        if last is not None:
            ran_out = "every read failed until --timeout ran out"
            if self.read_at is not None:
                ran_out += f"; the last successful read was {self.clock() - self.read_at:.0f}s ago"
            detail = f"{last.detail}; {ran_out}" if last.detail else ran_out
            return self._fail(HermesError(last.code, detail, status=last.status, hint=last.hint))
        config, entries = self.config, self.entries
        if all_terminal(entries):
            code = exit_status(entries) if config.exit_status else ExitStatus.OK
            return WatchOutcome("timeout", "ended", verdict(entries), int(code))
        failed = config.exit_status and verdict(entries) in ("failed", "unreported")
        code = ExitStatus.TASK_FAILED if failed else ExitStatus.STILL_RUNNING
        return WatchOutcome("timeout", "running", None, int(code))

    def _gave_up(self, err: HermesError) -> HermesError:
        """A failure that outlived --start-timeout: final, with its own code and exit status."""
        seconds = f"{self.config.start_timeout:g}s"
        if err.code is Code.NOT_FOUND:
            waited = f"still not found after --start-timeout {seconds}"
        else:
            waited = f"no read of the parent succeeded within --start-timeout {seconds}"
        detail = f"{err.detail}; {waited}" if err.detail else waited
        return HermesError(err.code, detail, retryable=False, status=err.status, hint=err.hint)

    def _fail(self, err: HermesError) -> WatchOutcome:
        """A final failure: its error, and the age of the last successful read (if any)."""
        self.reporter.error(err, retrying=False, delay=None)
        age = None if self.read_at is None else round(self.clock() - self.read_at, 3)
        return WatchOutcome("failed", "unknown", None, int(err.exit_status), err, age)

    def _proofs_settled(self) -> bool:
        """No task waits on a child proof that failed for now, or it had `FINAL_RETRIES` more
        cycles once every task was terminal (it then keeps its failure's code): a busy answer
        never ends a watch with a child it would have named, and never holds it forever."""
        if not any(e.unavailable_reason in RETRYING for e in self.entries):
            self.retried = 0
            return True
        self.retried += 1
        return self.retried > FINAL_RETRIES

    def after_cycle(self) -> None:
        """After each successful read of the parent (`follow --parent` reads children here)."""

    def amend(self, entries: list[TaskEntry]) -> list[TaskEntry]:
        """The task list as reported (`follow --parent`: with the gaps its children left)."""
        return entries

    def settled(self) -> bool:
        """Besides every task being terminal, may the watch end? (`recheck`: no end it just
        noticed still waits for a second look; `follow --parent`: every known child was read
        to its end.)"""
        return self.recheck is None or self.recheck.steady()

    def _cycle(self) -> bool:
        """One read; True when the task list changed (new rows, or a child's end rechecked)."""
        self.cycles += 1
        if self.shared is not None:
            self.shared.clear()
        reader = self.reader
        if not self.opened:
            warnings = read_history(reader)
            self.opened, fresh = True, True
        else:
            known = set(reader.window.keys)
            snap = reader.refresh()
            if snap.failure is not None:
                raise snap.failure
            warnings = [w for w in snap.warnings if w.code != "gap"]
            if not self._fill(known, warnings):
                warnings.append(WarningItem(code="gap", message=warning_message("gap")))
            fresh = bool(snap.new_keys) or len(reader.window.keys) != len(known)
        self._publish_warnings(warnings)
        if not fresh and self.built and not any(e.unavailable_reason in RETRYING for e in self.entries):
            changed = self.recheck is not None and self._report(self.recheck.again())
            self._publish_warnings(self.notes() if self.notes is not None else [])
            return changed
        # The whole task list from every row held (a failed build consumed nothing).
        self.built = False
        view = reader.view()  # the proven lineage's rows only: foreign rows build nothing
        messages = [view.messages[k] for k in view.keys]
        entries = recover(messages)
        if self.resolve is not None:
            entries = self.resolve(messages, entries)
        self.entries, self.built = self.amend(entries), True
        self._publish_warnings(self.notes() if self.notes is not None else [])
        for entry in self.entries:
            key = entry.number or ""
            if self.known.get(key) != entry:
                self.known[key] = entry
                self.reporter.task(entry)
        return True

    def _report(self, entries: list[TaskEntry]) -> bool:
        """Tasks found again without new rows: each changed one reported; True when any was."""
        changed = [e for e in entries if self.known.get(e.number or "") != e]
        self.entries = entries
        for entry in changed:
            self.known[entry.number or ""] = entry
            self.reporter.task(entry)
        return bool(changed)

    def _fill(self, known: set[tuple[str, int]], warnings: list[WarningItem]) -> bool:
        """Older pages until the newest block reaches rows known before this cycle (True), or
        the start, no progress or `MAX_FILL_PAGES` stop it (False: a gap). The warnings of a
        refresh made while paging join `warnings` (its gap is this cycle's own verdict)."""
        for _ in range(MAX_FILL_PAGES):
            window = self.reader.window
            block = window.keys[window.block_start :]
            if not block or not known or any(key in known for key in block):
                return True
            if window.at_start:
                return True
            self._note(f"fill: read older than {len(block)} new rows")
            result = self.reader.read_older()
            if result is not None:
                warnings += [w for w in result.warnings if w.code != "gap"]
            if result is None or not result.new_keys:
                return False
        return False

    def _publish_warnings(self, warnings: Sequence[WarningItem]) -> None:
        codes: set[str] = set()
        for item in warnings:
            if item.code not in codes and (item.code == "gap" or item.code not in self.warned):
                self.reporter.warning(item)
            codes.add(item.code)
        self.warned |= codes
