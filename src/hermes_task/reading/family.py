"""`follow --parent`: every delegated task's new rows in one stream (pure of typer/rich).

`FamilyFollower` is the watch loop (`watch.py`) on the parent plus, after each successful read
of the parent, one `Follower.step()` (`follow.py`) for each of at most `MAX_CHILDREN_PER_CYCLE`
children, round robin over the children still being read. So every request is sequential (at
most one in flight, a fortiori one per task) and a cycle makes at most
`3 + MAX_CHILDREN_PER_CYCLE * 3` reads (detail, newest page, fresh detail each), plus the
bounded gap-filling older pages of `follow.py`: 20 tasks do not hammer the dashboard, they are
read in turn.

Invariants:
- a child is read only once its id is known from the parent's task object
  (`child_session_id`: the transcript's, or the store's proposal assigned over HTTP); an id
  that appears later is picked up on the next cycle; a task without one is reported once as
  unavailable; a store match withdrawn later (ambiguous now, or another child) stops that
  child's stream at once;
- each child is read as `follow CHILD` reads it (a `TaskReader` with the hint and the local
  store, so a rotated child is followed into its newer segments), and only after its detail
  proved it a delegated child of the parent's proven lineage (`reading/ownership.py`: the
  reader's gate, before any messages request); a child that fails is a `gap` on its task;
- each child's rows are reported once each, in order, tagged with the task (`Follower`'s
  rules); a child whose own segment ended gets one final read, then is done;
- a child that cannot be read is reported unreadable once, its code the task's `gap` (a `task`
  event; a line on stderr), and is no longer read: a final failure at once, a streak of 404s
  after `start_timeout`, a transient failure once the parent's verdict is in and
  `FINAL_RETRIES` retries failed; a transient failure before that is retried on its next turn;
- the stream ends when every task is terminal by the parent's verdict and every known child
  was read once more after that, or reported unreadable; or at `--timeout`;
- a warning about the setup (`SETUP_WARNINGS`: the backend, the local store), which every
  child would repeat, is reported once per run as the parent's own; a warning about a task's
  history is reported for that task;
- `rows` (--role, --tail) chooses each child's rows as `follow CHILD` does: --tail cuts the
  rows a child already holds at its first read, for the tasks of the parent's first read
  only; a task delegated later is new, every row of it (that --role keeps) is reported.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from msgspec import Struct
from msgspec.structs import replace

from hermes_task.core.documents import Row, TaskEntry, TaskInfo, WarningItem
from hermes_task.core.rowfilter import RowFilter
from hermes_task.core.ui_strings import SETUP_WARNINGS
from hermes_task.core.verdict import all_terminal
from hermes_task.failures import Code, HermesError
from hermes_task.reading.follow_outcome import FINAL_RETRIES
from hermes_task.reading.follower import FollowConfig, Follower, FollowOutcome
from hermes_task.reading.reader import TaskReader
from hermes_task.reading.watcher import Resolve, WatchConfig, Watcher, WatchReporter

MAX_CHILDREN_PER_CYCLE = 4


class FamilyReporter(WatchReporter, Protocol):
    def unavailable(self, entry: TaskEntry) -> None: ...
    def rows(self, entry: TaskEntry, rows: Sequence[Row]) -> None: ...
    def child_warning(self, entry: TaskEntry, item: WarningItem) -> None: ...
    def child_error(self, entry: TaskEntry, error: HermesError, *, retrying: bool) -> None: ...


class _Tagged:
    """A `follow.Reporter` for one child: its rows and news, tagged with the task."""

    def __init__(
        self, reporter: FamilyReporter, entry: TaskEntry, setup: Callable[[WarningItem], None]
    ) -> None:
        self.reporter = reporter
        self.entry = entry
        self.setup = setup  # a warning about the setup: once per run, not per task

    def state(self, task: TaskInfo) -> None:
        pass

    def warning(self, item: WarningItem) -> None:
        if item.code in SETUP_WARNINGS:
            self.setup(item)
        else:
            self.reporter.child_warning(self.entry, item)

    def rows(self, rows: Sequence[Row]) -> None:
        self.reporter.rows(self.entry, rows)

    def error(self, error: HermesError, *, retrying: bool, delay: float | None) -> None:
        self.reporter.child_error(self.entry, error, retrying=retrying)

    def result(self, outcome: FollowOutcome) -> None:
        pass


class _Child(Struct):
    sid: str
    tagged: _Tagged
    follower: Follower
    done: bool = False
    final: bool = False  # the parent's verdict is in: one more read, then done
    ended: tuple[str, str | None] | None = None  # (tip, end_reason) seen ended: one more read
    streak: str | None = None
    failures: int = 0
    missing_since: float | None = None


OpenChild = Callable[[str, frozenset[str]], TaskReader]


class FamilyFollower(Watcher):
    """The parent's watch, plus its children's rows."""

    def __init__(
        self,
        reader: TaskReader,
        reporter: FamilyReporter,
        config: WatchConfig,
        open_child: OpenChild,
        *,
        clock: Callable[[], float],
        sleep: Callable[[float], None],
        jitter: Callable[[], float],
        debug: Callable[[str], None] | None = None,
        resolve: Resolve | None = None,
        per_cycle: int = MAX_CHILDREN_PER_CYCLE,
        rows: RowFilter | None = None,
    ) -> None:
        super().__init__(
            reader, reporter, config, clock=clock, sleep=sleep, jitter=jitter, debug=debug, resolve=resolve
        )
        self.family = reporter
        self.open_child = open_child  # a reader for a child id, gated on the parent's segments
        self.per_cycle = per_cycle
        self.children: dict[str, _Child] = {}
        self.gaps: dict[str, tuple[str, str]] = {}  # task number -> (child id, gap code)
        self.listed: set[str] = set()
        self.turn = 0
        self.rows = rows or RowFilter()
        self.first: frozenset[str] | None = None  # the tasks of the first read: --tail cuts their backlog

    def amend(self, entries: list[TaskEntry]) -> list[TaskEntry]:
        out = []
        for entry in entries:
            gap = self.gaps.get(entry.number or "")
            if gap is not None and gap[0] == entry.child_session_id and entry.gap is None:
                entry = replace(entry, gap=gap[1])
            out.append(entry)
        return out

    def after_cycle(self) -> None:
        ended = all_terminal(self.entries)
        if self.first is None:
            self.first = frozenset(entry.number or "" for entry in self.entries)
        first = self.first
        for entry in self.entries:
            key, child_id = entry.number or "", entry.child_session_id
            child = self.children.get(key)
            if child is not None and child.sid != child_id:
                # The store's match was withdrawn (or names another child now): stop at once.
                del self.children[key]
                self.listed.discard(key)
                child = None
            if child_id is None:
                if key not in self.listed:
                    self.listed.add(key)
                    self.family.unavailable(entry)
                continue
            if child is None:
                if self.gaps.get(key, ("", ""))[0] == child_id:
                    continue  # this child was reported unreadable
                reader = self.open_child(child_id, frozenset(self.reader.path))
                tagged = _Tagged(self.family, entry, self._setup_warning)
                rows = self.rows if key in first else RowFilter(self.rows.roles)
                config = FollowConfig(rows=rows)
                follower = Follower(reader, tagged, config, clock=self.clock, sleep=self.sleep)
                child = self.children[key] = _Child(child_id, tagged, follower)
            child.tagged.entry = entry
            child.final = child.final or ended
        self._read_children()

    def _setup_warning(self, item: WarningItem) -> None:
        """A child's warning about the setup: reported as the parent's, once per run."""
        if item.code not in self.warned:
            self.warned.add(item.code)
            self.reporter.warning(item)

    def _read_children(self) -> None:
        pending = [c for c in self.children.values() if not c.done]
        if not pending:
            return
        start = self.turn % len(pending)
        chosen = (pending[start:] + pending[:start])[: self.per_cycle]
        self.turn = start + len(chosen)
        for child in chosen:
            self._read_child(child)

    def _read_child(self, child: _Child) -> None:
        final = child.final
        try:
            snap = child.follower.step()
        except HermesError as err:
            self._failed(child, err, final=final)
            return
        child.streak, child.failures, child.missing_since = None, 0, None
        if snap.failure is not None:
            self._unreadable(child, snap.failure)
            return
        reader = child.follower.reader
        tip = reader.tip
        seen = (tip.id, tip.end_reason) if tip is not None and reader.state() == "ended" else None
        if final or (seen is not None and seen == child.ended):
            child.done = True  # the read after the parent's verdict, or the child's final read
        child.ended = seen

    def _failed(self, child: _Child, err: HermesError, *, final: bool) -> None:
        """A child's read failed: unreadable when final (or past its bound), else retried."""
        if not err.retryable:
            self._unreadable(child, err)
            return
        child.failures += 1
        now = self.clock()
        if err.code is not Code.NOT_FOUND:
            child.missing_since = None
        elif child.missing_since is None:
            child.missing_since = now
        if child.missing_since is not None and now - child.missing_since >= self.config.start_timeout:
            waited = f"still not found after --start-timeout {self.config.start_timeout:g}s"
            self._unreadable(child, HermesError(err.code, waited, retryable=False, status=err.status))
        elif (final or child.ended is not None) and child.failures > FINAL_RETRIES:
            self._unreadable(child, err)
        elif err.code.value != child.streak:
            child.tagged.error(err, retrying=True, delay=None)
        child.streak = err.code.value

    def _unreadable(self, child: _Child, err: HermesError) -> None:
        """Report a child unreadable once: its error, and its code as the task's `gap`."""
        child.done = True
        child.tagged.error(err, retrying=False, delay=None)
        entry = child.tagged.entry
        key = entry.number or ""
        self.gaps[key] = (child.sid, err.code.value)
        self.entries = self.amend(self.entries)
        for amended in self.entries:
            if (amended.number or "") == key and self.known.get(key) != amended:
                self.known[key] = amended
                child.tagged.entry = amended
                self.reporter.task(amended)

    def settled(self) -> bool:
        return all(c.done for c in self.children.values())
