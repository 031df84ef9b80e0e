"""The NDJSON events of `search --json` (schema_version 1; `hermes-task schema search`).

Each line is one event; `type` names it. For each task of the parent, in order: its `match`
events (one per matching line), the `warning` events of its read (naming it in `task`), then
its `task` event (how its transcript was searched and why not whole); warnings about the whole
run carry `task: null`; the stream always ends with `result` (after an `error` event when the
command failed). Invariant: every event is a frozen Struct tagged on `type` (written first)
whose fields are all always present, so a reader of `follow --json` knows the shape (`type`
first, `result` last).
"""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import Meta, Struct

from hermes_task.core.events import ErrorEvent, TaskRef
from hermes_task.core.row_search import SearchField, Span
from hermes_task.core.ui_strings import WarningCode


class SearchMatch(Struct, frozen=True, kw_only=True, tag_field="type", tag="match"):
    """One matching line: the task, the row (`session_id` is the segment that holds it), the
    block of the row and the line, with up to `-C N` lines of context from the same block."""

    task: TaskRef
    session_id: Annotated[
        str,
        Meta(description="The segment of the task's lineage that holds the row."),
    ]
    row_id: int
    role: str
    kind: str | None
    timestamp: float | None
    field: Annotated[
        SearchField,
        Meta(
            description="Which block of the row matched: text (prose), output, status or steer (a tool "
            "result), commentary, arguments (a tool call's), reasoning (with --reasoning)."
        ),
    ]
    part: Annotated[
        int,
        Meta(description="Which of the row's blocks of that field, 0-based (the tool call)."),
    ]
    line_number: Annotated[
        int,
        Meta(description="The line's number within its block, 1-based."),
    ]
    line: Annotated[
        str,
        Meta(description="The matching line, as the backend sent it (JSON-escaped)."),
    ]
    spans: Annotated[
        list[Span],
        Meta(description="[start, end) code-point offsets of each non-empty match in `line`."),
    ]
    before: Annotated[
        list[str],
        Meta(description="Up to N lines of the same block just above the line."),
    ]
    after: Annotated[
        list[str],
        Meta(description="Up to N lines of the same block just below the line."),
    ]


class SearchTask(Struct, frozen=True, kw_only=True, tag_field="type", tag="task"):
    """One task of the parent, after its transcript was searched (or could not be)."""

    number: str | None
    goal: str | None
    status: Annotated[
        str,
        Meta(description="The task's status, as `recover` reports it."),
    ]
    child_session_id: str | None
    searched: Annotated[
        Literal["whole", "partial", "no"],
        Meta(
            description="whole: every proven segment read to its start; partial: some rows were searched but "
            "not all (see `code`); no: nothing was searched (see `code`)."
        ),
    ]
    code: Annotated[
        str | None,
        Meta(
            description="Why not whole: a failure code (not_found, identity_mismatch, network, ...), the "
            "task's unavailable_reason (no_durable_child_reference, ambiguous_match), or a "
            "warning code (bound_reached, partial_history, partial_ancestors, gap); null when whole."
        ),
    ]
    message: Annotated[
        str | None,
        Meta(description="The same reason for people; null when whole."),
    ]
    segments: Annotated[
        list[str],
        Meta(description="The proven segments whose rows were searched, root first."),
    ]
    rows: Annotated[
        int,
        Meta(description="Rows searched."),
    ]
    matches: Annotated[
        int,
        Meta(description="Matching lines in this task."),
    ]


class SearchWarning(Struct, frozen=True, kw_only=True, tag_field="type", tag="warning"):
    """A warning of the read: of one task's (`task` names it) or of the whole run (null)."""

    code: WarningCode
    message: str
    task: TaskRef | None


class SearchResult(Struct, frozen=True, kw_only=True, tag_field="type", tag="result"):
    """Always the last line: the counts and the process's exit code."""

    tasks: Annotated[
        int,
        Meta(description="Tasks of the parent known when the search ended."),
    ]
    searched: Annotated[
        int,
        Meta(description="Tasks whose transcript was searched whole."),
    ]
    matches: Annotated[
        int,
        Meta(description="Matching lines in all tasks."),
    ]
    complete: Annotated[
        bool,
        Meta(
            description="Every task's transcript was searched whole and the backend serves every row: "
            "only then does no match prove the absence (exit 10, else 11)."
        ),
    ]
    exit_code: int


# One `search --json` line; `schemas.py` discriminates the union on `type`.
SearchEvent = SearchMatch | SearchTask | SearchWarning | ErrorEvent | SearchResult

__all__ = ["SearchEvent", "SearchMatch", "SearchResult", "SearchTask", "SearchWarning"]
