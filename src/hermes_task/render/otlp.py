"""A parent chat's tasks as one OpenTelemetry trace in OTLP/JSON, a pure function of the
Structs `reading/tasktree.py` reads (docs/json.md "OTLP/JSON export" is the mapping).

OTLP's `ExportTraceServiceRequest` in the protobuf JSON mapping with OTLP's deviations:
lowerCamelCase keys, trace and span ids as lowercase hex (16 and 8 bytes), 64-bit integers
as decimal strings, enums as integers ("the enum name strings MUST NOT be used").

GenAI agent conventions: `invoke_agent hermes` for the parent; under it `execute_tool NAME`
per tool call, the `delegate_task` ones holding an `invoke_agent subagent` span per task;
under a task its own calls (and, with `recursive`, its tasks). Compressions are span events.

Invariants: ids derive from session, row and call ids only (blake2b): the same history gives
the same ids; times are the rows' and sessions' own, never the clock's; an open span ends at
the last time known of its conversation and says `hermes_task.unfinished`; message text (the
goal aside) only with `content`; every string sanitised; no credential anywhere.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence

from msgspec import Struct, field

from hermes_task.core.documents import Row, SegmentInfo, TaskEntry, TranscriptDoc, Usage, WarningItem
from hermes_task.core.sanitize import clean, clean_line
from hermes_task.reading.reader import Transcript
from hermes_task.reading.tasktree import TraceSource, Unread

KIND_INTERNAL = 1  # SPAN_KIND_INTERNAL
STATUS_UNSET, STATUS_ERROR = 0, 2  # STATUS_CODE_UNSET, STATUS_CODE_ERROR
PARENT_AGENT, TASK_AGENT = "hermes", "subagent"
SPAWN_TOOL = "delegate_task"
SCOPE = "hermes_task.export"

Attr = str | int | float | bool | list[str]


class ArrayValue(Struct, frozen=True):
    values: list[AnyValue]


class AnyValue(Struct, frozen=True, kw_only=True, omit_defaults=True, rename="camel"):
    string_value: str | None = None
    bool_value: bool | None = None
    int_value: str | None = None
    double_value: float | None = None
    array_value: ArrayValue | None = None


class KeyValue(Struct, frozen=True):
    key: str
    value: AnyValue


class Event(Struct, frozen=True, kw_only=True, rename="camel"):
    time_unix_nano: str
    name: str
    attributes: list[KeyValue] = field(default_factory=list)


class Status(Struct, frozen=True, kw_only=True, omit_defaults=True):
    code: int = STATUS_UNSET
    message: str = ""


class Span(Struct, frozen=True, kw_only=True, omit_defaults=True, rename="camel"):
    trace_id: str
    span_id: str
    parent_span_id: str = ""
    name: str
    kind: int = KIND_INTERNAL
    start_time_unix_nano: str
    end_time_unix_nano: str
    attributes: list[KeyValue] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    status: Status | None = None


class Resource(Struct, frozen=True):
    attributes: list[KeyValue]


class Scope(Struct, frozen=True):
    name: str
    version: str


class ScopeSpans(Struct, frozen=True, rename="camel"):
    scope: Scope
    spans: list[Span]


class ResourceSpans(Struct, frozen=True, rename="camel"):
    resource: Resource
    scope_spans: list[ScopeSpans]


class TracesRequest(Struct, frozen=True, rename="camel"):
    """OTLP's `ExportTraceServiceRequest`: what `POST /v1/traces` takes."""

    resource_spans: list[ResourceSpans]


def value(item: Attr) -> AnyValue:
    """An attribute value as OTLP's `AnyValue`; text sanitised."""
    if isinstance(item, bool):
        return AnyValue(bool_value=item)
    if isinstance(item, int):
        return AnyValue(int_value=str(item))
    if isinstance(item, float):
        return AnyValue(double_value=item)
    if isinstance(item, str):
        return AnyValue(string_value=clean(item))
    return AnyValue(array_value=ArrayValue([AnyValue(string_value=clean(s)) for s in item]))


def attributes(pairs: Iterable[tuple[str, Attr | None]]) -> list[KeyValue]:
    """The pairs with a value (OTLP has no null: an unknown figure is no attribute)."""
    return [KeyValue(key, value(item)) for key, item in pairs if item is not None]


def nanos(seconds: float) -> str:
    """Unix seconds as OTLP's decimal nanoseconds (to the microsecond, as the rows keep time)."""
    return str(round(seconds * 1_000_000) * 1000)


