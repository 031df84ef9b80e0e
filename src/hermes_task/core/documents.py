"""The output documents (schema_version 1): the contract users' scripts depend on. These frozen
`msgspec.Struct`s are the single source of the JSON documents (in field order) and of the JSON
Schemas (`hermes-task schema`; a field's `Meta(description=...)` is its description), both written
by render/jsontext.py; renderers read nothing else. Every field is always printed (`null` when it
has no value). Usage and cost: docs/json.md and docs/identity.md, "Usage and cost".
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Annotated, Literal, Protocol

from msgspec import Meta, Struct, field
from msgspec.structs import force_setattr

from hermes_task.core.sanitize import one_line
from hermes_task.core.ui_strings import TaskStatus, WarningCode
from hermes_task.core.wire import NO_FIGURES, TOKENS, Figures

TaskState = Literal["running", "ended", "unknown"]


class ToolCall(Struct, frozen=True, kw_only=True):
    id: str | None
    name: str | None
    arguments: Annotated[
        str | None, Meta(description="The recorded arguments string, or null when none was recorded.")
    ]


class Row(Struct, frozen=True, kw_only=True):
    """One displayed transcript row. Identity is (`session_id`, `id`)."""

    id: int
    session_id: str
    role: str
    text: str | None
    reasoning: str | None = None
    commentary: list[str] = field(default_factory=list)
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str | None = None
    tool_name: str | None = None
    timestamp: float | None = None
    archived: bool = False
    kind: Annotated[
        str | None,
        Meta(
            description="The server's display_kind for typed rows (steer, ...), or what the row was "
            "recognised as: compaction_summary, continuation_prompt, system_notice."
        ),
    ] = None

    def __post_init__(self) -> None:
        if type(self.timestamp) is int:  # a float field: 1 is 1.0 in the document
            force_setattr(self, "timestamp", float(self.timestamp))


class Candidate(Struct, frozen=True, kw_only=True):
    id: str | None = None
    status: Literal["proven", "rejected", "unavailable", "none"] = "none"
    reason: str | None = None
    source: Annotated[
        Literal["tip_option", "latest_descendant", "store"] | None,
        Meta(description="Where the candidate id came from (null when there is none)."),
    ] = None


class SegmentInfo(Struct, frozen=True, kw_only=True):
    """One proven segment of the task's lineage, oldest first."""

    id: str
    started_at: float | None = None
    ended_at: float | None = None
    end_reason: str | None = None
    rows_shown: Annotated[int, Meta(description="Rows of this segment in `rows`.")] = 0


class TaskInfo(Struct, frozen=True, kw_only=True):
    root_id: str
    tip_id: str
    lineage: list[str]
    candidate: Candidate = field(default_factory=Candidate)
    profile: str | None = None
    source: str | None = None
    state: TaskState = "unknown"
    end_reason: str | None = None
    notes: Annotated[
        list[str],
        Meta(
            description="Facts about the proof, e.g. legacy_source_rewrite (0.19.x turned tool into subagent)."
        ),
    ] = field(default_factory=list)
    goal: Annotated[
        str | None, Meta(description="The task's goal: the first user row of its first segment.")
    ] = None
    segments: list[SegmentInfo] = field(default_factory=list)
    usage: LineageUsage = None


class BackendCapabilities(Struct, frozen=True, kw_only=True):
    """What the dashboard's answers showed in this run (null: not learned)."""

    pagination: Annotated[
        bool | None, Meta(description="The messages envelope carries `pagination` (false: 0.18.x and older).")
    ] = None
    order: Annotated[
        bool | None, Meta(description="`order=latest` is honoured (false: pages count from the oldest row).")
    ] = None
    ancestors_merged: Annotated[
        bool | None, Meta(description="A continuation's pages carry its earlier segments' rows.")
    ] = None
    around: Annotated[bool | None, Meta(description="The `/messages/around` route exists.")] = None
    source_rewrite: Annotated[
        bool | None, Meta(description="Rotation rewrites a `tool` segment's source into `subagent`.")
    ] = None


class BackendInfo(Struct, frozen=True, kw_only=True):
    contract: Annotated[
        Literal["current", "legacy"],
        Meta(description="`current` when `order` is honoured, else `legacy` (kept for scripts)."),
    ]
    capabilities: BackendCapabilities = field(default_factory=BackendCapabilities)


