"""The watch loop of `recover --watch`: poll a parent chat until every delegated task is terminal.

`Watcher` is the cycle of the one poll loop (reading/polling.py) over one `TaskReader` anchored
at the parent. Invariants:
- the history is read once (the first cycle: every page); each later cycle is one
  `TaskReader.refresh()`, plus older pages only to close a gap back to rows already known (at
  most `MAX_FILL_PAGES`, else a `gap` warning);
- the task list is rebuilt only when a cycle brought new rows; in a cycle without, `recheck`
  (reading/tasktree.py) checks the known tasks' children again, so a child's end is noticed
  without a parent row; a child proven once is not proven again (`StoreHints.shown`, a check
  keeps its proof), so a cycle costs bounded reads whatever the number of tasks, each detail
  once (`shared`); a task is reported when it first appears and when its entry changes, keyed
  by its `CALL.TASK` number;
- the watch ends `ended` when there is at least one task, every task is terminal and
  `recheck` is steady (an end it just noticed had its second look);
- exit 9 only when the last read succeeded and showed a task still running; every task
  terminal at the deadline (`follow --parent` still reading a child) ends by the verdict;
- tasks are built from the reader's path-filtered view only (rows of the proven lineage).
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
from hermes_task.reading.polling import FINAL_RETRIES, MAX_FILL_PAGES, Outcome, PollLoop, Reports
from hermes_task.reading.tasktree import read_history


class WatchReporter(Reports, Protocol):
    def task(self, entry: TaskEntry) -> None: ...
    def tasks(self, entries: Sequence[TaskEntry]) -> None: ...
    def result(self, outcome: Outcome, entries: Sequence[TaskEntry]) -> None: ...


# Child ids the transcript lacks, proposed by the local store and proven over HTTP
# (reading/hints.py `find_children`), or the tasks as they are.
Resolve = Callable[[Sequence[WireMessage], list[TaskEntry]], list[TaskEntry]]


class Recheck(Protocol):
    """Tasks that change without new parent rows: a child's proven end (reading/tasktree.py)."""

    def again(self) -> list[TaskEntry]: ...  # the last resolved tasks, checked once more
    def steady(self) -> bool: ...  # may the watch end on what the last check found?


@dataclass(eq=False)
class Watcher(PollLoop):
    """One watch of one parent chat. `run()` reports a result exactly once and returns it."""

    label = "watch"
    reporter: WatchReporter
    _: KW_ONLY
    resolve: Resolve | None = None
    recheck: Recheck | None = None
    shared: SharedDetails | None = None  # one cycle's details (`resolve`, `recheck`): cleared as each starts
    notes: Callable[[], list[WarningItem]] = list  # the run's own warnings (the store's), once each

    def __post_init__(self) -> None:
        # Is the task list built from every row the window holds? Only a whole build (resolve
        # included) sets it: a cycle that failed part-way consumes no row (issue 35).
        self.built = False
        self.retried = 0  # cycles since every task was terminal with a child's proof failing
        self.opened = False
        self.entries: list[TaskEntry] = []
        self.known: dict[str, TaskEntry] = {}
        self.changed = False  # did the last cycle change the task list?

    # -- the loop's hooks (reading/polling.py runs the loop) ---------------------------------

    def settle(self) -> Outcome | bool:
        """After a good read: the task list when it changed, the subclass's step, and the
        ending when every task is terminal and the watch may end."""
        if self.changed:
            self.reporter.tasks(self.entries)
        self.after_cycle()
        if all_terminal(self.entries) and self.settled() and self._proofs_settled():
            code = exit_status(self.entries) if self.config.exit_status else ExitStatus.OK
            return Outcome("ended", "ended", verdict(self.entries), int(code))
        return False

    def failed(self, err: HermesError, age: float | None) -> Outcome:
        return Outcome("failed", "unknown", None, int(err.exit_status), err, age)

    def timed_out(self) -> Outcome:
        """--timeout ran out after a good read: exit 9 only when a task is still running;
        every task terminal (`follow --parent` still reading a child): the verdict."""
        config, entries = self.config, self.entries
        if all_terminal(entries):
            code = exit_status(entries) if config.exit_status else ExitStatus.OK
            return Outcome("timeout", "ended", verdict(entries), int(code))
        failed = config.exit_status and verdict(entries) in ("failed", "unreported")
        code = ExitStatus.TASK_FAILED if failed else ExitStatus.STILL_RUNNING
        return Outcome("timeout", "running", None, int(code))

    def finish(self, outcome: Outcome) -> None:
        self.reporter.result(outcome, self.entries)

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
        noticed waits for a second look.)"""
        return self.recheck is None or self.recheck.steady()

    def cycle(self) -> HermesError | None:
        """One read; `changed`: the task list changed (new rows, or a child's end rechecked)."""
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
        # The whole task list from every row held (a failed build consumed nothing).
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
        """Tasks found again without new rows: each changed one reported; True when any was."""
        changed = [e for e in entries if self.known.get(e.number or "") != e]
        self.entries = entries
        for entry in changed:
            self.known[entry.number or ""] = entry
            self.reporter.task(entry)
        return bool(changed)

    def _fill(self, known: set[tuple[str, int]], warnings: list[WarningItem]) -> bool:
        """Older pages until the newest block reaches rows known before this cycle (True), or
        the start, no progress or `MAX_FILL_PAGES` stop it (False: a gap). A refresh's warnings
        while paging join `warnings` (but its gap: this cycle decides its own)."""
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
