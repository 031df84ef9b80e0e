"""`hermes-task export --format otlp-json` on the in-memory dashboard: the parent's tasks as
one OTLP trace that the official protobuf definitions parse (tests/support/otlp.py); the span
tree parent -> spawn call -> task -> tool call (nested tasks under their own spawn call with
--recursive); usage attributes equal to `recover --json`'s; ids the same on every export;
times the rows' own; what is not proven said as an attribute; content only with --content,
hostile text sanitised, no token anywhere; the destinations (stdout, --output, --endpoint,
the OTEL_EXPORTER_OTLP_* variables) and their failures' exit codes. The mapping's corners
(compressions, a failed child read, a spawn call without its row) are tested on the pure
`render/otlp.trace`."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx
import pytest
from msgspec.structs import replace
from typer.testing import CliRunner, Result

from hermes_task.cli.app import app
from hermes_task.cli.export import otlp_headers, shown, traces_url
from hermes_task.cli.options import Environment
from hermes_task.core.documents import (
    BackendInfo,
    Coverage,
    Row,
    SegmentInfo,
    TaskEntry,
    TaskInfo,
    TasksDoc,
    TasksSummary,
    ToolCall,
    TranscriptDoc,
    WarningItem,
)
from hermes_task.core.ui_strings import TaskStatus, WarningCode
from hermes_task.failures import Code, HermesError
from hermes_task.reading.reader import Transcript
from hermes_task.reading.tasktree import TraceSource, Unread
from hermes_task.render.jsontext import document
from hermes_task.render.otlp import digest, nanos, trace
from tests.support.cli_runner import CLI_ENV
from tests.support.conversations import Conversations
from tests.support.otlp import spans
from tests.support.replay import TOKEN
from tests.unit.test_recover_cli import _results

P = "20261201_120000_a2a2a2"
A = "20261201_120001_b2b2b2"
B = "20261201_120002_c2c2c2"
G = "20261201_120003_d2d2d2"
MISSING = "20261201_120004_f2f2f2"
T0 = 1796056440.0
URL = "http://127.0.0.1:9119"
FIGURES: dict[str, Any] = {"input_tokens": 1200, "output_tokens": 90, "cache_read_tokens": 300, "cache_write_tokens": 20,
                           "reasoning_tokens": 7, "api_call_count": 3, "estimated_cost_usd": 0.0125,
                           "actual_cost_usd": None, "cost_status": "estimated"}  # fmt: skip
HOSTILE = "Audit \x1b]52;c;cGF3bmVk\x07 \u202eevil\x1b[2J"


def spawn(
    c: Conversations, sid: str, call_id: str, goals: list[str], payload: dict[str, Any], at: float
) -> None:
    call = {"id": call_id, "type": "function",
            "function": {"name": "delegate_task", "arguments": json.dumps({"tasks": [{"goal": g} for g in goals]})}}  # fmt: skip
    c.add(sid, "assistant", "", tool_calls=[call], timestamp=at)
    c.add(sid, "tool", json.dumps(payload), tool_call_id=call_id, tool_name="delegate_task", timestamp=at + 8)


def child(c: Conversations, sid: str, parent: str, goal: str, *, ended: float | None, **detail: Any) -> None:
    c.session(sid, parent=parent)
    c.details[sid].update(started_at=T0 + 1.5, ended_at=ended, end_reason="agent_close" if ended else None,
                          **detail)  # fmt: skip
    c.add(sid, "user", goal, timestamp=T0 + 2)


def terminal_call(c: Conversations, sid: str, call_id: str, at: float, output: str = "3 files") -> None:
    call = {
        "id": call_id,
        "type": "function",
        "function": {"name": "terminal", "arguments": '{"command": "ls"}'},
    }
    c.add(sid, "assistant", "", tool_calls=[call], timestamp=at)
    c.add(sid, "tool", output, tool_call_id=call_id, tool_name="terminal", timestamp=at + 1)


def delegation(c: Conversations, *, goal: str = "Audit A") -> None:
    """P delegates three tasks in one call: A completed (a tool call, then a delegation of its
    own to G), B failed with a child the dashboard does not have, C timed out with no child."""
    c.session(P)
    c.add(P, "user", "Audit the repository.", timestamp=T0)
    spawn(c, P, "call_p", [goal, "Audit B", "Audit C"],
          _results(("completed", A), ("failed", MISSING), ("timeout", None)), T0 + 1)  # fmt: skip
    child(c, A, P, goal, ended=T0 + 7, **FIGURES)
    terminal_call(c, A, "call_t", T0 + 3)
    spawn(c, A, "call_a", ["Read a.py"], _results(("completed", G)), T0 + 4)
    c.add(A, "assistant", "Module A audited: secret-looking text stays out.", timestamp=T0 + 6)
    child(c, G, A, "Read a.py", ended=None)
    terminal_call(c, G, "call_g", T0 + 4.5)


def runner(c: Conversations, captured: list[httpx.Request] | None = None, answer: int = 200) -> Environment:
    """The dashboard `c`; a POST to /v1/traces is captured (answered `answer`)."""

    def handle(request: httpx.Request) -> httpx.Response:
        if request.method == "POST" and captured is not None:
            captured.append(request)
            return httpx.Response(answer, json={})
        return c.handle(request)

    return Environment(transport=httpx.MockTransport(handle))


def export(c: Conversations, *args: str, environ: Mapping[str, str] | None = None,
           environment: Environment | None = None) -> Result:  # fmt: skip
    env: dict[str, str | None] = {**CLI_ENV, **(environ or {})}
    return CliRunner().invoke(app, ["export", *args, "--url", URL], env=env, obj=environment or runner(c))


def exported(c: Conversations, *args: str) -> list[dict[str, Any]]:
    result = export(c, P, "--format", "otlp-json", *args)
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    return spans(result.stdout)


def by_name(found: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return [s for s in found if s["name"] == name]


def recovered(c: Conversations, *args: str) -> dict[str, Any]:
    result = CliRunner().invoke(
        app, ["recover", P, "--json", *args, "--url", URL], env=CLI_ENV, obj=runner(c)
    )
    assert result.exit_code == 0, result.output
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


# -- the span tree ------------------------------------------------------------------------------


def test_parent_spawn_task_and_tool_spans_nest() -> None:
    c = Conversations()
    delegation(c)
    found = exported(c)
    ids = {s["spanId"] for s in found}
    assert len(ids) == len(found)  # unique span ids
    assert len({s["traceId"] for s in found}) == 1
    (root,) = [s for s in found if "parentSpanId" not in s]
    assert root["name"] == "invoke_agent hermes"
    assert root["attrs"]["gen_ai.agent.id"] == P
    # A's own delegate_task call is a tool span of A's (its tasks nest only with --recursive)
    (spawn_span,) = [
        s for s in by_name(found, "execute_tool delegate_task") if s["parentSpanId"] == root["spanId"]
    ]
    assert spawn_span["attrs"]["gen_ai.tool.call.id"] == "call_p"
    tasks = by_name(found, "invoke_agent subagent")
    assert [t["parentSpanId"] for t in tasks] == [spawn_span["spanId"]] * 3  # one span per task
    one, two, three = sorted(tasks, key=lambda t: t["attrs"]["hermes_task.number"])
    assert one["attrs"]["gen_ai.agent.id"] == A
    assert one["attrs"]["hermes_task.goal"] == "Audit A"
    assert "status" not in one
    assert "error.type" not in one["attrs"]
    (tool,) = [s for s in by_name(found, "execute_tool terminal") if s["parentSpanId"] == one["spanId"]]
    assert tool["attrs"]["gen_ai.tool.call.id"] == "call_t"
    assert (int(tool["startTimeUnixNano"]), int(tool["endTimeUnixNano"])) == (
        int(nanos(T0 + 3)),
        int(nanos(T0 + 4)),
    )
    # B: its child could not be read (not found); C: no child at all. Both failed, said so.
    assert two["attrs"]["hermes_task.read_failure"] == "not_found"
    assert (two["attrs"]["error.type"], two["status"]) == ("failed", {"code": 2, "message": "task failed"})
    assert three["attrs"]["hermes_task.unavailable_reason"] == "no_durable_child_reference"
    assert three["attrs"]["error.type"] == "timeout"
    assert not [s for s in found if s.get("parentSpanId") in (two["spanId"], three["spanId"])]


def test_times_are_the_rows_and_the_sessions_own() -> None:
    c = Conversations()
    delegation(c)
    found = exported(c)
    (one,) = [s for s in by_name(found, "invoke_agent subagent") if s["attrs"].get("gen_ai.agent.id") == A]
    assert (one["startTimeUnixNano"], one["endTimeUnixNano"]) == (nanos(T0 + 1.5), nanos(T0 + 7))
    (spawn_span,) = [
        s
        for s in by_name(found, "execute_tool delegate_task")
        if s["attrs"]["gen_ai.tool.call.id"] == "call_p"
    ]
    assert (spawn_span["startTimeUnixNano"], spawn_span["endTimeUnixNano"]) == (nanos(T0 + 1), nanos(T0 + 9))
    (root,) = [s for s in found if "parentSpanId" not in s]
    # the parent chat is open (no ended_at): it ends at its last row, and says so
    assert (root["startTimeUnixNano"], root["endTimeUnixNano"]) == (nanos(T0), nanos(T0 + 9))
    assert root["attrs"]["hermes_task.unfinished"] is True
    for span in found:
        assert int(span["startTimeUnixNano"]) <= int(span["endTimeUnixNano"])
        assert int(nanos(T0)) <= int(span["startTimeUnixNano"]) <= int(nanos(T0 + 9))


def test_usage_attributes_are_recovers_usage() -> None:
    c = Conversations()
    delegation(c)
    doc = recovered(c)
    found = exported(c)
    tasks = {s["attrs"]["hermes_task.number"]: s["attrs"] for s in by_name(found, "invoke_agent subagent")}
    for task in doc["tasks"]:
        attrs, usage = tasks[task["number"]], task["usage"]
        if usage is None:
            assert not [k for k in attrs if "usage" in k]
            continue
        assert attrs["gen_ai.usage.input_tokens"] == usage["input_tokens"]
        assert attrs["gen_ai.usage.output_tokens"] == usage["output_tokens"]
        for key in ("cache_read_tokens", "cache_write_tokens", "reasoning_tokens", "api_calls", "cost_usd",
                    "cost_kind", "complete", "segments", "missing"):  # fmt: skip
            assert attrs.get(f"hermes_task.usage.{key}") == (usage[key] if usage[key] != [] else [])
    a = tasks["1.1"]
    assert (a["gen_ai.usage.input_tokens"], a["gen_ai.usage.output_tokens"]) == (1200, 90)
    assert a["hermes_task.usage.cost_usd"] == pytest.approx(0.0125)


def test_the_same_history_exports_the_same_ids() -> None:
    c = Conversations()
    delegation(c)
    first = [(s["traceId"], s["spanId"], s.get("parentSpanId")) for s in exported(c)]
    again = [(s["traceId"], s["spanId"], s.get("parentSpanId")) for s in exported(c)]
    assert first == again
    assert first[0][0] == digest(16, "trace", P)


def test_recursive_nests_a_tasks_own_tasks_under_its_spawn_call() -> None:
    c = Conversations()
    delegation(c)
    found = exported(c, "--recursive")
    (one,) = [s for s in by_name(found, "invoke_agent subagent") if s["attrs"].get("gen_ai.agent.id") == A]
    (inner,) = [s for s in by_name(found, "execute_tool delegate_task") if s["parentSpanId"] == one["spanId"]]
    (nested,) = [s for s in by_name(found, "invoke_agent subagent") if s["parentSpanId"] == inner["spanId"]]
    assert (nested["attrs"]["gen_ai.agent.id"], nested["attrs"]["hermes_task.goal"]) == (G, "Read a.py")
    (tool,) = [s for s in by_name(found, "execute_tool terminal") if s["parentSpanId"] == nested["spanId"]]
    assert tool["attrs"]["gen_ai.tool.call.id"] == "call_g"
    # G's session is open but its task completed: finished, ending at its last row
    assert "hermes_task.unfinished" not in nested["attrs"]
    assert nested["endTimeUnixNano"] == nanos(T0 + 5.5)


def test_a_running_task_exports_what_is_proven_with_its_spans_open() -> None:
    c = Conversations()
    c.session(P)
    c.add(P, "user", "Go.", timestamp=T0)
    spawn(c, P, "call_p", ["Work"], _results(("running", A)), T0 + 1)
    child(c, A, P, "Work", ended=None)
    call = {"id": "call_open", "type": "function", "function": {"name": "terminal", "arguments": "{}"}}
    c.add(A, "assistant", "", tool_calls=[call], timestamp=T0 + 3)
    found = exported(c)
    (task,) = by_name(found, "invoke_agent subagent")
    assert (task["attrs"]["hermes_task.status"], task["attrs"]["hermes_task.unfinished"]) == ("running", True)
    assert "status" not in task
    assert "error.type" not in task["attrs"]
    # open spans end at the last time known of their conversation: the child's last row
    assert (task["startTimeUnixNano"], task["endTimeUnixNano"]) == (nanos(T0 + 1.5), nanos(T0 + 3))
    (tool,) = by_name(found, "execute_tool terminal")
    assert tool["attrs"]["hermes_task.unfinished"] is True
    assert tool["endTimeUnixNano"] == nanos(T0 + 3)


# -- content, hostile text and secrets ---------------------------------------------------------


def test_text_is_exported_only_with_content_and_always_sanitised() -> None:
    c = Conversations()
    delegation(c, goal=HOSTILE)
    plain = export(c, P, "--format", "otlp-json")
    full = export(c, P, "--format", "otlp-json", "--content")
    for result in (plain, full):
        assert result.exit_code == 0, result.output
        assert result.stdout.isascii()
        assert "\x1b" not in result.stdout
        assert "\x07" not in result.stdout
        assert TOKEN not in result.stdout + result.stderr
        (one,) = [s for s in by_name(spans(result.stdout), "invoke_agent subagent")
                  if s["attrs"].get("gen_ai.agent.id") == A]  # fmt: skip
        assert one["attrs"]["hermes_task.goal"] == "Audit ^[]52;c;cGF3bmVk^G <U+202E>evil^[[2J"
    assert "\\u001b" not in plain.stdout
    assert "\\u202e" not in plain.stdout
    assert "secret-looking" not in plain.stdout
    assert "3 files" not in plain.stdout
    assert "secret-looking" in full.stdout
    found = spans(full.stdout)
    (tool,) = [
        s for s in by_name(found, "execute_tool terminal") if s["attrs"]["gen_ai.tool.call.id"] == "call_t"
    ]
    assert (tool["attrs"]["gen_ai.tool.call.arguments"], tool["attrs"]["gen_ai.tool.call.result"]) == (
        '{"command": "ls"}', "3 files"
    )  # fmt: skip
    (one,) = [s for s in by_name(found, "invoke_agent subagent") if s["attrs"].get("gen_ai.agent.id") == A]
    rows = [e for e in one["events"] if e["name"] == "hermes_task.row"]
    assert [e["attributes"][1]["value"]["stringValue"] for e in rows] == [
        "user", "assistant", "tool", "assistant", "tool", "assistant"
    ]  # fmt: skip


# -- destinations and failures ------------------------------------------------------------------


def test_output_writes_the_file_and_stdout_stays_empty(tmp_path: Path) -> None:
    c = Conversations()
    delegation(c)
    target = tmp_path / "trace.json"
    result = export(c, P, "--format", "otlp-json", "--output", str(target))
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "")
    assert len(spans(target.read_text())) == 7  # root, spawn, 3 tasks, A's two tool calls
    dash = export(c, P, "--format", "otlp-json", "-o", "-")
    assert dash.exit_code == 0
    assert spans(dash.stdout)


def test_endpoint_posts_the_request_with_the_otlp_headers() -> None:
    c = Conversations()
    delegation(c)
    captured: list[httpx.Request] = []
    headers = {"OTEL_EXPORTER_OTLP_HEADERS": "x-api-key=s%3Dcret, tenant = acme"}
    result = export(c, P, "--format", "otlp-json", "--endpoint", "http://127.0.0.1:4318/",
                    environ=headers, environment=runner(c, captured))  # fmt: skip
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "")
    (request,) = captured
    assert (request.method, str(request.url)) == ("POST", "http://127.0.0.1:4318/v1/traces")
    assert request.headers["content-type"] == "application/json"
    assert (request.headers["x-api-key"], request.headers["tenant"]) == ("s=cret", "acme")
    assert len(spans(request.content)) == 7
    assert b"s=cret" not in request.content
    assert TOKEN.encode() not in request.content


def test_debug_says_where_the_request_went_never_its_headers() -> None:
    c = Conversations()
    delegation(c)
    captured: list[httpx.Request] = []
    result = export(c, P, "--format", "otlp-json", "--endpoint", "https://u:pw@127.0.0.1:4318", "--debug",
                    environ={"OTEL_EXPORTER_OTLP_HEADERS": "key=k3y"}, environment=runner(c, captured))  # fmt: skip
    assert result.exit_code == 0, result.output
    (line,) = [line for line in result.stderr.splitlines() if "export POST" in line]
    assert line.startswith("debug: export POST https://127.0.0.1:4318/v1/traces: HTTP 200, ")
    assert "k3y" not in result.stderr
    assert "pw" not in result.stderr


def test_the_sdk_variables_name_the_endpoint() -> None:
    c = Conversations()
    delegation(c)
    captured: list[httpx.Request] = []
    environ = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "a=1",
               "OTEL_EXPORTER_OTLP_HEADERS": "b=2"}  # fmt: skip
    result = export(c, P, "--format", "otlp-json", environ=environ, environment=runner(c, captured))
    assert (result.exit_code, result.stdout) == (0, "")
    assert str(captured[0].url) == "http://127.0.0.1:4318/v1/traces"
    assert captured[0].headers.get("a") == "1"
    assert "b" not in captured[0].headers
    # --output wins over the variables
    kept = export(c, P, "--format", "otlp-json", "-o", "-", environ=environ, environment=runner(c, captured))
    assert kept.exit_code == 0
    assert spans(kept.stdout)
    assert len(captured) == 1


def test_traces_url_follows_the_sdk_rules() -> None:
    assert traces_url(None, {}) is None
    assert traces_url("http://h:4318/v1/traces", {}) == "http://h:4318/v1/traces"
    assert traces_url(None, {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://h/custom"}) == "https://h/custom"
    assert (
        traces_url(None, {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://h:4318/base/"})
        == "http://h:4318/base/v1/traces"
    )
    with pytest.raises(HermesError) as caught:
        traces_url("ftp://h", {})
    assert caught.value.code is Code.USAGE
    assert shown("https://user:pw@h:8443/v1/traces?key=1") == "https://h:8443/v1/traces"
    assert otlp_headers({"OTEL_EXPORTER_OTLP_HEADERS": "k=v%20w,,"}) == {"k": "v w"}
    with pytest.raises(HermesError) as bad:
        otlp_headers({"OTEL_EXPORTER_OTLP_HEADERS": "k=v,secretvalue"})
    assert "secretvalue" not in bad.value.message
    assert "pair 2" in bad.value.message


@pytest.mark.parametrize(
    ("args", "environ", "message"),
    [
        (["not an id\n"], {}, "invalid id"),
        (["--output", "f", "--endpoint", "http://127.0.0.1:4318"], {}, "choose one destination"),
        (["--endpoint", "file:///etc/passwd"], {}, "not an http(s) URL"),
        ([], {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://h", "OTEL_EXPORTER_OTLP_HEADERS": "nokey"}, "pair 1"),
        (["--output", "/nonexistent/dir/f.json"], {}, "no such directory"),
    ],
)
def test_usage_errors_exit_2_with_one_line(args: list[str], environ: dict[str, str], message: str) -> None:
    c = Conversations()
    delegation(c)
    parent = args.pop(0) if args and args[0].startswith("not") else P
    result = export(c, parent, "--format", "otlp-json", *args, environ=environ)
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert result.stdout == ""


def test_format_is_required() -> None:
    result = export(Conversations(), P)
    assert result.exit_code == 2
    assert "--format" in result.stderr


def refusing(c: Conversations, error: Exception | int) -> Environment:
    def handle(request: httpx.Request) -> httpx.Response:
        if request.method != "POST":
            return c.handle(request)
        if isinstance(error, int):
            return httpx.Response(error, text="nope")
        raise error

    return Environment(transport=httpx.MockTransport(handle))


@pytest.mark.parametrize(
    ("error", "status", "line"),
    [
        (httpx.ConnectError("refused"), 7, "error: could not reach the OTLP endpoint: http://127.0.0.1:4318/v1/traces (ConnectError)"),
        (httpx.ReadTimeout("slow"), 7, "error: the OTLP endpoint timed out: http://127.0.0.1:4318/v1/traces"),
        (503, 7, "error: the OTLP endpoint answered HTTP 503: http://127.0.0.1:4318/v1/traces"),
        (415, 6, "error: the OTLP endpoint answered HTTP 415: http://127.0.0.1:4318/v1/traces"),
    ],
)  # fmt: skip
def test_a_receiver_that_fails_is_one_line_and_its_exit_code(
    error: Exception | int, status: int, line: str
) -> None:
    c = Conversations()
    delegation(c)
    result = export(c, P, "--format", "otlp-json", "--endpoint", "http://127.0.0.1:4318",
                    environment=refusing(c, error))  # fmt: skip
    assert result.exit_code == status
    assert result.stderr == line + "\n"
    assert result.stdout == ""


def test_a_parent_that_cannot_be_read_keeps_its_code() -> None:
    c = Conversations()
    result = export(c, MISSING, "--format", "otlp-json")
    assert result.exit_code == 4
    assert result.stdout == ""


# -- the pure mapping's corners -------------------------------------------------------------------


def _task(
    number: str, child_id: str | None, status: TaskStatus = TaskStatus.completed, **extra: Any
) -> TaskEntry:
    return TaskEntry(call_id=extra.pop("call_id", "call_x"), goal="g", task_index=int(number[-1]) - 1,
                     delegation_id=None, subagent_id=None, child_session_id=child_id, status=status,
                     terminal=status != "running", unavailable_reason=None, number=number, **extra)  # fmt: skip


def _doc(sid: str, rows: list[Row], segments: list[SegmentInfo], state: str = "ended") -> TranscriptDoc:
    info = TaskInfo(root_id=sid, tip_id=segments[-1].id, lineage=[s.id for s in segments], segments=segments,
                    state=state)  # type: ignore[arg-type]  # fmt: skip
    return TranscriptDoc(rows=rows, task=info, backend=BackendInfo(contract="current"),
                         coverage=Coverage(unique_rows=len(rows), has_older=False, at_start=True))  # fmt: skip


def _source(tasks: list[TaskEntry], children: dict[str, Transcript | Unread], rows: list[Row]) -> TraceSource:
    summary = TasksSummary(total=len(tasks), terminal=len(tasks), state="finished")
    parent = _doc(P, rows, [SegmentInfo(id=P, started_at=T0, ended_at=T0 + 20, end_reason="agent_close")])
    return TraceSource(
        tasks=TasksDoc(parent_id=P, tasks=tasks, summary=summary), parent=parent, children=children
    )


def test_compressions_are_events_and_a_rotated_child_spans_its_segments() -> None:
    segments = [SegmentInfo(id=A, started_at=T0 + 1, ended_at=T0 + 4, end_reason="compression"),
                SegmentInfo(id=B, started_at=T0 + 4, ended_at=T0 + 8, end_reason="agent_close")]  # fmt: skip
    rows = [Row(id=1, session_id=A, role="user", text="g", timestamp=T0 + 2),
            Row(id=9, session_id=B, role="assistant", text="done", timestamp=T0 + 7)]  # fmt: skip
    doc = replace(
        _doc(A, rows, segments), warnings=[WarningItem(code=WarningCode.partial_history, message="m")]
    )
    read = Transcript(rows=rows, doc=doc, segments=(A, B))
    request = trace(_source([_task("1.1", A, call_id="nowhere")], {A: read}, []), version="9")
    found = spans(document(request))
    (task,) = by_name(found, "invoke_agent subagent")
    assert (task["startTimeUnixNano"], task["endTimeUnixNano"]) == (nanos(T0 + 1), nanos(T0 + 8))
    assert task["attrs"]["hermes_task.lineage"] == [A, B]
    assert task["attrs"]["hermes_task.partial_history"] is True
    (event,) = task["events"]
    assert (event["name"], event["timeUnixNano"]) == ("hermes_task.context_compression", nanos(T0 + 4))
    assert {kv["key"]: kv["value"]["stringValue"] for kv in event["attributes"]} == {
        "hermes_task.segment_id": A, "hermes_task.next_segment_id": B}  # fmt: skip
    # its spawn call has no row in the parent: a span of its own, said so
    (spawn_span,) = by_name(found, "execute_tool delegate_task")
    assert spawn_span["attrs"]["hermes_task.call_row_missing"] is True
    assert task["parentSpanId"] == spawn_span["spanId"]


def test_a_failed_child_read_keeps_its_rows_and_says_why() -> None:
    rows = [Row(id=3, session_id=A, role="assistant", text="", timestamp=T0 + 5,
                tool_calls=[ToolCall(id=None, name="web_search", arguments=None)])]  # fmt: skip
    read = Transcript(rows=rows, failure=HermesError(Code.NETWORK), segments=(A,))
    call = Row(id=1, session_id=P, role="assistant", text="", timestamp=T0 + 1,
               tool_calls=[ToolCall(id="call_x", name="delegate_task", arguments="{}")])  # fmt: skip
    task = _task("1.1", A, status=TaskStatus.running)
    found = spans(document(trace(_source([task], {A: read}, [call]), version="9")))
    (span,) = by_name(found, "invoke_agent subagent")
    assert span["attrs"]["hermes_task.read_failure"] == "network"
    assert span["attrs"]["hermes_task.unfinished"] is True
    (tool,) = by_name(found, "execute_tool web_search")  # no call id, no result: open at the last row
    assert tool["attrs"]["hermes_task.unfinished"] is True
    assert tool["startTimeUnixNano"] == tool["endTimeUnixNano"] == nanos(T0 + 5)
    (spawn_span,) = by_name(found, "execute_tool delegate_task")
    assert spawn_span["attrs"]["hermes_task.unfinished"] is True  # the parent has no result row


def test_a_bound_is_the_reason_a_task_has_no_child_spans() -> None:
    task = _task("1.1", A)
    found = spans(document(trace(_source([task], {A: Unread("bound_reached", "m")}, []), version="9")))
    (span,) = by_name(found, "invoke_agent subagent")
    assert span["attrs"]["hermes_task.unavailable_reason"] == "bound_reached"


def test_digest_is_never_all_zeros() -> None:
    assert digest(8, "x") == digest(8, "x") != digest(8, "y")
    assert len(digest(16, "x")) == 32
