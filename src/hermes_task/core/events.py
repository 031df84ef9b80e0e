"""The NDJSON events of `follow --json` and `recover --watch --json` (schema_version 1).

Each line is one event; `type` names it (msgspec's tag, written first), and the stream
always ends with a `result` event. Invariant: every event is a document of `documents.py`
plus its `type` (and, for rows of `follow --parent`, the task they belong to), so a reader
of one knows the other.
"""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import Meta, Struct
from msgspec.structs import asdict

from hermes_task.core.documents import Row, TaskEntry, TaskInfo, WarningItem


class TaskRef(Struct, frozen=True, kw_only=True):
    number: str | None
    child_session_id: str


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


def row_event(row: Row, task: TaskRef | None = None) -> RowEvent:
    """`row` as a `row` event (every field as it is)."""
    return RowEvent(**asdict(row), task=task)


def state_event(task: TaskInfo) -> StateEvent:
    """`task` as a `state` event."""
    return StateEvent(**asdict(task))


def task_event(entry: TaskEntry) -> TaskEvent:
    """`entry` as a `task` event."""
    return TaskEvent(**asdict(entry))
