"""A parent chat's tasks as one OpenTelemetry trace in OTLP/JSON (GenAI agent conventions), a
pure function of what `reading/tasktree.py` reads: docs/json.md "OTLP/JSON export" is the
mapping, its ids, times and attributes. The request is built as plain dicts in OTLP/JSON's key
order (msgspec writes them as built); an empty value is left out, but `kind` is always written
(1, `SPAN_KIND_INTERNAL`: left out, a receiver would read 0, `SPAN_KIND_UNSPECIFIED`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from typing import Any

from hermes_task.core.documents import Row, SegmentInfo, TaskEntry, TranscriptDoc, Usage, WarningItem
from hermes_task.core.sanitize import clean, clean_line
from hermes_task.reading.reader import Transcript
from hermes_task.reading.tasktree import TraceSource, Unread

SPAN_INTERNAL = 1  # SPAN_KIND_INTERNAL
STATUS_ERROR = 2  # STATUS_CODE_ERROR
PARENT_AGENT, TASK_AGENT = "hermes", "subagent"
SPAWN_TOOL = "delegate_task"
SCOPE = "hermes_task.export"

Attr = str | int | float | bool | list[str]
Json = dict[str, Any]


def value(item: Attr) -> Json:
    """An attribute value as OTLP's `AnyValue`; text sanitised."""
    if isinstance(item, bool):
        return {"boolValue": item}
    if isinstance(item, int):
        return {"intValue": str(item)}
    if isinstance(item, float):
        return {"doubleValue": item}
    if isinstance(item, str):
        return {"stringValue": clean(item)}
    return {"arrayValue": {"values": [{"stringValue": clean(s)} for s in item]}}


def attributes(pairs: Iterable[tuple[str, Attr | None]]) -> list[Json]:
    """The pairs with a value (OTLP has no null: an unknown figure is no attribute)."""
    return [{"key": key, "value": value(item)} for key, item in pairs if item is not None]


def nanos(seconds: float) -> str:
    """Unix seconds as OTLP's decimal nanoseconds (to the microsecond, as the rows keep time)."""
    return str(round(seconds * 1_000_000) * 1000)


def digest(size: int, *parts: str) -> str:
    """A lowercase hex id of `size` bytes from `parts`, never all zeros (OTLP's "no id")."""
    h = hashlib.blake2b(digest_size=size, person=b"hermes-task")
    for part in parts:
        h.update(part.encode("utf-8", "surrogatepass") + b"\0")
    hexed = h.hexdigest()
    return hexed if hexed.strip("0") else "0" * (2 * size - 1) + "1"


def usage_attributes(usage: Usage | None) -> list[tuple[str, Attr | None]]:
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


def event(at: float, name: str, pairs: Iterable[tuple[str, Attr | None]]) -> Json:
    return {"timeUnixNano": nanos(at), "name": name, "attributes": attributes(pairs)}


class _Trace:
    """The spans of one trace, built depth first from the parent's agent span."""

    def __init__(self, source: TraceSource, *, content: bool) -> None:
        self.source = source
        self.content = content
        self.trace_id = digest(16, "trace", source.tasks.parent_id)
        self.spans: list[Json] = []

    def span_id(self, *parts: str) -> str:
        return digest(8, self.trace_id, *parts)

    def add(
        self,
        ids: tuple[str, str],
        name: str,
        start: float,
        end: float,
        pairs: Iterable[tuple[str, Attr | None]],
        events: Sequence[Json] = (),
        status: Json | None = None,
    ) -> None:
        """A span (`ids`: its own and its parent's, empty for the root), never ending early."""
        span: Json = {
            "traceId": self.trace_id,
            "spanId": ids[0],
            "parentSpanId": ids[1],
            "name": clean_line(name),
            "kind": SPAN_INTERNAL,
            "startTimeUnixNano": nanos(start),
            "endTimeUnixNano": nanos(max(start, end)),
            "attributes": attributes(pairs),
            "events": list(events),
            "status": status,
        }  # OTLP/JSON leaves out a default: no parent, no event, no status
        self.spans.append({key: item for key, item in span.items() if item not in ("", [], None)})

    def events(self, segments: Sequence[SegmentInfo], rows: Sequence[Row]) -> list[Json]:
        """The compressions, then with `content` each row (docs/json.md "Events")."""
        events = []
        for i, seg in enumerate(segments):
            if seg.end_reason == "compression" and seg.ended_at is not None:
                after = segments[i + 1].id if i + 1 < len(segments) else None
                pairs = [("hermes_task.segment_id", seg.id), ("hermes_task.next_segment_id", after)]
                events.append(event(seg.ended_at, "hermes_task.context_compression", pairs))
        return events + [
            event(
                row.timestamp,
                "hermes_task.row",
                [
                    ("hermes_task.row_id", row.id),
                    ("hermes_task.role", row.role),
                    ("hermes_task.kind", row.kind),
                    ("hermes_task.text", row.text),
                    ("hermes_task.reasoning", row.reasoning),
                ],
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
        """Under the agent span `agent`, a span per tool call of `rows` (`last`: the last time
        known of them), then one per group of tasks whose spawn call no proven row carries."""
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
            span_id = self.span_id("spawn", agent, key)
            ends = [self.task(span_id, task, first) for task in tasks]
            pairs = [
                ("gen_ai.operation.name", "execute_tool"),
                ("gen_ai.tool.name", SPAWN_TOOL),
                ("gen_ai.tool.call.id", tasks[0].call_id),
                ("gen_ai.tool.type", "function"),
                ("hermes_task.tasks", len(tasks)),
                ("hermes_task.call_row_missing", True),
            ]
            self.add((span_id, agent), f"execute_tool {SPAWN_TOOL}", first, max([first, *ends]), pairs)

    def task(self, spawn: str, task: TaskEntry, at: float) -> float:
        """One task's `invoke_agent subagent` span under the spawn span `spawn` (and, when its
        child was read, its child's spans); its end."""
        child = task.child_session_id
        got = self.source.children.get(child) if child is not None else None
        span_id = self.span_id("task", spawn, str(task.task_index), task.number or "", child or "")
        pairs = task_attributes(task, self.content)
        events: list[Json] = []
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
        status = None
        if task.terminal and task.status != "completed":  # GenAI spans leave a success unset
            message = task.error if self.content and task.error else f"task {task.status}"
            status = {"code": STATUS_ERROR, "message": clean_line(message)}
        self.add((span_id, spawn), f"invoke_agent {TASK_AGENT}", start, end, pairs, events, status)
        return max(start, end)


def task_attributes(task: TaskEntry, content: bool) -> list[tuple[str, Attr | None]]:
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


def trace(source: TraceSource, *, version: str, content: bool = False) -> Json:
    """OTLP's `ExportTraceServiceRequest` (what `POST /v1/traces` takes) for `source`;
    `version`: the exporting tool's, as the instrumentation scope's."""
    built = _Trace(source, content=content)
    built.parent()
    resource = [
        ("service.name", "hermes-agent"),
        ("hermes_task.parent_id", source.tasks.parent_id),
        ("hermes_task.profile", source.parent.task.profile),
    ]
    scope = {"scope": {"name": SCOPE, "version": version}, "spans": built.spans}
    return {"resourceSpans": [{"resource": {"attributes": attributes(resource)}, "scopeSpans": [scope]}]}
