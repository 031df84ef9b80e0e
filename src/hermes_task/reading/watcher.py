"""`recover --watch`: the poll loop (polling.py) on a parent chat until every task is terminal
(docs/commands.md, "`--watch`: wait for every task"). The task list is rebuilt only from new rows
of the proven lineage, else `recheck` looks at the children again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import KW_ONLY, dataclass
from typing import Protocol

from hermes_task.core.delegations import recover
from hermes_task.core.documents import TaskEntry, WarningItem, warning
from hermes_task.core.ui_strings import RETRYING, WarningCode
from hermes_task.core.verdict import all_terminal, exit_status, verdict
from hermes_task.core.wire import WireMessage
from hermes_task.failures import ExitStatus, HermesError
from hermes_task.reading.api import SharedDetails
from hermes_task.reading.polling import FINAL_RETRIES, MAX_FILL_PAGES, Ending, Outcome, PollLoop, Reports
from hermes_task.reading.tasktree import read_history


class WatchReporter(Reports, Protocol):
    def task(self, entry: TaskEntry) -> None: ...
    def tasks(self, entries: Sequence[TaskEntry]) -> None: ...
    def result(self, outcome: Outcome, entries: Sequence[TaskEntry]) -> None: ...


Resolve = Callable[[Sequence[WireMessage], list[TaskEntry]], list[TaskEntry]]


class Recheck(Protocol):
    """Tasks that change without new parent rows: a child's proven end."""

    def again(self) -> list[TaskEntry]: ...  # the last resolved tasks, checked once more
    def steady(self) -> bool: ...  # may the watch end on what the last check found?


@dataclass(eq=False)
class Watcher(PollLoop):
    label = "watch"
    reporter: WatchReporter
    _: KW_ONLY
    resolve: Resolve | None = None
    recheck: Recheck | None = None
    shared: SharedDetails | None = None  # one cycle's details: cleared as each starts
    notes: Callable[[], list[WarningItem]] = list  # the run's own warnings (the store's)

    def __post_init__(self) -> None:
        self.built = False  # the task list is built from every row held (a failed build: issue 35)
        self.retried = 0  # cycles since every task was terminal with a child's proof failing
        self.opened = False
        self.entries: list[TaskEntry] = []
        self.known: dict[str, TaskEntry] = {}
        self.changed = False  # did the last cycle change the task list?

    def settle(self) -> Outcome | bool:
        if self.changed:
            self.reporter.tasks(self.entries)
        self.after_cycle()
        if not all_terminal(self.entries) or not self.settled():
            return False
        # A child proof failing for now: `FINAL_RETRIES` more cycles (identity.md, "Proven stays proven").
        self.retried = self.retried + 1 if any(e.unavailable_reason in RETRYING for e in self.entries) else 0
        if 0 < self.retried <= FINAL_RETRIES:
            return False
        return self._ended("ended")

    def _ended(self, how: Ending) -> Outcome:
        code = exit_status(self.entries) if self.config.exit_status else ExitStatus.OK
        return Outcome(how, "ended", verdict(self.entries), int(code))

    def timed_out(self) -> Outcome:
        """--timeout ran out after a good read: exit 9 only when a task is still running."""
        if all_terminal(self.entries):
            return self._ended("timeout")
        failed = self.config.exit_status and verdict(self.entries) in ("failed", "unreported")
        code = ExitStatus.TASK_FAILED if failed else ExitStatus.STILL_RUNNING
        return Outcome("timeout", "running", None, int(code))

    def finish(self, outcome: Outcome) -> None:
        self.reporter.result(outcome, self.entries)

    def after_cycle(self) -> None:
        """After each good read of the parent (`follow --parent` reads children here)."""

    def amend(self, entries: list[TaskEntry]) -> list[TaskEntry]:
        """The task list as reported (`follow --parent`: with the gaps its children left)."""
        return entries

    def settled(self) -> bool:
        return self.recheck is None or self.recheck.steady()

    def cycle(self) -> HermesError | None:
        """One read; `changed`: the task list changed."""
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
                warnings.append(warning(WarningCode.gap))
            fresh = bool(snap.new_keys) or len(reader.window.keys) != len(known)
        self.warned |= self._warn(warnings)
        if not fresh and self.built and not any(e.unavailable_reason in RETRYING for e in self.entries):
            self.changed = self.recheck is not None and self._report(self.recheck.again())
            self.warned |= self._warn(self.notes())
            return None
        self.built = False
        view = reader.view()  # the proven lineage's rows only: foreign rows build nothing
        messages = [view.messages[k] for k in view.keys]
        entries = recover(messages)
        if self.resolve is not None:
            entries = self.resolve(messages, entries)
        self.entries, self.built = self.amend(entries), True
        self.warned |= self._warn(self.notes())
        self._report(self.entries)
        self.changed = True
        return None

    def _report(self, entries: list[TaskEntry]) -> bool:
        changed = [e for e in entries if self.known.get(e.number or "") != e]
        self.entries = entries
        for entry in changed:
            self.known[entry.number or ""] = entry
            self.reporter.task(entry)
        return bool(changed)

    def _fill(self, known: set[tuple[str, int]], warnings: list[WarningItem]) -> bool:
        """Older pages until the newest block reaches rows known before (True), or the start,
        no progress or `MAX_FILL_PAGES` stop it (False: a gap); paging's warnings join `warnings`."""
        for _ in range(MAX_FILL_PAGES):
            window = self.reader.window
            block = window.keys[window.block_start :]
            if not block or not known or window.at_start or any(key in known for key in block):
                return True
            self._note(f"fill: read older than {len(block)} new rows")
            result = self.reader.read_older()
            if result is not None:
                warnings += [w for w in result.warnings if w.code != "gap"]
            if result is None or not result.new_keys:
                return False
        return False
