"""`follow --parent`'s children: one `Child` per task (its `Follower` and where it stands in
the budget), its rows and news reported through `Tagged`, tagged with the task (reading/
family.py drives them)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from msgspec import Struct

from hermes_task.core.documents import Row, TaskEntry, TaskInfo, WarningItem
from hermes_task.core.ui_strings import SETUP_WARNINGS
from hermes_task.core.wire import SessionDetail
from hermes_task.failures import HermesError
from hermes_task.reading.follower import Follower
from hermes_task.reading.polling import Outcome
from hermes_task.reading.watcher import WatchReporter


class FamilyReporter(WatchReporter, Protocol):
    def unavailable(self, entry: TaskEntry) -> None: ...
    def rows(self, rows: Sequence[Row], entry: TaskEntry | None = None) -> None: ...
    def child_warning(self, entry: TaskEntry, item: WarningItem) -> None: ...
    def child_error(self, entry: TaskEntry, error: HermesError, *, retrying: bool) -> None: ...


class Tagged:
    """A `follow.Reporter` for one child: its rows and news, tagged with the task (and, with
    `tui --recursive`, the `WatchReporter` of the child's own tasks' watch: its warnings and
    errors are the task's, its tasks reported by the family's list)."""

    def __init__(
        self, reporter: FamilyReporter, entry: TaskEntry, setup: Callable[[WarningItem], None]
    ) -> None:
        self.reporter = reporter
        self.entry = entry
        self.setup = setup  # a warning about the setup: once per run, not per task

    def state(self, task: TaskInfo) -> None:
        pass

    def task(self, entry: TaskEntry) -> None:
        pass

    def tasks(self, entries: Sequence[TaskEntry]) -> None:
        pass

    def warning(self, item: WarningItem) -> None:
        if item.code in SETUP_WARNINGS:
            self.setup(item)
        else:
            self.reporter.child_warning(self.entry, item)

    def rows(self, rows: Sequence[Row]) -> None:
        self.reporter.rows(rows, self.entry)

    def error(self, error: HermesError, *, retrying: bool, delay: float | None) -> None:
        self.reporter.child_error(self.entry, error, retrying=retrying)

    def result(self, outcome: Outcome, entries: Sequence[TaskEntry] = ()) -> None:
        pass


class Child(Struct):
    sid: str
    tagged: Tagged
    follower: Follower
    done: bool = False
    final: bool = False  # the parent's verdict is in: one more read, then done
    ended: tuple[str, str | None] | None = None  # (tip, end_reason) seen ended: one more read
    streak: str | None = None
    failures: int = 0
    missing_since: float | None = None
    read: bool = False  # a read succeeded: later ones wait for a probe that shows a change

    def probed(self) -> bool:
        """Is a probe what decides this child's next read (read before, running, no final
        read due, no failure to retry)? Not while its newest segment ended by compression with
        nothing newer proven: the newer segment is another session, found only by a read."""
        tip = self.follower.reader.tip
        partial = tip is not None and tip.end_reason == "compression"
        return self.read and not self.final and self.ended is None and self.streak is None and not partial

    def moved(self, probe: SessionDetail) -> bool:
        """Does the probe show anything its last page was not read under?"""
        basis = self.follower.reader.basis
        return basis is None or probe.message_count is None or probe != basis


__all__ = ["Child", "FamilyReporter", "Tagged"]
