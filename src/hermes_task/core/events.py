"""The NDJSON events of `follow --json` and `recover --watch --json` (schema_version 1).

Each line is one event; `type` names it, and the stream always ends with a `result` event.
Invariant: every event is a document of `documents.py` plus its `type` (and, for rows of
`follow --parent`, the task they belong to), so a reader of one knows the other.
"""

from __future__ import annotations

from typing import Literal

from hermes_task.core.documents import Row, TaskEntry, TaskInfo, WarningItem
from hermes_task.records import dataclass, field

# `follow --json`: one event per line (NDJSON), `type` first in meaning, last `result`.


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskRef:
    number: str | None
    child_session_id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RowEvent(Row):
    """A newly verified row: every `Row` field plus `type`, and with `follow --parent` the
    task it belongs to (null for `follow CHILD_ID`)."""

    type: Literal["row"] = "row"
    task: TaskRef | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class StateEvent(TaskInfo):
    """The task's identity and state, when first known and whenever they change."""

    type: Literal["state"] = "state"


@dataclass(frozen=True, slots=True, kw_only=True)
class WarningEvent(WarningItem):
    type: Literal["warning"] = "warning"


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorEvent:
    """A failure; a retryable one may be followed by more events."""

    type: Literal["error"] = "error"
    code: str
    message: str
    retryable: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class ResultEvent:
    """Always the last line: how the follow ended and the process's exit code."""

    type: Literal["result"] = "result"
    state: Literal["running", "ended", "unknown"]
    end_reason: str | None
    exit_code: int
    last_read_age: float | None = field(
        default=None,
        metadata={
            "description": "Seconds since the last successful read when the run ended on a failure "
            "after one (every read failed until --timeout ran out, or a final failure); else null."
        },
    )
    unreported: list[str] | None = field(
        default=None,
        metadata={
            "description": "`recover --watch`: the numbers of the tasks whose child ended while the "
            "parent received no result and no outcome was proposed (status ended_unreported). "
            "Null for `follow`."
        },
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskEvent(TaskEntry):
    """`recover --watch --json`: a task that appeared or changed, whole (every `TaskEntry`
    field plus `type`). The watch's `result` has `end_reason` = the parent's verdict
    (`completed` or `failed`) once every task is terminal."""

    type: Literal["task"] = "task"


# One `follow --json` or `recover --watch --json` line; `schemas.py` discriminates the union
# on `type`.
FollowEvent = RowEvent | StateEvent | TaskEvent | WarningEvent | ErrorEvent | ResultEvent