def digest(size: int, *parts: str) -> str:
    """A lowercase hex id of `size` bytes from `parts` (blake2b; never all zeros, which OTLP
    reserves for "no id")."""
    h = hashlib.blake2b(digest_size=size, person=b"hermes-task")
    for part in parts:
        h.update(part.encode("utf-8", "surrogatepass") + b"\0")
    hexed = h.hexdigest()
    return hexed if hexed.strip("0") else "0" * (2 * size - 1) + "1"


def usage_attributes(usage: Usage | None) -> list[tuple[str, Attr | None]]:
    """A `usage` object (`recover --json`'s) as attributes: the GenAI token counts, the rest
    under `hermes_task.usage.`."""
    if usage is None:
        return []
    return [
        ("gen_ai.usage.input_tokens", usage.input_tokens),
        ("gen_ai.usage.output_tokens", usage.output_tokens),
        ("hermes_task.usage.cache_read_tokens", usage.cache_read_tokens),
        ("hermes_task.usage.cache_write_tokens", usage.cache_write_tokens),
        ("hermes_task.usage.reasoning_tokens", usage.reasoning_tokens),
        ("hermes_task.usage.api_calls", usage.api_calls),
        ("hermes_task.usage.cost_usd", usage.cost_usd),
        ("hermes_task.usage.cost_kind", usage.cost_kind),
        ("hermes_task.usage.complete", usage.complete),
        ("hermes_task.usage.segments", usage.segments),
        ("hermes_task.usage.missing", list(usage.missing)),
    ]


def times(rows: Sequence[Row]) -> list[float]:
    return [row.timestamp for row in rows if row.timestamp is not None]


def span_times(
    segments: Sequence[SegmentInfo], rows: Sequence[Row], at: float, ended: bool
) -> tuple[float, float, float]:
    """A conversation's start (its first known segment start, else its first row's, else
    `at`), the last time known of it, and its end (its last segment's end once it ended)."""
    known = times(rows)
    started = [s.started_at for s in segments if s.started_at is not None]
    start = started[0] if started else min(known, default=at)
    last = max([start, *known])
    end = segments[-1].ended_at if ended and segments else None
    return start, last, last if end is None else end


def warning_attributes(warnings: Sequence[WarningItem]) -> list[tuple[str, Attr | None]]:
    codes: list[str] = list(dict.fromkeys(w.code for w in warnings))
    return [
        ("hermes_task.warnings", codes or None),
        ("hermes_task.partial_history", True if "partial_history" in codes else None),
    ]


