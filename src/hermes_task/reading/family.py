"""`follow --parent` and `tui`: the parent's watch (watcher.py) plus, after each good read of
it, its children's turn (a `Follower` each): probes, bounded reads, final reads (docs/commands.md,
"`--parent`", "Request rate", "`tui`").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import Protocol

import msgspec
from msgspec import Struct
from msgspec.structs import replace

from hermes_task.core.documents import Row, TaskEntry, TaskInfo, WarningItem, warning
from hermes_task.core.projection import RowFilter
from hermes_task.core.ui_strings import RECOVER, SETUP_WARNINGS, WarningCode
from hermes_task.core.verdict import all_terminal
from hermes_task.core.wire import SessionDetail
from hermes_task.failures import HermesError
from hermes_task.reading.api import gather
from hermes_task.reading.polling import FINAL_RETRIES, Follower, Outcome, PollConfig, Streak
from hermes_task.reading.reader import TaskReader
from hermes_task.reading.tasktree import MAX_CONVERSATIONS, caught, in_turn
from hermes_task.reading.watcher import Watcher, WatchReporter

MAX_PROBES_PER_CYCLE = 64
MAX_READS_PER_CYCLE = 32


OpenChild = Callable[[str, frozenset[str]], TaskReader]
# The watch of a proven child's own tasks (`tui --recursive`), reporting to its task's `Tagged`.
Nest = Callable[[TaskReader, "Tagged"], Watcher]


class Nested(Struct):
    sid: str
    watch: Watcher
    mark: object = None  # the child's newest row when `watch` last read: a new one reads again
    done: bool = False  # failed for good: its tasks stay as last read
    streak: Streak = msgspec.field(default_factory=Streak)

    def quiet(self, mark: object) -> bool:
        """Read once, its tasks terminal and settled, no row since (or failed for good)."""
        watch = self.watch
        closed = all(e.terminal for e in watch.entries) and watch.settled()
        return self.done or (watch.built and closed and mark == self.mark)


@dataclass(eq=False)
class FamilyFollower(Watcher):
    reporter: FamilyReporter
    open_child: OpenChild  # a reader for a child id, gated on the parent's segments
    _: KW_ONLY
    rows: RowFilter = field(default_factory=RowFilter)
    nest: Nest | None = None
    depth: int = 0  # levels of nested tasks (0: none; with `nest` only)

    def __post_init__(self) -> None:
        super().__post_init__()
        self.children: dict[str, Child] = {}
        self.gaps: dict[str, tuple[str, str]] = {}  # task number -> (child id, gap code)
        self.listed: set[str] = set()
        self.turn = 0
        self.first: frozenset[str] | None = None
        self.nested: dict[str, Nested] = {}  # task number -> its child's own tasks
        self.cut: dict[str, bool] = {}  # tasks whose child a bound left unexpanded -> the depth's

    def amend(self, entries: list[TaskEntry], prefix: str = "") -> list[TaskEntry]:
        """The parent's tasks (nested ones rebuilt from their watch), each with its gap and
        followed by its child's own tasks, renumbered under it."""
        out: list[TaskEntry] = []
        for entry in entries if prefix else [e for e in entries if "/" not in (e.number or "")]:
            if prefix:
                entry = replace(entry, number=prefix + (entry.number or "?"))
            key = entry.number or ""
            gap = self.gaps.get(key)
            if gap is not None and gap[0] == entry.child_session_id and entry.gap is None:
                entry = replace(entry, gap=gap[1])
            out.append(entry)
            nested = self.nested.get(key)
            if nested is not None and nested.sid == entry.child_session_id:
                out += self.amend(nested.watch.entries, key + "/")
        return out

    def after_cycle(self) -> None:
        if self.depth:
            self._nest()
        ended = all_terminal(self.entries) and not self._unnested()
        if self.first is None:  # the tasks of the first read: --tail cuts their backlog
            self.first = frozenset(entry.number or "" for entry in self.entries)
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
                    self.reporter.unavailable(entry)
                continue
            if child is None:
                if self.gaps.get(key, ("", ""))[0] == child_id:
                    continue  # this child was reported unreadable
                parents = self._lineage(key)
                visited = child_id in self.reader.path or any(
                    c.sid == child_id for k, c in self.children.items() if k != key
                )
                if parents is None or ("/" in key and visited):
                    continue  # its conversation is read elsewhere (recover --recursive's rule)
                reader = self.open_child(child_id, parents)
                tagged = Tagged(self.reporter, entry, self._setup_warning)
                config = PollConfig(rows=self.rows if key in self.first else RowFilter(self.rows.roles))
                follower = Follower(reader, tagged, config, clock=self.clock, sleep=self.sleep)
                child = self.children[key] = Child(child_id, tagged, follower)
            child.tagged.entry = entry
            child.final = child.final or ended
        self._read_children()

    def lineages(self) -> frozenset[str]:
        """Every watched conversation's proven segments (the parent's, each nested one's)."""
        return frozenset(self.reader.path).union(*(n.watch.reader.path for n in list(self.nested.values())))

    def _lineage(self, key: str) -> frozenset[str] | None:
        """The proven lineage of the conversation holding task `key` (None: no longer watched)."""
        above = key.rpartition("/")[0]
        if not above:
            return frozenset(self.reader.path)
        nested = self.nested.get(above)
        return None if nested is None else frozenset(nested.watch.reader.path)

    def _nest(self) -> None:
        """Each proven child's own tasks: watched once its child was read, read while they may change."""
        for key, child in self.children.items():
            nested = self.nested.get(key)
            if not child.read or (nested is not None and nested.sid == child.sid):
                continue
            deep = key.count("/") >= self.depth
            parents = self._lineage(key)
            if parents is None:
                continue  # the conversation holding it is no longer watched
            if deep or len(self.nested) >= MAX_CONVERSATIONS:
                self._bound(key, deep=deep)
                continue
            assert self.nest is not None
            self.nested[key] = Nested(child.sid, self.nest(self.open_child(child.sid, parents), child.tagged))
        final = all_terminal(self.entries)
        for key, nested in list(self.nested.items()):
            owner = self.children.get(key)
            if owner is None or owner.sid != nested.sid:
                del self.nested[key]  # its task's child changed: a new watch, if proven
                continue
            mark = owner.follower.reader.window.keys[-1:]
            if nested.quiet(mark):
                continue
            try:
                nested.watch.cycle()
            except HermesError as err:
                self._failed(owner, err, final=final, nested=nested)
                continue
            nested.mark = mark
            nested.streak.clear()
        self._report(self.amend(self.entries))

    def _unnested(self) -> bool:
        """Is a read child's own task list never read (nor left to a bound): no verdict yet?"""
        nested = self.nested
        return bool(self.depth) and any(
            c.read
            and k not in self.cut
            and (k not in nested or not (nested[k].watch.built or nested[k].done))
            and self._lineage(k) is not None  # else its conversation's watch is gone
            for k, c in self.children.items()
        )

    def _bound(self, key: str, *, deep: bool) -> None:
        """`recover`'s warning for a task whose child's own tasks a bound leaves unread."""
        if key in self.cut:
            return
        self.cut[key] = deep
        left = sum(1 for d in self.cut.values() if d == deep)
        words = RECOVER["depth_bound" if deep else "visit_bound"]
        detail = words.format(depth=self.depth, n=MAX_CONVERSATIONS, left=left)
        self.reporter.warning(warning(WarningCode.bound_reached, detail))

    def _setup_warning(self, item: WarningItem) -> None:
        if item.code not in self.warned:
            self.warned.add(item.code)
            self.reporter.warning(item)

    def _read_children(self) -> None:
        """Probe, then read, then give the children seen ended their final read."""
        pending = [c for c in self.children.values() if not c.done]
        probed, self.turn = in_turn([c for c in pending if c.probed()], MAX_PROBES_PER_CYCLE, self.turn)
        rest = [c for c in pending if not c.probed()]  # decided before any probe of this cycle
        # This cycle's details (`shared`): a child whose end the undelivered-completion check
        # just looked at is probed with that same answer, not asked twice.
        jobs = [
            lambda r=c.follower.reader: caught(self.shared or r.client.detail, r.path[-1]) for c in probed
        ]
        probes = gather(jobs, what="child change probes", debug=self.debug)
        changed: list[tuple[Child, SessionDetail | None]] = []
        for child, got in zip(probed, probes, strict=True):
            if isinstance(got, HermesError):
                self._failed(child, got, final=False)  # read in full on its next turn
            elif (basis := child.follower.reader.basis) is None or got.message_count is None or got != basis:
                changed.append((child, got))
        order = [c for c in rest if c.read and (c.final or c.ended)]  # final reads due
        order += [c for c in rest if not c.read] + [c for c in rest if c.read and not (c.final or c.ended)]
        due = (changed + [(c, None) for c in order])[:MAX_READS_PER_CYCLE]
        self._read_all(due)
        ending = [c for c, _ in due if not c.done and c.ended is not None and c.streak.code is None]
        self._read_all([(c, None) for c in ending[: max(0, MAX_READS_PER_CYCLE - len(due))]])

    def _read_all(self, due: list[tuple[Child, SessionDetail | None]]) -> None:
        """Fetch `due` side by side, then deliver and settle each in order."""
        jobs = [lambda c=c, p=p: caught(c.follower.fetch, p) for c, p in due]
        for (child, _), got in zip(due, gather(jobs, what="child reads", debug=self.debug), strict=True):
            final = child.final
            if isinstance(got, HermesError):
                self._failed(child, got, final=final)
                continue
            snap = child.follower.deliver(got)
            child.streak.clear()
            if snap.failure is not None:
                self._unreadable(child, snap.failure)
                continue
            child.read = True
            reader = child.follower.reader
            tip = reader.tip
            seen = (tip.id, tip.end_reason) if tip is not None and reader.state() == "ended" else None
            if final or (seen is not None and seen == child.ended):
                child.done = True  # the read after the parent's verdict, or the child's final read
            child.ended = seen

    def _failed(self, child: Child, err: HermesError, *, final: bool, nested: Nested | None = None) -> None:
        """A read of the child (`nested`: of its own tasks) failed: given up when final or past its
        bound (the child unreadable, the nested watch done), else retried."""
        streak, now = child.streak if nested is None else nested.streak, self.clock()
        streak.count(err, now)
        since = streak.missing_since if nested is None and err.retryable else None
        if since is not None and now - since >= self.config.start_timeout:
            waited = f"still not found after --start-timeout {self.config.start_timeout:g}s"
            err = HermesError(err.code, waited, retryable=False, status=err.status)
        final = final or (nested is None and child.ended is not None)
        give_up = not err.retryable or (final and streak.failures > FINAL_RETRIES)
        if give_up and nested is not None:
            nested.done = True
            child.tagged.error(err, retrying=False, delay=None)
        elif give_up:
            self._unreadable(child, err)
        elif err.code is not streak.code:
            child.tagged.error(err, retrying=True, delay=None)
        streak.code = err.code

    def _unreadable(self, child: Child, err: HermesError) -> None:
        """Report a child unreadable once: its error, and its code as the task's `gap`."""
        child.done = True
        child.tagged.error(err, retrying=False, delay=None)
        key = child.tagged.entry.number or ""
        self.gaps[key] = (child.sid, err.code.value)
        self.entries = self.amend(self.entries)
        for amended in self.entries:
            if (amended.number or "") == key and self.known.get(key) != amended:
                self.known[key] = amended
                child.tagged.entry = amended
                self.reporter.task(amended)

    def settled(self) -> bool:
        """Every known child read to its end, every nested watch quiet (and `recheck` steady)."""
        children = self.children
        return (
            super().settled()
            and all(c.done for c in children.values())
            and not self._unnested()
            and all(
                n.quiet(children[k].follower.reader.window.keys[-1:]) if k in children else True
                for k, n in self.nested.items()
            )
        )


