"""The NDJSON events of `follow --json`, `recover --watch --json` and `search --json` (schema_version
1; docs/json.md): each a frozen Struct whose fields are always present, a document of `documents.py`
plus its `type` (msgspec's tag, written first)."""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import Meta, Struct
from msgspec.structs import asdict

from hermes_task.core.documents import Row, TaskEntry, TaskInfo, WarningItem
from hermes_task.core.projection import SearchField, Span


class TaskRef(Struct, frozen=True, kw_only=True):
    number: str | None
    child_session_id: str

    @classmethod
    def of(cls, task: TaskEntry) -> TaskRef:
        return cls(number=task.number, child_session_id=task.child_session_id or "")


class RowEvent(Row, frozen=True, kw_only=True, tag_field="type", tag="row"):
    """A newly verified row: every `Row` field plus `type`, and with `follow --parent` the
    task it belongs to (null for `follow CHILD_ID`)."""

    task: TaskRef | None = None


class StateEvent(TaskInfo, frozen=True, kw_only=True, tag_field="type", tag="state"):
    """The task's identity and state, when first known and whenever they change."""


class WarningEvent(WarningItem, frozen=True, kw_only=True, tag_field="type", tag="warning"):
    """A warning of `documents.py` (`WarningItem`) as it happens."""


class ErrorEvent(Struct, frozen=True, kw_only=True, tag_field="type", tag="error"):
    """A failure; a retryable one may be followed by more events."""

    code: str
    message: str
    retryable: bool


class ResultEvent(Struct, frozen=True, kw_only=True, tag_field="type", tag="result"):
    """Always the last line: how the follow ended and the process's exit code."""

    state: Literal["running", "ended", "unknown"]
    end_reason: str | None
    exit_code: int
    last_read_age: Annotated[
        float | None,
        Meta(
            description="Seconds since the last successful read when the run ended on a failure "
            "after one (every read failed until --timeout ran out, or a final failure); else null."
        ),
    ] = None
    unreported: Annotated[
        list[str] | None,
        Meta(
            description="`recover --watch`: the numbers of the tasks whose child ended while the "
            "parent received no result and no outcome was proposed (status ended_unreported). "
            "Null for `follow`."
        ),
    ] = None


class TaskEvent(TaskEntry, frozen=True, kw_only=True, tag_field="type", tag="task"):
    """`recover --watch --json`: a task that appeared or changed, whole (every `TaskEntry`
    field plus `type`). The watch's `result` has `end_reason` = the parent's verdict
    (`completed` or `failed`) once every task is terminal."""


# One `follow --json` or `recover --watch --json` line, discriminated on `type`.
FollowEvent = RowEvent | StateEvent | TaskEvent | WarningEvent | ErrorEvent | ResultEvent


def task_event(entry: TaskEntry) -> TaskEvent:
    return TaskEvent(**asdict(entry))


class SearchMatch(Struct, frozen=True, kw_only=True, tag_field="type", tag="match"):
    """One matching line: the task, the row (`session_id` is the segment that holds it), the
    block of the row and the line, with up to `-C N` lines of context from the same block."""

    task: TaskRef
    session_id: Annotated[str, Meta(description="The segment of the task's lineage that holds the row.")]
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
        int, Meta(description="Which of the row's blocks of that field, 0-based (the tool call).")
    ]
    line_number: Annotated[int, Meta(description="The line's number within its block, 1-based.")]
    line: Annotated[str, Meta(description="The matching line, as the backend sent it (JSON-escaped).")]
    spans: Annotated[
        list[Span], Meta(description="[start, end) code-point offsets of each non-empty match in `line`.")
    ]
    before: Annotated[list[str], Meta(description="Up to N lines of the same block just above the line.")]
    after: Annotated[list[str], Meta(description="Up to N lines of the same block just below the line.")]


class SearchTask(Struct, frozen=True, kw_only=True, tag_field="type", tag="task"):
    """One task of the parent, after its transcript was searched (or could not be)."""

    number: str | None
    goal: str | None
    status: Annotated[str, Meta(description="The task's status, as `recover` reports it.")]
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
    message: Annotated[str | None, Meta(description="The same reason for people; null when whole.")]
    segments: Annotated[
        list[str], Meta(description="The proven segments whose rows were searched, root first.")
    ]
    rows: Annotated[int, Meta(description="Rows searched.")]
    matches: Annotated[int, Meta(description="Matching lines in this task.")]


class SearchWarning(WarningItem, frozen=True, kw_only=True, tag_field="type", tag="warning"):
    """A warning of the read: of one task's (`task` names it) or of the whole run (null)."""

    task: TaskRef | None


class SearchResult(Struct, frozen=True, kw_only=True, tag_field="type", tag="result"):
    """Always the last line: the counts and the process's exit code."""

    tasks: Annotated[int, Meta(description="Tasks of the parent known when the search ended.")]
    searched: Annotated[int, Meta(description="Tasks whose transcript was searched whole.")]
    matches: Annotated[int, Meta(description="Matching lines in all tasks.")]
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
