"""The output documents (schema_version 1): the contract users' scripts depend on.

These pydantic models are the single source of the JSON documents and of the published
JSON Schemas (`hermes-task schema`). Renderers are pure functions of them.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = 1


class _Out(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ToolCall(_Out):
    id: str | None
    name: str | None
    arguments: str | None = Field(
        description="The recorded arguments string, or null when none was recorded."
    )


class Row(_Out):
    """One displayed transcript row. Identity is (`session_id`, `id`)."""

    id: int
    session_id: str
    role: str
    text: str | None
    reasoning: str | None = None
    commentary: list[str] = []
    tool_calls: list[ToolCall] = []
    tool_call_id: str | None = None
    tool_name: str | None = None
    timestamp: float | None = None
    archived: bool = False
    kind: str | None = Field(
        default=None, description="The server's display_kind for typed rows (steer, ...)."
    )


class Candidate(_Out):
    id: str | None = None
    status: Literal["proven", "rejected", "none"] = "none"
    reason: str | None = None


class TaskInfo(_Out):
    root_id: str
    tip_id: str
    lineage: list[str]
    candidate: Candidate = Candidate()
    profile: str | None = None
    source: str | None = None
    state: Literal["running", "ended", "unknown"] = "unknown"
    end_reason: str | None = None
    notes: list[str] = Field(
        default=[],
        description="Facts about the proof, e.g. legacy_source_rewrite (0.19.x turned tool into subagent).",
    )


class BackendInfo(_Out):
    contract: Literal["current", "legacy"]


class Coverage(_Out):
    unique_rows: int
    has_older: bool
    at_start: bool


class WarningItem(_Out):
    code: Literal["partial_history", "partial_ancestors", "legacy_backend", "gap", "bound_reached"]
    message: str


class TranscriptDoc(_Out):
    schema_version: Literal[1] = 1
    kind: Literal["transcript"] = "transcript"
    task: TaskInfo
    backend: BackendInfo
    rows: list[Row]
    coverage: Coverage
    warnings: list[WarningItem] = []


class ErrorBody(_Out):
    code: str
    message: str
    retryable: bool
    hint: str | None = None


class ErrorDoc(_Out):
    schema_version: Literal[1] = 1
    kind: Literal["error"] = "error"
    error: ErrorBody
    rows: list[Row] = []


class TaskEntry(_Out):
    call_id: str | None
    goal: str | None
    task_index: int | None
    delegation_id: str | None
    subagent_id: str | None
    child_session_id: str | None
    status: Literal[
        "running", "completed", "failed", "error", "interrupted", "cancelled", "timeout", "unknown"
    ]
    terminal: bool
    unavailable_reason: str | None
    children: list[TaskEntry] = []
    gap: str | None = None


class TasksSummary(_Out):
    total: int
    terminal: int
    state: Literal["running", "finished"]


class TasksDoc(_Out):
    schema_version: Literal[1] = 1
    kind: Literal["tasks"] = "tasks"
    parent_id: str
    tasks: list[TaskEntry]
    summary: TasksSummary
    warnings: list[WarningItem] = []


# `follow --json`: one event per line (NDJSON), `type` first in meaning, last `result`.


class RowEvent(Row):
    """A newly verified row: every `Row` field plus `type`."""

    type: Literal["row"] = "row"


class StateEvent(TaskInfo):
    """The task's identity and state, when first known and whenever they change."""

    type: Literal["state"] = "state"


class WarningEvent(WarningItem):
    type: Literal["warning"] = "warning"


class ErrorEvent(_Out):
    """A failure; a retryable one may be followed by more events."""

    type: Literal["error"] = "error"
    code: str
    message: str
    retryable: bool


class ResultEvent(_Out):
    """Always the last line: how the follow ended and the process's exit code."""

    type: Literal["result"] = "result"
    state: Literal["running", "ended", "unknown"]
    end_reason: str | None
    exit_code: int


FollowEvent = Annotated[
    RowEvent | StateEvent | WarningEvent | ErrorEvent | ResultEvent, Field(discriminator="type")
]


class ConfigValue(_Out):
    """One effective setting. For a secret, `value` only says whether and where it is set."""

    value: str | float | None
    source: Literal["flag", "env", "config", "default"]


class ConfigDoc(_Out):
    """`hermes-task config show --json`: the effective settings and where each came from."""

    schema_version: Literal[1] = 1
    kind: Literal["config"] = "config"
    path: str
    exists: bool
    gateways: list[str]
    settings: dict[str, ConfigValue]
