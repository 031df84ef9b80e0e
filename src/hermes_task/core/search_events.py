"""The NDJSON events of `search --json` (schema_version 1; `hermes-task schema search`).

Each line is one event; `type` names it. For each task of the parent, in order: its `match`
events (one per matching line), the `warning` events of its read (naming it in `task`), then
its `task` event (how its transcript was searched and why not whole); warnings about the whole
run carry `task: null`; the stream always ends with `result` (after an `error` event when the
command failed). Invariant: every event is a plain frozen record whose fields are all always
present, so a reader of `follow --json` knows the shape (`type` first, `result` last).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

from hermes_task.core.documents import WarningCode
from hermes_task.core.events import ErrorEvent, TaskRef
from hermes_task.core.search import SearchField, Span
from hermes_task.records import record


def described(text: str) -> Any:
    """A field with its schema description (`dataclasses.field`: a record's field is named
    `field`, which would shadow it in a class body)."""
    return dataclasses.field(metadata={"description": text})


@record
class SearchMatch:
    """One matching line: the task, the row (`session_id` is the segment that holds it), the
    block of the row and the line, with up to `-C N` lines of context from the same block."""

    type: Literal["match"] = "match"
    task: TaskRef
    session_id: str = described("The segment of the task's lineage that holds the row.")
    row_id: int
    role: str
    kind: str | None
    timestamp: float | None
    field: SearchField = described(
        "Which block of the row matched: text (prose), output, status or steer (a tool "
        "result), commentary, arguments (a tool call's), reasoning (with --reasoning)."
    )
    part: int = described("Which of the row's blocks of that field, 0-based (the tool call).")
    line_number: int = described("The line's number within its block, 1-based.")
    line: str = described("The matching line, as the backend sent it (JSON-escaped).")
    spans: list[Span] = described("[start, end) code-point offsets of each non-empty match in `line`.")
    before: list[str] = described("Up to N lines of the same block just above the line.")
    after: list[str] = described("Up to N lines of the same block just below the line.")


@record
class SearchTask:
    """One task of the parent, after its transcript was searched (or could not be)."""

    type: Literal["task"] = "task"
    number: str | None
    goal: str | None
    status: str = described("The task's status, as `recover` reports it.")
    child_session_id: str | None
    searched: Literal["whole", "partial", "no"] = described(
        "whole: every proven segment read to its start; partial: some rows were searched but "
        "not all (see `code`); no: nothing was searched (see `code`)."
    )
    code: str | None = described(
        "Why not whole: a failure code (not_found, identity_mismatch, network, ...), the "
        "task's unavailable_reason (no_durable_child_reference, ambiguous_match), or a "
        "warning code (bound_reached, partial_history, partial_ancestors, gap); null when whole."
    )
    message: str | None = described("The same reason for people; null when whole.")
    segments: list[str] = described("The proven segments whose rows were searched, root first.")
    rows: int = described("Rows searched.")
    matches: int = described("Matching lines in this task.")


@record
class SearchWarning:
    """A warning of the read: of one task's (`task` names it) or of the whole run (null)."""

    type: Literal["warning"] = "warning"
    code: WarningCode
    message: str
    task: TaskRef | None


@record
class SearchResult:
    """Always the last line: the counts and the process's exit code."""

    type: Literal["result"] = "result"
    tasks: int = described("Tasks of the parent known when the search ended.")
    searched: int = described("Tasks whose transcript was searched whole.")
    matches: int = described("Matching lines in all tasks.")
    complete: bool = described(
        "Every task's transcript was searched whole and the backend serves every row: "
        "only then does no match prove the absence (exit 10, else 11)."
    )
    exit_code: int


# One `search --json` line; `schemas.py` discriminates the union on `type`.
SearchEvent = SearchMatch | SearchTask | SearchWarning | ErrorEvent | SearchResult

__all__ = ["SearchEvent", "SearchMatch", "SearchResult", "SearchTask", "SearchWarning"]