class Coverage(Struct, frozen=True, kw_only=True):
    unique_rows: int
    has_older: bool
    at_start: bool


class WarningItem(Struct, frozen=True, kw_only=True):
    code: WarningCode
    message: str


def warning(code: WarningCode, detail: str = "") -> WarningItem:
    """Warning `code` with its text, and `detail` after it in parentheses."""
    return WarningItem(code=code, message=f"{code.text} ({detail})" if detail else code.text)


class TranscriptDoc(Struct, frozen=True, kw_only=True):
    """`show` and `older`. `rows` comes right after `schema_version`: everything after it
    depends on how the read ends (`kind`, each segment's `rows_shown`, `coverage`), so
    `older --all --json` writes the rows as their pages are proven and the rest after them
    (docs/decisions.md, entry 8)."""

    schema_version: Literal[1] = 1
    rows: list[Row]
    kind: Literal["transcript"] = "transcript"
    task: TaskInfo
    backend: BackendInfo
    coverage: Coverage
    warnings: list[WarningItem] = field(default_factory=list)


class ErrorBody(Struct, frozen=True, kw_only=True):
    code: str
    message: str
    retryable: bool
    hint: str | None = None


class ErrorDoc(Struct, frozen=True, kw_only=True):
    """Any command's failure. `rows` (those already read) first, as in `TranscriptDoc`: a
    streamed transcript that fails mid-way ends as this document."""

    schema_version: Literal[1] = 1
    rows: list[Row] = field(default_factory=list)
    kind: Literal["error"] = "error"
    error: ErrorBody
    task: Annotated[TaskInfo | None, Meta(description="The task as verified so far, or null.")] = None


class TaskTokens(Struct, frozen=True, kw_only=True):
    input: int | None
    output: int | None


class ToolTraceCounts(Struct, frozen=True, kw_only=True):
    """Counts over a result's `tool_trace`: its steps, and those whose status was not `ok`."""

    calls: int
    errors: int


class TaskEntry(Struct, frozen=True, kw_only=True):
    call_id: str | None
    goal: str | None
    task_index: int | None
    delegation_id: str | None
    subagent_id: str | None
    child_session_id: str | None
    status: Annotated[
        TaskStatus,
        Meta(description="ended_unreported: the child is proven ended; no result reached the parent."),
    ]
    terminal: Annotated[
        bool, Meta(description="A terminal status was recorded, or the child is proven ended.")
    ]
    unavailable_reason: str | None
    children: list[TaskEntry] = field(default_factory=list)
    gap: str | None = None
    call_number: Annotated[
        int | None,
        Meta(description="1-based position of the task's delegate_task spawn call in its conversation."),
    ] = None
    number: Annotated[
        str | None,
        Meta(description="`CALL.TASK`, both 1-based: the `#` of the table; stable as the chat grows."),
    ] = None
    summary: Annotated[str | None, Meta(description="The task's whole reported summary.")] = None
    duration_seconds: float | None = None
    exit_reason: str | None = None
    api_calls: int | None = None
    model: str | None = None
    tokens: TaskTokens | None = None
    error: Annotated[str | None, Meta(description="The reported error of a task that did not complete.")] = (
        None
    )
    tool_trace: ToolTraceCounts | None = None
    child_ref_source: Annotated[
        Literal["transcript", "store"] | None,
        Meta(
            description="Where child_session_id came from: the parent's rows, or the local store (confirmed over HTTP)."
        ),
    ] = None
    result_source: Annotated[
        Literal["parent", "store"] | None,
        Meta(
            description="parent: its rows; store: the completion Hermes holds for the parent (async_delegations), used "
            "only because the child is proven ended; null while no outcome is known."
        ),
    ] = None
    child_state: Annotated[
        Literal["running", "ended", "unknown"] | None,
        Meta(
            description="The child's proven state (running, ended, unknown), read while the parent has no result; else null."
        ),
    ] = None
    delivery_state: Annotated[
        str | None,
        Meta(
            description="With result_source store: the record's delivery_state (pending: still held; delivered; dropped)."
        ),
    ] = None
    usage: ChildUsage = None
    usage_with_children: NestedUsage = None


