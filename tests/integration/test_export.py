"""`export --format otlp-json` against every real backend: the seeded parent's tasks as one
OTLP trace that the official protobuf definitions parse (tests/support/otlp.py), one
`invoke_agent` span per task of `recover --json` with its usage; the twice-rotated `c1`
spanning its three segments with its two compressions as events and its tool calls inside
its sessions' times; the same ids on a second export; a fan-out nested one level
(`--recursive`) nesting its tasks under their own spawn call; hostile text kept as data and no
token anywhere; and `--endpoint` posting the request to a local HTTP server on 127.0.0.1.

No real OTLP receiver runs here: a local HTTP server checks the request line, the headers and
the body instead (README "Traces")."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import pytest
from tests.support.cli_runner import hermes_task
from tests.support.otlp import spans

pytestmark = pytest.mark.integration

FORMAT = ("--format", "otlp-json")
NS = 1_000_000_000


def exported(backend: Any, *args: str) -> list[dict[str, Any]]:
    run = hermes_task(backend, "export", backend.manifest["parent"], *FORMAT, *args, timeout=120)
    assert run.code == 0, run.stderr
    assert backend.token not in run.stdout + run.stderr
    return spans(run.stdout)


def tasks_of(found: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {s["attrs"]["hermes_task.number"]: s for s in found if s["name"] == "invoke_agent subagent"}


def test_the_seeded_parent_exports_one_span_per_task_with_recovers_usage(backend: Any) -> None:
    m = backend.manifest
    doc = hermes_task(backend, "recover", m["parent"], "--json").json()
    found = exported(backend)
    (root,) = [s for s in found if "parentSpanId" not in s]
    assert (root["name"], root["attrs"]["gen_ai.agent.id"]) == ("invoke_agent hermes", m["parent"])
    tasks = tasks_of(found)
    assert sorted(tasks) == sorted(t["number"] for t in doc["tasks"])
    by_id = {s["spanId"]: s for s in found}
    for task in doc["tasks"]:
        span = tasks[task["number"]]
        spawn = by_id[span["parentSpanId"]]
        assert spawn["name"] == "execute_tool delegate_task"
        assert spawn["parentSpanId"] == root["spanId"]
        assert span["attrs"]["hermes_task.status"] == task["status"]
        assert span["attrs"].get("hermes_task.child_session_id") == task["child_session_id"]
        usage = task["usage"]
        if usage is None:
            assert "gen_ai.usage.input_tokens" not in span["attrs"]
            continue
        assert span["attrs"].get("gen_ai.usage.input_tokens") == usage["input_tokens"]
        assert span["attrs"].get("gen_ai.usage.output_tokens") == usage["output_tokens"]
        assert span["attrs"].get("hermes_task.usage.cost_usd") == usage["cost_usd"]
        assert span["attrs"]["hermes_task.usage.segments"] == usage["segments"]
        assert span["attrs"]["hermes_task.usage.complete"] == usage["complete"]
        if task["status"] not in ("completed", "running", "unknown"):
            assert span["attrs"]["error.type"] == task["status"]


def test_a_rotated_task_spans_its_segments_with_its_compressions_as_events(backend: Any) -> None:
    c1 = backend.manifest["c1"]
    shown = hermes_task(backend, "show", c1["root"], "--json")
    assert shown.code == 0, shown.stderr
    segments = shown.json()["task"]["segments"]
    found = exported(backend)
    (span,) = [
        s for s in tasks_of(found).values() if s["attrs"].get("hermes_task.child_session_id") == c1["root"]
    ]
    assert span["attrs"]["hermes_task.lineage"] == [c1["root"], c1["mid"], c1["tip"]]
    compressions = [e for e in span["events"] if e["name"] == "hermes_task.context_compression"]
    assert [int(e["timeUnixNano"]) for e in compressions] == [
        round(s["ended_at"] * 1e6) * 1000 for s in segments[:2]
    ]
    start, end = int(span["startTimeUnixNano"]), int(span["endTimeUnixNano"])
    assert start == round(segments[0]["started_at"] * 1e6) * 1000
    assert end == round(segments[-1]["ended_at"] * 1e6) * 1000
    tools = [s for s in found if s.get("parentSpanId") == span["spanId"]]
    assert tools, "c1's tool calls are spans under its task"
    for tool in tools:
        assert tool["name"].startswith("execute_tool ")
        assert start <= int(tool["startTimeUnixNano"]) <= int(tool["endTimeUnixNano"]) <= end


def test_every_task_span_is_inside_its_childs_sessions(backend: Any) -> None:
    found = exported(backend)
    for span in tasks_of(found).values():
        child = span["attrs"].get("hermes_task.child_session_id")
        if child is None:
            continue
        shown = hermes_task(backend, "show", child, "--json")
        assert shown.code == 0, shown.stderr
        task = shown.json()["task"]
        start, end = int(span["startTimeUnixNano"]), int(span["endTimeUnixNano"])
        assert start == round(task["segments"][0]["started_at"] * 1e6) * 1000
        last = task["segments"][-1]["ended_at"]
        if task["state"] == "ended":
            assert end == round(last * 1e6) * 1000
        else:  # its session still open: the span ends at its last row, open unless the task ended
            unfinished = span["attrs"].get("hermes_task.unfinished", False)
            assert unfinished is not span["attrs"]["hermes_task.terminal"]
            assert end == round(max(r["timestamp"] for r in shown.json()["rows"]) * 1e6) * 1000


def test_two_exports_give_the_same_ids(backend: Any) -> None:
    first = [(s["traceId"], s["spanId"], s.get("parentSpanId")) for s in exported(backend)]
    again = [(s["traceId"], s["spanId"], s.get("parentSpanId")) for s in exported(backend)]
    assert first == again
    assert len({span_id for _t, span_id, _p in first}) == len(first)


def test_content_is_opt_in_and_hostile_text_stays_data(backend: Any) -> None:
    rich = backend.manifest["rich"]
    run = hermes_task(backend, "export", backend.manifest["parent"], *FORMAT, "--content", timeout=120)
    assert run.code == 0, run.stderr
    assert backend.token not in run.stdout + run.stderr
    assert run.stdout.isascii()
    assert "\x1b" not in run.stdout
    spans(run.stdout)
    plain = hermes_task(backend, "export", backend.manifest["parent"], *FORMAT, timeout=120)
    assert '"hermes_task.row"' not in plain.stdout
    assert '"hermes_task.row"' in run.stdout
    assert rich["hostile_text"] not in run.stdout  # its controls are replaced, never passed through


def test_recursive_nests_a_fan_outs_tasks_under_their_spawn_calls(backend: Any) -> None:
    unit = backend.fan_out(["Shard one", "Shard two"], nested=2)
    run = hermes_task(backend, "export", unit["parent"], *FORMAT, "--recursive", timeout=120)
    assert run.code == 0, run.stderr
    found = spans(run.stdout)
    by_id = {s["spanId"]: s for s in found}
    tasks = [s for s in found if s["name"] == "invoke_agent subagent"]
    nested = [
        s for s in tasks if by_id[by_id[s["parentSpanId"]]["parentSpanId"]]["name"] == "invoke_agent subagent"
    ]
    assert len(tasks) == 6
    assert len(nested) == 4
    for span in nested:
        owner = by_id[by_id[span["parentSpanId"]]["parentSpanId"]]
        grandchildren = unit["grandchildren"][owner["attrs"]["hermes_task.child_session_id"]]
        assert span["attrs"]["hermes_task.child_session_id"] in grandchildren


Seen = list[tuple[str, dict[str, str], bytes]]


class _Server(HTTPServer):
    seen: Seen


class _Receiver(BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.server.seen.append((self.requestline, {k.lower(): v for k, v in self.headers.items()}, body))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the test reads what was seen."""


