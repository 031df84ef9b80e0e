"""`search`: every task of a parent chat read whole and searched, one task at a time, reported
as found (pure of typer and rich). Which tasks and rows, the bounds, and the codes of a task not
searched whole: docs/commands.md, `search`. Invariant: the run's tally is kept in `Tally` as it
goes, so an interrupted search still reports what it found.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from msgspec import Struct
from msgspec.structs import replace

from hermes_task.core.documents import TaskEntry, WarningItem
from hermes_task.core.projection import Hit, search_row
from hermes_task.core.ui_strings import SEARCH
from hermes_task.reading.api import DashboardAPI
from hermes_task.reading.hints import StoreHints, find_children
from hermes_task.reading.reader import INCOMPLETE, TaskReader
from hermes_task.reading.tasktree import MAX_READS, RUN_WIDE, build, read_child, read_conversation, unread

MAX_TASKS = MAX_READS
Searched = Literal["whole", "partial", "no"]


class TaskSearch(Struct, frozen=True, kw_only=True):
    """How one task's transcript was searched: `searched` whole, in part or not at all, and
    why not whole (`code`, `message`); the proven segments read and the counts."""

    task: TaskEntry
    searched: Searched
    code: str | None = None
    message: str | None = None
    segments: tuple[str, ...] = ()
    rows: int = 0
    matches: int = 0


class Tally(Struct):
    """The run so far: tasks known, tasks searched whole, matching lines, and whether the
    search is complete (set at its end: every task whole, every row served)."""

    tasks: int = 0
    searched: int = 0
    matches: int = 0
    complete: bool = False


class SearchReporter(Protocol):
    def hits(self, task: TaskEntry, hits: Sequence[Hit]) -> None: ...
    def warning(self, item: WarningItem, task: TaskEntry | None) -> None: ...
    def task(self, outcome: TaskSearch) -> None: ...


class Query(Struct, frozen=True, kw_only=True):
    pattern: re.Pattern[str]
    context: int = 0
    reasoning: bool = False


@dataclass
class _Run:
    client: DashboardAPI
    hints: StoreHints
    query: Query
    reporter: SearchReporter
    tally: Tally
    said: set[tuple[str, str]] = field(default_factory=set)
    whole: bool = True  # no run-wide reason (a parent read in part, rows not served) says otherwise

    def run_warnings(self, items: Sequence[WarningItem]) -> None:
        """Warnings about the run, each once; one that says rows were not read or served
        leaves the search incomplete."""
        for item in items:
            if item.code in INCOMPLETE or item.code == "legacy_backend":
                self.whole = False
            if (item.code, item.message) not in self.said:
                self.said.add((item.code, item.message))
                self.reporter.warning(item, None)

    def search(self, parent_id: str, max_tasks: int) -> None:
        parent = read_conversation(TaskReader(self.client, parent_id, hint=False))
        tasks, warnings = build(
            parent,
            lambda sid: read_conversation(TaskReader(self.client, sid, hint=True, store=self.hints)),
            recursive=False,
            resolve=lambda conv, found: find_children(self.client, self.hints, conv.messages, found),
            read_detail=self.client.detail,
        )
        self.tally.tasks = len(tasks)
        self.run_warnings([*warnings, *self.hints.warnings()])
        read = 0
        for task in tasks:
            missing = unread(task)
            if missing is not None:
                outcome = TaskSearch(task=task, searched="no", code=missing.code, message=missing.message)
            elif read >= max_tasks:
                bound = SEARCH["task_bound"].format(n=max_tasks)
                outcome = TaskSearch(task=task, searched="no", code="bound_reached", message=bound)
            else:
                read += 1
                outcome = self.search_task(task, frozenset(parent.path))
                self.tally.searched += outcome.searched == "whole"
            self.reporter.task(outcome)
        self.tally.complete = self.whole and self.tally.searched == len(tasks)

    def search_task(self, task: TaskEntry, parents: frozenset[str]) -> TaskSearch:
        """Read the child whole (`older --all`), search its rows, report its hits and warnings."""
        read = read_child(self.client, task.child_session_id or "", parents, self.hints)
        matches, query = 0, self.query
        for row in read.rows:
            hits = search_row(row, query.pattern, context=query.context, reasoning=query.reasoning)
            if hits:  # reported as found: an interrupted search keeps them
                matches += len(hits)
                self.tally.matches += len(hits)
                self.reporter.hits(task, hits)
        self.run_warnings([w for w in read.warnings if w.code in RUN_WIDE])
        for item in (w for w in read.warnings if w.code not in RUN_WIDE):
            self.reporter.warning(item, task)
        base = TaskSearch(
            task=task, searched="whole", segments=read.segments, rows=len(read.rows), matches=matches
        )
        short = read.shortfall()
        if short is None and read.has_older:  # every early stop of the paging warns; the rule once more
            short = ("bound_reached", "older rows were not read")
        if short is None:
            return base
        searched: Searched = "no" if read.failure is not None and not read.rows else "partial"
        segments = base.segments if searched == "partial" else ()
        return replace(base, searched=searched, code=short[0], message=short[1], segments=segments)


def search_parent(
    client: DashboardAPI,
    parent_id: str,
    hints: StoreHints,
    query: Query,
    reporter: SearchReporter,
    tally: Tally,
    *,
    max_tasks: int = MAX_TASKS,
) -> Tally:
    """Search every task of `parent_id` (module docstring); a failure to read the parent
    itself raises `HermesError`, a task's child that fails is reported on its task."""
    _Run(client, hints, query, reporter, tally).search(parent_id, max_tasks)
    return tally