class TasksSummary(Struct, frozen=True, kw_only=True):
    total: int
    terminal: int
    state: Literal["running", "finished"]
    usage: TasksUsage = None


class TasksDoc(Struct, frozen=True, kw_only=True):
    schema_version: Literal[1] = 1
    kind: Literal["tasks"] = "tasks"
    parent_id: str
    tasks: list[TaskEntry]
    summary: TasksSummary
    warnings: list[WarningItem] = field(default_factory=list)


COUNTS = (*TOKENS, "api_calls")
Missing = Literal["figures", "cost", "later_segments", "earlier_segments", "tasks", "nested"]
# What each `missing` code means, in the order `missing` lists them (the show header, the table's note).
MISSING: dict[Missing, str] = {
    "figures": "a segment sent no token figure or call count",
    "cost": "a segment has no known cost",
    "later_segments": "later segments are not proven",
    "earlier_segments": "earlier segments are not included",
    "tasks": "a task has no proven usage",
    "nested": "nested tasks were not read",
}


class Usage(Struct, frozen=True, kw_only=True):
    """Usage summed over proven segments (docs/json.md "Usage"); a figure no summed segment
    sent is null, never 0."""

    input_tokens: int | None
    output_tokens: int | None
    cache_read_tokens: int | None
    cache_write_tokens: int | None
    reasoning_tokens: int | None
    api_calls: Annotated[int | None, Meta(description="The segments' api_call_count, summed.")]
    cost_usd: Annotated[
        float | None,
        Meta(
            description="Each segment's actual cost where it has one, else its estimate, summed; null: none known."
        ),
    ]
    cost_kind: Annotated[
        Literal["actual", "estimated"] | None,
        Meta(
            description="actual: every cost summed was actual; estimated: at least one was an estimate; null: none."
        ),
    ]
    complete: Annotated[
        bool, Meta(description="Nothing is missing: every figure of every segment the sum needs.")
    ]
    segments: Annotated[int, Meta(description="How many proven segments were summed.")]
    missing: Annotated[
        list[Missing],
        Meta(
            description="What the sum lacks: figures, cost (a segment without them), later_segments, "
            "earlier_segments (not proven or not included), tasks (a task without usage), nested "
            "(nested tasks not read)."
        ),
    ] = field(default_factory=list)


# The documents' usage fields, each with its schema description.
LineageUsage = Annotated[
    Usage | None,
    Meta(description="Usage and cost summed over `segments` (the proven lineage) from their details."),
]
ChildUsage = Annotated[
    Usage | None,
    Meta(
        description="Usage and cost summed over the proven segments of the task's child; null: no child proven "
        "(no child id, not this parent's, unreadable, or past a bound). `tokens` stays as the parent was told."
    ),
]
NestedUsage = Annotated[
    Usage | None, Meta(description="With --recursive: `usage` plus every nested task's; else null.")
]
TasksUsage = Annotated[
    Usage | None, Meta(description="Every task's `usage` summed (nested ones too); null: none known.")
]


def segment_usage(figures: Figures) -> Usage:
    """One segment's figures as a `Usage` (its cost by the module's rules)."""
    actual = figures.actual_cost_usd
    estimate = figures.estimated_cost_usd if figures.cost_status != "unknown" else None
    cost = actual if actual is not None else estimate
    kind: Literal["actual", "estimated"] | None = (
        "actual" if actual is not None else "estimated" if estimate is not None else None
    )
    counts = {name: getattr(figures, name) for name in COUNTS}
    lacking = {"figures": None in counts.values(), "cost": cost is None}
    missing = [m for m in MISSING if lacking.get(m)]
    return Usage(**counts, cost_usd=cost, cost_kind=kind, complete=not missing, segments=1, missing=missing)


class HasFigures(Protocol):
    @property
    def figures(self) -> Figures: ...


def lineage_usage(
    path: Sequence[str], details: Mapping[str, HasFigures], *, later: bool = False, earlier: bool = False
) -> Usage:
    """The usage of lineage `path` from `details`; `later`, `earlier`: such segments may be missing."""
    parts = [segment_usage(details[sid].figures if sid in details else NO_FIGURES) for sid in path]
    flags = {"later_segments": later, "earlier_segments": earlier}
    total = combine(parts, extra=[m for m in MISSING if flags.get(m)])
    assert total is not None  # a path has at least its anchor
    return total