class _Trace:
    """The spans of one trace, built depth first from the parent's agent span."""

    def __init__(self, source: TraceSource, *, content: bool) -> None:
        self.source = source
        self.content = content
        self.trace_id = digest(16, "trace", source.tasks.parent_id)
        self.spans: list[Span] = []

    def span_id(self, *parts: str) -> str:
        return digest(8, self.trace_id, *parts)

    def add(
        self,
        ids: tuple[str, str],
        name: str,
        start: float,
        end: float,
        pairs: Iterable[tuple[str, Attr | None]],
        events: Sequence[Event] = (),
        status: Status | None = None,
    ) -> None:
        """A span (`ids`: its own and its parent's, empty for the root), never ending early."""
        self.spans.append(
            Span(
                trace_id=self.trace_id,
                span_id=ids[0],
                parent_span_id=ids[1],
                name=clean_line(name),
                start_time_unix_nano=nanos(start),
                end_time_unix_nano=nanos(max(start, end)),
                attributes=attributes(pairs),
                events=list(events),
                status=status,
            )
        )

    def events(self, segments: Sequence[SegmentInfo], rows: Sequence[Row]) -> list[Event]:
        """A `hermes_task.context_compression` event where a segment ended by compression,
        then with `content` each row as a `hermes_task.row` event."""
        events = []
        for i, seg in enumerate(segments):
            if seg.end_reason == "compression" and seg.ended_at is not None:
                after = segments[i + 1].id if i + 1 < len(segments) else None
                pairs = [("hermes_task.segment_id", seg.id), ("hermes_task.next_segment_id", after)]
                events.append(Event(time_unix_nano=nanos(seg.ended_at), name="hermes_task.context_compression",
                                    attributes=attributes(pairs)))  # fmt: skip
        return events + [
            Event(
                time_unix_nano=nanos(row.timestamp),
                name="hermes_task.row",
                attributes=attributes(
                    [
                        ("hermes_task.row_id", row.id),
                        ("hermes_task.role", row.role),
                        ("hermes_task.kind", row.kind),
                        ("hermes_task.text", row.text),
                        ("hermes_task.reasoning", row.reasoning),
                    ]
                ),
            )
            for row in (rows if self.content else ())
            if row.timestamp is not None
        ]

    def parent(self) -> None:
        doc, tasks_doc = self.source.parent, self.source.tasks
        info, rows = doc.task, doc.rows
        ended = info.state == "ended"
        start, last, end = span_times(info.segments, rows, 0.0, ended)
        span_id = self.span_id("agent", tasks_doc.parent_id)
        pairs: list[tuple[str, Attr | None]] = [
            ("gen_ai.operation.name", "invoke_agent"),
            ("gen_ai.agent.name", PARENT_AGENT),
            ("gen_ai.agent.id", tasks_doc.parent_id),
            ("gen_ai.conversation.id", tasks_doc.parent_id),
            ("hermes_task.lineage", list(info.lineage)),
            ("hermes_task.state", info.state),
            ("hermes_task.tasks.total", tasks_doc.summary.total),
            ("hermes_task.tasks.terminal", tasks_doc.summary.terminal),
            ("hermes_task.unfinished", None if ended else True),
            *usage_attributes(info.usage),
            *warning_attributes([*tasks_doc.warnings, *doc.warnings]),
        ]
        events = self.events(info.segments, rows)
        self.add((span_id, ""), f"invoke_agent {PARENT_AGENT}", start, end, pairs, events)
        self.conversation(rows, span_id, last, tasks_doc.tasks)

    def conversation(
        self, rows: Sequence[Row], agent: str, last: float, delegated: Sequence[TaskEntry]
    ) -> None:
        """Under the agent span `agent`, `execute_tool NAME` per tool call of the transcript's
        `rows`: from its row to its result's row (open until one exists, then ending at `last`,
        the last time known of the transcript), around the tasks it delegated; then a spawn
        span for each group of tasks whose call no row carries."""
        results = {row.tool_call_id: row for row in rows if row.role == "tool" and row.tool_call_id}
        groups: dict[str, list[TaskEntry]] = {}
        for task in delegated:
            key = task.call_id if task.call_id is not None else f"call {task.call_number}"
            groups.setdefault(key, []).append(task)
        first = at = min(times(rows), default=last)
        for row in rows:
            at = row.timestamp if row.timestamp is not None else at
            for i, call in enumerate(row.tool_calls):
                tasks = groups.pop(call.id, []) if call.id is not None else []
                result = results.get(call.id or "")
                done = result.timestamp if result is not None else None
                # Under its agent span: a transcript exported twice (two tasks naming one child)
                # keeps every span id unique.
                span_id = self.span_id("tool", agent, row.session_id, str(row.id), call.id or f"#{i}")
                ends = [self.task(span_id, task, at) for task in tasks]
                name = call.name or "unknown"
                pairs: list[tuple[str, Attr | None]] = [
                    ("gen_ai.operation.name", "execute_tool"),
                    ("gen_ai.tool.name", name),
                    ("gen_ai.tool.call.id", call.id),
                    ("gen_ai.tool.type", "function"),
                    ("hermes_task.session_id", row.session_id),
                    ("hermes_task.row_id", row.id),
                    ("hermes_task.result_row_id", result.id if result is not None else None),
                    ("hermes_task.tasks", len(tasks) if tasks else None),
                    ("hermes_task.unfinished", None if done is not None else True),
                ]
                if self.content:
                    pairs += [
                        ("gen_ai.tool.call.arguments", call.arguments),
                        ("gen_ai.tool.call.result", result.text if result is not None else None),
                    ]
                end = max([last if done is None else done, *ends])
                self.add((span_id, agent), f"execute_tool {name}", at, end, pairs)
        for key, tasks in groups.items():
            self.spawn_without_row(agent, key, tasks, first)

    def spawn_without_row(self, agent: str, key: str, tasks: Sequence[TaskEntry], start: float) -> None:
        """A spawn call no row of the conversation carries (its row is not proven): its span
        covers its tasks, and says so."""
        span_id = self.span_id("spawn", agent, key)
        ends = [self.task(span_id, task, start) for task in tasks]
        pairs: list[tuple[str, Attr | None]] = [
            ("gen_ai.operation.name", "execute_tool"),
            ("gen_ai.tool.name", SPAWN_TOOL),
            ("gen_ai.tool.call.id", tasks[0].call_id),
            ("gen_ai.tool.type", "function"),
            ("hermes_task.tasks", len(tasks)),
            ("hermes_task.call_row_missing", True),
        ]
        self.add((span_id, agent), f"execute_tool {SPAWN_TOOL}", start, max([start, *ends]), pairs)

    def task(self, spawn: str, task: TaskEntry, at: float) -> float:
        """One task's `invoke_agent subagent` span under the spawn span `spawn` (and, when its
        child was read, its child's spans); its end."""
        child = task.child_session_id
        got = self.source.children.get(child) if child is not None else None
        span_id = self.span_id("task", spawn, str(task.task_index), task.number or "", child or "")
        pairs = task_attributes(task, self.content)
        events: list[Event] = []
        if isinstance(got, Transcript):
            doc: TranscriptDoc | None = got.doc
            segments = doc.task.segments if doc is not None else []
            ended = doc is not None and doc.task.state == "ended"
            start, last, end = span_times(segments, got.rows, at, ended)
            open_ = not (ended or task.terminal)  # a terminal status finishes a session never closed
            pairs += [
                ("hermes_task.lineage", list(got.segments) or None),
                ("hermes_task.child_state", doc.task.state if doc is not None else None),
                ("hermes_task.read_failure", got.failure.code.value if got.failure is not None else None),
                *warning_attributes(got.warnings),
            ]
            self.conversation(got.rows, span_id, last, task.children)
            events = self.events(segments, got.rows)
        else:
            start, end = at, at
            open_ = not task.terminal
            reason = got.code if isinstance(got, Unread) else task.unavailable_reason
            pairs.append(("hermes_task.unavailable_reason", reason or "no_durable_child_reference"))
        pairs.append(("hermes_task.unfinished", True if open_ else None))
        status = task_status(task, self.content)
        self.add((span_id, spawn), f"invoke_agent {TASK_AGENT}", start, end, pairs, events, status)
        return max(start, end)


