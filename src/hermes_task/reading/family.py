"""`follow --parent`: every delegated task's new rows in one stream (pure of typer/rich).

`FamilyFollower` is the watch loop (`watch.py`) on the parent plus, after each successful read
of the parent, one `Follower.step()` (`follow.py`) for each of at most `MAX_CHILDREN_PER_CYCLE`
children, round robin over the children still being read. So every request is sequential (at
most one in flight, a fortiori one per task) and a cycle makes at most
`3 + MAX_CHILDREN_PER_CYCLE * 3` reads (detail, newest page, fresh detail each), plus the
bounded gap-filling older pages of `follow.py`: 20 tasks do not hammer the dashboard, they are
read in turn.

Invariants: a child is read only once its id is known from the parent's task object
(`child_session_id`); an id that appears later (a newer result row, or store-proposed ids when
they land) is picked up on the next cycle; a task without one is reported once as unavailable.
Each child's rows are reported once each, in order, tagged with the task (`Follower`'s rules).
A child whose read fails for good is reported once and no longer read; a transient failure is
retried on its next turn. The stream ends when every task is terminal by the parent's verdict
and every known child has been read once more after that (its final rows), or at `--timeout`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from hermes_task.core.documents import Row, TaskEntry, TaskInfo, WarningItem
from hermes_task.core.verdict import all_terminal
from hermes_task.failures import HermesError
from hermes_task.reading.follow import FollowConfig, Follower, FollowOutcome
from hermes_task.reading.reader import TaskReader
from hermes_task.reading.watch import Resolve, WatchConfig, Watcher, WatchReporter
from hermes_task.records import dataclass

MAX_CHILDREN_PER_CYCLE = 4


class FamilyReporter(WatchReporter, Protocol):
    def unavailable(self, entry: TaskEntry) -> None: ...
    def rows(self, entry: TaskEntry, rows: Sequence[Row]) -> None: ...
    def child_warning(self, entry: TaskEntry, item: WarningItem) -> None: ...
    def child_error(self, entry: TaskEntry, error: HermesError, *, retrying: bool) -> None: ...


class _Tagged:
    """A `follow.Reporter` for one child: its rows and news, tagged with the task."""

    def __init__(self, reporter: FamilyReporter, entry: TaskEntry) -> None:
        self.reporter = reporter
        self.entry = entry

    def state(self, task: TaskInfo) -> None:
        pass

    def warning(self, item: WarningItem) -> None:
        self.reporter.child_warning(self.entry, item)

    def rows(self, rows: Sequence[Row]) -> None:
        self.reporter.rows(self.entry, rows)

    def error(self, error: HermesError, *, retrying: bool, delay: float | None) -> None:
        self.reporter.child_error(self.entry, error, retrying=retrying)

    def result(self, outcome: FollowOutcome) -> None:
        pass


@dataclass
class _Child:
    tagged: _Tagged
    follower: Follower
    done: bool = False
    final: bool = False  # the parent's verdict is in: one more read, then done
    streak: str | None = None


class FamilyFollower(Watcher):
    """The parent's watch, plus its children's rows."""

    def __init__(
        self,
        reader: TaskReader,
        reporter: FamilyReporter,
        config: WatchConfig,
        open_child: Callable[[str], TaskReader],
        *,
        clock: Callable[[], float],
        sleep: Callable[[float], None],
        jitter: Callable[[], float],
        debug: Callable[[str], None] | None = None,
        resolve: Resolve | None = None,
        per_cycle: int = MAX_CHILDREN_PER_CYCLE,
    ) -> None:
        super().__init__(
            reader, reporter, config, clock=clock, sleep=sleep, jitter=jitter, debug=debug, resolve=resolve
        )
        self.family = reporter
        self.open_child = open_child
        self.per_cycle = per_cycle
        self.children: dict[str, _Child] = {}
        self.listed: set[str] = set()
        self.turn = 0

    def after_cycle(self) -> None:
        ended = all_terminal(self.entries)
        for entry in self.entries:
            key, child_id = entry.number or "", entry.child_session_id
            if child_id is None:
                if key not in self.listed:
                    self.listed.add(key)
                    self.family.unavailable(entry)
                continue
            child = self.children.get(key)
            if child is None:
                reader = self.open_child(child_id)
                tagged = _Tagged(self.family, entry)
                follower = Follower(reader, tagged, FollowConfig(), clock=self.clock, sleep=self.sleep)
                child = self.children[key] = _Child(tagged, follower)
            child.tagged.entry = entry
            child.final = child.final or ended
        self._read_children()

    def _read_children(self) -> None:
        pending = [c for c in self.children.values() if not c.done]
        if not pending:
            return
        start = self.turn % len(pending)
        chosen = (pending[start:] + pending[:start])[: self.per_cycle]
        self.turn = start + len(chosen)
        for child in chosen:
            final = child.final
            try:
                snap = child.follower.step()
            except HermesError as err:
                if not err.retryable:
                    child.tagged.error(err, retrying=False, delay=None)
                    child.done = True
                elif err.code.value != child.streak:
                    child.tagged.error(err, retrying=True, delay=None)
                child.streak = err.code.value
                continue
            child.streak = None
            if snap.failure is not None:
                child.tagged.error(snap.failure, retrying=False, delay=None)
                child.done = True
            elif final:
                child.done = True

    def settled(self) -> bool:
        return all(c.done for c in self.children.values())