def _sum(values: Iterable[int | None]) -> int | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def combine(parts: Sequence[Usage | None], *, extra: Sequence[Missing] = ()) -> Usage | None:
    """The sum of `parts` (a None part: a task without usage) and `extra` missing; None: no usage."""
    known = [p for p in parts if p is not None]
    if not known:
        return None
    costs = [p.cost_usd for p in known if p.cost_usd is not None]
    kinds = {p.cost_kind for p in known if p.cost_kind is not None}
    missing = {m for p in known for m in p.missing} | set(extra)
    ordered = [m for m in MISSING if m in missing or (m == "tasks" and len(known) < len(parts))]
    return Usage(
        **{name: _sum(getattr(p, name) for p in known) for name in COUNTS},
        cost_usd=round(math.fsum(costs), 10) if costs else None,  # float noise dropped
        cost_kind=None if not kinds else "actual" if kinds == {"actual"} else "estimated",
        complete=not ordered,
        segments=sum(p.segments for p in known),
        missing=ordered,
    )


def with_missing(usage: Usage | None, *reasons: Missing) -> Usage | None:
    """`usage` with `reasons` added to what it lacks (None stays None)."""
    return combine([usage], extra=reasons) if reasons else usage


class ConfigValue(Struct, frozen=True, kw_only=True):
    """One effective setting. For a secret, `value` only says whether and where it is set."""

    value: str | float | None
    source: Literal["flag", "env", "config", "default"]

    def __post_init__(self) -> None:
        if type(self.value) is int:  # a float setting: 10 is 10.0 in the document
            force_setattr(self, "value", float(self.value))


class ConfigDoc(Struct, frozen=True, kw_only=True):
    """`hermes-task config show --json`: the effective settings and where each came from."""

    schema_version: Literal[1] = 1
    kind: Literal["config"] = "config"
    path: str
    exists: bool
    gateways: list[str]
    settings: dict[str, ConfigValue]
    error: Annotated[str | None, Meta(description="Why the config file is invalid (file:line).")] = None


# `hermes-task parents` (docs/identity.md, "Where a parent id comes from"): every text is sanitised.
FIRST_WORDS = 100


def first_words(text: str | None) -> str | None:
    """A first user row as one sanitised line: whitespace runs collapsed, cut with `…`."""
    return (one_line(text, FIRST_WORDS) if text is not None else "") or None


class ParentEntry(Struct, frozen=True, kw_only=True):
    """One session that called `delegate_task`, proven over HTTP."""

    id: Annotated[
        str, Meta(description="The session id: what `recover PARENT_ID` and `follow --parent` take.")
    ]
    source: Annotated[str | None, Meta(description="The session's source (cli, telegram, subagent, ...).")]
    started_at: float | None
    ended_at: float | None
    end_reason: Annotated[
        str | None, Meta(description="Why it ended; `compression`: the chat continues in a newer segment.")
    ]
    state: Annotated[
        Literal["open", "ended"],
        Meta(description="`ended` when the dashboard shows an end time, else `open` (idle or running)."),
    ]
    title: Annotated[
        str | None, Meta(description="The session's title, from its detail; null when it has none.")
    ]
    first_words: Annotated[
        str | None,
        Meta(
            description="When it has no title: its first user row, on one line, at most 100 characters; else null."
        ),
    ]
    delegated_children: Annotated[
        int,
        Meta(
            description="Sessions the dashboard shows as delegated by this one (one per task whose child "
            "started), each proven by its own detail."
        ),
    ]
    more_children: Annotated[
        bool, Meta(description="True when the store proposed more children than were checked (the first 50).")
    ]
    last_delegated_at: Annotated[
        float | None,
        Meta(description="When its newest proven child started: the list's order, newest first."),
    ]
    delegated_by: Annotated[
        str | None,
        Meta(description="The session that delegated this one, when it is itself a delegated child."),
    ]


class ParentsDoc(Struct, frozen=True, kw_only=True):
    schema_version: Literal[1] = 1
    kind: Literal["parents"] = "parents"
    parents: list[ParentEntry]
    warnings: list[WarningItem] = field(default_factory=list)