def task_attributes(task: TaskEntry, content: bool) -> list[tuple[str, Attr | None]]:
    """A task's own attributes: identity, goal, outcome and usage (docs/json.md)."""
    failed = task.terminal and task.status != "completed"
    pairs: list[tuple[str, Attr | None]] = [
        ("gen_ai.operation.name", "invoke_agent"),
        ("gen_ai.agent.name", TASK_AGENT),
        ("gen_ai.agent.id", task.child_session_id or task.subagent_id),
        ("gen_ai.conversation.id", task.child_session_id),
        ("gen_ai.request.model", task.model),
        ("hermes_task.number", task.number),
        ("hermes_task.goal", task.goal),
        ("hermes_task.call_id", task.call_id),
        ("hermes_task.task_index", task.task_index),
        ("hermes_task.delegation_id", task.delegation_id),
        ("hermes_task.subagent_id", task.subagent_id),
        ("hermes_task.child_session_id", task.child_session_id),
        ("hermes_task.child_ref_source", task.child_ref_source),
        ("hermes_task.status", task.status),
        ("hermes_task.terminal", task.terminal),
        ("hermes_task.result_source", task.result_source),
        ("hermes_task.exit_reason", task.exit_reason),
        ("hermes_task.duration_seconds", task.duration_seconds),
        ("hermes_task.gap", task.gap),
        ("error.type", task.status if failed else None),
        *usage_attributes(task.usage),
    ]
    if content:
        pairs += [("hermes_task.summary", task.summary), ("hermes_task.error", task.error)]
    return pairs


def task_status(task: TaskEntry, content: bool) -> Status | None:
    """ERROR for a task that ended without completing (its reported error as the message
    only with `content`); else unset, as GenAI spans leave a success."""
    if not task.terminal or task.status == "completed":
        return None
    message = task.error if content and task.error else f"task {task.status}"
    return Status(code=STATUS_ERROR, message=clean_line(message))


def trace(source: TraceSource, *, version: str, content: bool = False) -> TracesRequest:
    """The trace of `source` (module docstring); `version`: the exporting tool's, as the
    instrumentation scope's."""
    built = _Trace(source, content=content)
    built.parent()
    resource = [
        ("service.name", "hermes-agent"),
        ("hermes_task.parent_id", source.tasks.parent_id),
        ("hermes_task.profile", source.parent.task.profile),
    ]
    scope = ScopeSpans(scope=Scope(name=SCOPE, version=version), spans=built.spans)
    return TracesRequest(
        resource_spans=[ResourceSpans(resource=Resource(attributes(resource)), scope_spans=[scope])]
    )


__all__ = ["TracesRequest", "trace"]
