"""`search`: every task of a parent chat read whole and searched, one at a time, reported as
found (docs/commands.md, `search`). The tally is kept in `Tally` as it goes, so an interrupted
search still reports what it found.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal, Protocol

from msgspec import Struct
from msgspec.structs import replace

from hermes_task.core.documents import TaskEntry, WarningItem
from hermes_task.core.projection import Hit, search_row
from hermes_task.core.ui_strings import SEARCH
from hermes_task.reading.api import DashboardAPI
from hermes_task.reading.hints import StoreHints, find_children
from hermes_task.reading.reader import INCOMPLETE, TaskReader, Transcript
from hermes_task.reading.tasktree import MAX_READS, RUN_WIDE, build, read_child, read_conversation, unread

Searched = Literal["whole", "partial", "no"]


class TaskSearch(Struct, frozen=True, kw_only=True):
    """How one task's transcript was searched, why not whole, the segments read, the counts."""

    task: TaskEntry
    searched: Searched
    code: str | None = None
    message: str | None = None
    segments: tuple[str, ...] = ()
    rows: int = 0
    matches: int = 0


class Tally(Struct):
    """The run so far; `complete` is set at its end: every task whole, every row served."""

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


def search_parent(
    client: DashboardAPI,
    parent_id: str,
    hints: StoreHints,
    query: Query,
    reporter: SearchReporter,
    tally: Tally,
    *,
    max_tasks: int = MAX_READS,
) -> Tally:
    """Search every task of `parent_id`; only a failure to read the parent itself raises."""
    said: set[tuple[str, str]] = set()
    whole = True  # no run-wide reason (a parent read in part, rows not served) says otherwise

    def run_warnings(items: Sequence[WarningItem]) -> None:
        """Warnings about the run, each once; rows not read or served leave the search incomplete."""
        nonlocal whole
        for item in items:
            if item.code in INCOMPLETE or item.code == "legacy_backend":
                whole = False
            if (item.code, item.message) not in said:
                said.add((item.code, item.message))
                reporter.warning(item, None)

    parent = read_conversation(TaskReader(client, parent_id, hint=False))
    tasks, warnings = build(
        parent,
        lambda sid: read_conversation(TaskReader(client, sid, hint=True, store=hints)),
        recursive=False,
        resolve=lambda conv, found: find_children(client, hints, conv.messages, found),
        read_detail=client.detail,
    )
    tally.tasks = len(tasks)
    run_warnings([*warnings, *hints.warnings()])
    read = 0
    for task in tasks:
        if (missing := unread(task)) is not None:
            outcome = TaskSearch(task=task, searched="no", code=missing.code, message=missing.message)
        elif read >= max_tasks:
            bound = SEARCH["task_bound"].format(n=max_tasks)
            outcome = TaskSearch(task=task, searched="no", code="bound_reached", message=bound)
        else:
            read += 1
            child = read_child(client, task.child_session_id or "", frozenset(parent.path), hints)
            outcome = _search_task(task, child, query, reporter, tally)
            run_warnings([w for w in child.warnings if w.code in RUN_WIDE])
            for item in (w for w in child.warnings if w.code not in RUN_WIDE):
                reporter.warning(item, task)
            tally.searched += outcome.searched == "whole"
        reporter.task(outcome)
    tally.complete = whole and tally.searched == len(tasks)
    return tally


def _search_task(
    task: TaskEntry, read: Transcript, query: Query, reporter: SearchReporter, tally: Tally
) -> TaskSearch:
    """Search the child's rows (read whole, as `older --all`), reporting its hits."""
    matches = 0
    for row in read.rows:
        hits = search_row(row, query.pattern, context=query.context, reasoning=query.reasoning)
        if hits:  # reported as found: an interrupted search keeps them
            matches += len(hits)
            tally.matches += len(hits)
            reporter.hits(task, hits)
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
