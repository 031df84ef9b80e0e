"""Snapshots (syrupy) of what users see, beside exact asserts: the `show --json` document, the
rendered terminal text and an error document, for a fixed transcript covering every
projection rule (reasoning, commentary, tool calls with and without arguments, a steer row, a
hidden row, an image, archived rows, hostile bytes). `pytest --snapshot-update` rewrites them
after an intended change; the diff is the review."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion
from typer.testing import CliRunner

from hermes_task.cli.app import app
from hermes_task.render import rows as rows_module
from tests.support.dashboard import Dashboard, serving
from tests.support.replay import BASE_URL, TOKEN, Replay

URL = "http://127.0.0.1:9119"
CHILD = "20261130_163400_1f2d7b"
PARENT = "20261130_163359_a4d16b"
ENV = {
    "HERMES_DASHBOARD_TOKEN": "snap-token-0123456789",
    "NO_COLOR": "1",
    "COLUMNS": "100",
    "XDG_CONFIG_HOME": "/nonexistent",
}

REPLAY_ENV = {**ENV, "HERMES_DASHBOARD_TOKEN": TOKEN}

DETAIL = {
    "id": CHILD,
    "source": "subagent",
    "parent_session_id": PARENT,
    "model_config": json.dumps({"max_iterations": 90, "_delegate_from": PARENT}),
    "started_at": 1796056440.0,
    "ended_at": 1796056500.0,
    "end_reason": "agent_close",
    "message_count": 8,
    "is_default_profile": True,
    "profile": "default",
}


def row(i: int, role: str, content: Any, **extra: Any) -> dict[str, Any]:
    return {
        "id": i,
        "session_id": CHILD,
        "role": role,
        "content": content,
        "timestamp": 1796056440.0 + i,
        **extra,
    }


MESSAGES = [
    row(1, "user", "Count TODO markers under src/ and list the files"),
    row(
        2,
        "assistant",
        "",
        display_commentary=["Scanning the files now."],
        display_reasoning="Start with grep.",
        tool_calls=[
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "terminal", "arguments": '{"command": "grep -rn TODO src/"}'},
            },
            {"id": "call_2", "type": "function", "function": {"name": "read_file"}},
        ],
    ),
    row(
        3,
        "tool",
        "src/a.py:3: TODO\nsrc/b.py:1: TODO",
        tool_call_id="call_1",
        tool_name="terminal",
        active=0,
        compacted=1,
    ),
    row(4, "user", "[System: the previous call was cut off]", display_kind="hidden"),
    row(5, "user", "[steer] raw", display_kind="steer", display_content="Skip tests/ when counting."),
    row(
        6,
        "user",
        [
            {"type": "text", "text": "what is in this picture?"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
        ],
    ),
    row(7, "assistant", "Hostile: \x1b]52;c;ZXZpbA==\x07 \x1b[2J \x9b31m \u202eevil"),
    row(8, "assistant", '{"looks": "like JSON", "but": "is prose"}', reasoning="raw thinking"),
]


def _serve(messages: list[dict[str, Any]]) -> Iterator[Dashboard]:
    """CHILD ended with these rows (PARENT unknown: 404), on a dashboard asked only details
    and pages."""
    dash = Dashboard(serves=frozenset({"detail", "messages"}))
    dash.put(CHILD, **{k: v for k, v in DETAIL.items() if k != "id"})
    dash.rows[CHILD] = messages
    dash.envelope = {"profile": "default"}
    with serving(dash.handle, URL):
        yield dash


@pytest.fixture
def dashboard() -> Iterator[Dashboard]:
    yield from _serve(MESSAGES)


def invoke(*args: str) -> Any:
    return CliRunner().invoke(app, [*args, "--url", URL], env=ENV)


def test_show_json_document(dashboard: Dashboard, snapshot: SnapshotAssertion) -> None:
    result = invoke("show", CHILD, "--json")
    assert result.exit_code == 0
    assert result.stderr == ""
    doc = json.loads(result.stdout)
    assert [r["id"] for r in doc["rows"]] == [1, 2, 3, 5, 6, 7, 8]
    assert doc["task"]["state"] == "ended"
    assert doc["coverage"] == {"unique_rows": 8, "has_older": False, "at_start": True}
    assert result.stdout == snapshot


@pytest.fixture
def paris() -> Iterator[None]:
    """Local time is Europe/Paris (UTC+1 in winter) for the test, so the default local
    times with their offset are the same on every machine."""
    before = os.environ.get("TZ")
    os.environ["TZ"] = "Europe/Paris"
    time.tzset()
    rows_module._minute.cache_clear()  # local times an earlier test formatted in another zone
    yield
    if before is None:
        os.environ.pop("TZ", None)
    else:
        os.environ["TZ"] = before
    time.tzset()
    rows_module._minute.cache_clear()


def test_show_terminal_text(dashboard: Dashboard, snapshot: SnapshotAssertion, paris: None) -> None:
    result = invoke("show", CHILD)
    assert result.exit_code == 0
    assert result.stderr == ""
    assert "\x1b" not in result.stdout
    assert "^[]52;c;ZXZpbA==^G" in result.stdout
    assert "(no arguments recorded)" in result.stdout
    assert result.stdout == snapshot
    expanded = invoke("show", CHILD, "--reasoning")
    assert "Start with grep." in expanded.stdout
    assert expanded.stdout == snapshot(name="reasoning")
    assert "2026-11-30 17:34:01 +0100" in result.stdout  # local time (Paris), with its offset
    utc = invoke("show", CHILD, "--utc")
    assert "2026-11-30 16:34:01Z" in utc.stdout
    assert utc.stdout.replace("Z\n", " +0100\n") != result.stdout  # only the times differ


SUMMARY = (
    "[CONTEXT COMPACTION — REFERENCE ONLY] Earlier turns were compacted into the summary below. "
    + "The agent grepped src/ for TODO markers and read each match. " * 20
)
OUTPUT = "\n".join(f"src/mod_{i}.py:{i}: TODO" for i in range(120))
DEMO = [
    row(1, "user", "Count TODO markers under src/ and list the files"),
    row(2, "user", SUMMARY),
    row(3, "user", "Continue from the compressed conversation context above."),
    row(4, "user", "[System: the previous tool call was cut off; continue]"),
    row(5, "user", "model switched", display_kind="model_switch"),
    row(
        6,
        "assistant",
        "",
        tool_calls=[
            {"id": "call_9", "type": "function", "function": {"name": "terminal", "arguments": "{}"}}
        ],
    ),
    row(
        7,
        "tool",
        json.dumps({"output": OUTPUT, "exit_code": 1, "error": "grep: tests/: No such file"}),
        tool_call_id="call_9",
        tool_name="terminal",
    ),
    row(8, "assistant", "Found 120 TODO markers."),
]


@pytest.fixture
def demo() -> Iterator[Dashboard]:
    yield from _serve(DEMO)


def test_demo_terminal_collapses_boilerplate_and_decodes_and_cuts_tool_output(
    demo: Dashboard, snapshot: SnapshotAssertion
) -> None:
    result = invoke("show", CHILD, "--utc")
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert f"▸ compaction summary, {len(SUMMARY):,} chars (--full shows it)" in out
    assert "The agent grepped" not in out
    assert "▸ continuation prompt" in out
    assert "· system_notice: [System: the previous tool call was cut off; continue]" in out
    assert "· model_switch: model switched" in out
    assert "src/mod_3.py:3: TODO" in out  # real line breaks: the first 4 lines
    assert "src/mod_4.py" not in out
    assert "… 108 lines left out (--full)" in out
    assert "src/mod_111.py" not in out
    assert "src/mod_112.py:112: TODO" in out  # and the last 8: the end of the output matters
    assert out.index("src/mod_3.py") < out.index("… 108 lines left out") < out.index("src/mod_119.py:119:")
    assert "exit 1 · error: grep: tests/: No such file" in out
    assert "\\n" not in out
    assert '{"output"' not in out
    assert out == snapshot
    full = invoke("show", CHILD, "--utc", "--full")
    assert "The agent grepped" in full.stdout
    assert "src/mod_119.py:119: TODO" in full.stdout
    assert "left out" not in full.stdout
    assert full.stdout == snapshot(name="full")
    data = json.loads(invoke("show", CHILD, "--json").stdout)
    kinds = {r["id"]: r["kind"] for r in data["rows"]}
    assert kinds == {
        1: None,
        2: "compaction_summary",
        3: "continuation_prompt",
        4: "system_notice",
        5: "model_switch",
        6: None,
        7: None,
        8: None,
    }
    assert data["rows"][1]["text"] == SUMMARY  # JSON keeps the full text
    assert data["rows"][6]["text"] == DEMO[6]["content"]


def test_error_document(dashboard: Dashboard, snapshot: SnapshotAssertion) -> None:
    result = invoke("show", PARENT, "--json")
    assert result.exit_code == 4
    assert result.stderr.startswith("error: session not found")
    assert result.stdout == snapshot


@pytest.mark.parametrize("backend", ["official", "iot"])
def test_the_demo_task_reads_in_the_terminal(backend: str, snapshot: SnapshotAssertion) -> None:
    """The demo's `show ROOT --tip TIP` (tools/demo.py) on the real captures: the goal first,
    every segment, compaction boilerplate in one line, tool results decoded and cut."""
    replay = Replay(backend)
    c1 = replay.manifest["c1"]
    args = ["show", c1["root"], "--tip", c1["tip"], "--utc"]
    with serving(replay):
        short = CliRunner().invoke(app, [*args, "--url", BASE_URL], env=REPLAY_ENV)
        full = CliRunner().invoke(app, [*args, "--full", "--url", BASE_URL], env=REPLAY_ENV)
    assert short.exit_code == 0, short.stderr
    out = short.stdout
    assert out.splitlines()[0] == f"goal: {c1['goal']}"
    assert "[CONTEXT COMPACTION" not in out
    assert "lines left out (--full)" in out
    assert "0000: scanned line with no marker" in out  # decoded: real line breaks
    assert '{"output"' not in out.split(c1["tip"])[0]  # before the tip's steer-marked row
    if backend == "official":  # iot hides its compaction summaries itself (display_kind hidden)
        assert "▸ compaction summary" in out
        assert "[CONTEXT COMPACTION" in full.stdout
    assert "left out" not in full.stdout
    assert len(full.stdout.splitlines()) > 2 * len(out.splitlines())
    assert out == snapshot