class FamilyReporter(WatchReporter, Protocol):
    def unavailable(self, entry: TaskEntry) -> None: ...
    def rows(self, rows: Sequence[Row], entry: TaskEntry | None = None) -> None: ...
    def child_warning(self, entry: TaskEntry, item: WarningItem) -> None: ...
    def child_error(self, entry: TaskEntry, error: HermesError, *, retrying: bool) -> None: ...


@dataclass(eq=False)
class Tagged:
    """One child's (and its own tasks' watch's) reporter: its news tagged with the task."""

    reporter: FamilyReporter
    entry: TaskEntry
    setup: Callable[[WarningItem], None]  # a warning about the setup: once per run, not per task

    def warning(self, item: WarningItem) -> None:
        if item.code in SETUP_WARNINGS:
            self.setup(item)
        else:
            self.reporter.child_warning(self.entry, item)

    def rows(self, rows: Sequence[Row]) -> None:
        self.reporter.rows(rows, self.entry)

    def error(self, error: HermesError, *, retrying: bool, delay: float | None) -> None:
        self.reporter.child_error(self.entry, error, retrying=retrying)

    # The family reports the state, the tasks and the result itself.
    def state(self, task: TaskInfo) -> None: ...
    def task(self, entry: TaskEntry) -> None: ...
    def tasks(self, entries: Sequence[TaskEntry]) -> None: ...
    def result(self, outcome: Outcome, entries: Sequence[TaskEntry] = ()) -> None: ...


class Child(Struct):
    sid: str
    tagged: Tagged
    follower: Follower
    done: bool = False
    final: bool = False  # the parent's verdict is in: one more read, then done
    ended: tuple[str, str | None] | None = None  # (tip, end_reason) seen ended: one more read
    streak: Streak = msgspec.field(default_factory=Streak)  # the transient failures in a row
    read: bool = False  # a read succeeded: later ones wait for a probe that shows a change

    def probed(self) -> bool:
        """Does a probe decide the next read (not after a compression: a read finds the newer one)?"""
        tip = self.follower.reader.tip
        partial = tip is not None and tip.end_reason == "compression"
        return (
            self.read and not self.final and self.ended is None and self.streak.code is None and not partial
        )