@pytest.fixture
def receiver() -> Iterator[tuple[str, Seen]]:
    seen: Seen = []
    server = _Server(("127.0.0.1", 0), _Receiver)
    server.seen = seen
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_endpoint_posts_to_a_local_receiver(backend: Any, receiver: tuple[str, list[Any]]) -> None:
    url, seen = receiver
    run = hermes_task(backend, "export", backend.manifest["parent"], *FORMAT, "--endpoint", url, timeout=120,
                      OTEL_EXPORTER_OTLP_HEADERS="authorization=Bearer%20abc,x-tenant=t1")  # fmt: skip
    assert (run.code, run.stdout, run.stderr) == (0, "", "")
    ((line, headers, body),) = seen
    assert line == "POST /v1/traces HTTP/1.1"
    assert headers["content-type"] == "application/json"
    assert (headers["authorization"], headers["x-tenant"]) == ("Bearer abc", "t1")
    assert len(tasks_of(spans(body))) == len(backend.manifest["expected_tasks"])
    assert b"Bearer" not in body
    assert backend.token.encode() not in body


def test_an_unreachable_endpoint_is_one_line_and_exit_7(backend: Any) -> None:
    run = hermes_task(backend, "export", backend.manifest["parent"], *FORMAT, "--endpoint", "http://127.0.0.1:9",
                      timeout=120)  # fmt: skip
    assert run.code == 7
    assert run.stdout == ""
    assert run.stderr.splitlines() == [
        "error: could not reach the OTLP endpoint: http://127.0.0.1:9/v1/traces (ConnectError)"
    ]
