"""`hermes-task follow` through the CLI: real captured bodies of both backends, served by
respx from a store the test changes between reads, with the loop's clock and sleep faked."""

from __future__ import annotations

import copy
import json
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from hermes_task.cli.app import app
from hermes_task.cli.options import Environment
from hermes_task.cli.session import idle_sleep
from tests.support.cli_runner import invoke
from tests.support.dashboard import Dashboard, serving
from tests.support.replay import TOKEN, load

ENV = {"HERMES_DASHBOARD_TOKEN": TOKEN, "NO_COLOR": "1", "COLUMNS": "100", "XDG_CONFIG_HOME": "/nonexistent"}


class Dash(Dashboard):
    """The in-memory dashboard serving the captured `running` child of one backend live (rows
    and the ending change); asked only its detail and pages, always with the token."""

    def __init__(self, backend: str) -> None:
        data = load(backend)
        exchanges = {e["name"]: e for e in data["exchanges"]}
        legacy = data["manifest"]["backend"]["contract"] == "legacy"
        super().__init__(
            contract="legacy" if legacy else "current", token=TOKEN, serves=frozenset({"detail", "messages"})
        )
        self.legacy = legacy
        detail: dict[str, Any] = copy.deepcopy(exchanges["detail:running"]["body"])
        page: dict[str, Any] = copy.deepcopy(exchanges["messages:running"]["body"])
        self.sid: str = detail["id"]
        self.put(self.sid, **{k: v for k, v in detail.items() if k != "id"})
        self.rows[self.sid] = list(page["messages"])
        self.envelope = {k: v for k, v in page.items() if k not in ("session_id", "messages", "pagination")}

    @property
    def transcript(self) -> list[dict[str, Any]]:
        return self.rows[self.sid]

    def append(self, text: str) -> None:
        rows = self.transcript
        row = {**rows[-1], "id": max(r["id"] for r in rows) + 1, "role": "assistant"}
        row.update(content=text, tool_calls=None, tool_call_id=None, tool_name=None)
        if row.get("message_uid"):  # a new row gets a durable id of its own, as iot mints one
            row["message_uid"] = f"appended-{row['id']}"
        rows.append(row)

    def end(self, reason: str) -> None:
        self.details[self.sid].update(end_reason=reason, ended_at=self.details[self.sid]["started_at"] + 60)


class FakeTime:
    """Replaces the loop's clock and sleep; each sleep runs the next scripted step."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []
        self.steps: list[Callable[[], object]] = []
        self.env = Environment(clock=lambda: self.now, sleep=self.sleep)

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds
        if self.steps:
            self.steps.pop(0)()


@pytest.fixture(params=["official", "iot"])
def dash(request: pytest.FixtureRequest) -> Iterator[Dash]:
    served = Dash(request.param)
    with serving(served.handle):
        yield served


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeTime]:
    # Differs from conftest's: a FakeTime (from 0, scripted steps), handed to run() through CLOCKS.
    fake = FakeTime(monkeypatch)
    CLOCKS.append(fake)
    yield fake
    CLOCKS.remove(fake)


CLOCKS: list[FakeTime] = []  # the test's own fake time, handed to every invocation below


def run(*args: str) -> Any:
    env = CLOCKS[-1].env if CLOCKS else None
    result = invoke("follow", *args, environment=env)
    assert TOKEN not in result.stdout + result.stderr
    return result


def events(result: Any) -> list[dict[str, Any]]:
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_json_stream_from_running_to_ended(dash: Dash, clock: FakeTime) -> None:
    first = [r["id"] for r in dash.transcript]
    clock.steps = [lambda: dash.append("Pass 2: 43 passed."), lambda: dash.end("agent_close")]
    result = run(dash.sid, "--json", "--interval", "0.5")

    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""
    lines = events(result)
    types = [e["type"] for e in lines]
    warnings = ["warning"] if dash.legacy else []
    assert types == ["state", *warnings, "row", "row", "row", "row", "state", "result"]
    assert lines[0]["state"] == "running"
    assert lines[0]["root_id"] == dash.sid
    assert [e["id"] for e in lines if e["type"] == "row"] == [*first, first[-1] + 1]
    assert lines[-2]["state"] == "ended"
    assert lines[-1] == {
        "type": "result",
        "state": "ended",
        "end_reason": "agent_close",
        "exit_code": 0,
        "last_read_age": None,
        "unreported": None,
    }
    assert clock.sleeps == [0.5, 0.5]
    assert all(line.isascii() for line in result.stdout.splitlines())


def test_terminal_rows_once_and_the_ending_on_stderr(dash: Dash, clock: FakeTime) -> None:
    def finish() -> None:
        dash.append("Pass 2: 43 passed.")
        dash.end("agent_close")

    clock.steps = [finish]
    result = run(dash.sid)
    assert result.exit_code == 0
    assert result.stdout.count("Pass 2: 43 passed.") == 1
    assert result.stdout.count("Watch the test suite and report flaky tests") == 1
    expected = [f"task {dash.sid} ended (agent_close) · 4 rows"]
    if dash.legacy:
        expected.insert(
            0, "warning: legacy backend (hermes-agent 0.19.x): archived rows are not visible over HTTP"
        )
    assert result.stderr.splitlines() == expected


@pytest.mark.parametrize(("reason", "code"), [("agent_close", 0), ("startup_orphan_reap", 8)])
def test_exit_status_maps_the_end_reason(dash: Dash, clock: FakeTime, reason: str, code: int) -> None:
    dash.end(reason)
    result = run(dash.sid, "--json", "--exit-status")
    assert result.exit_code == code
    assert events(result)[-1] == {
        "type": "result",
        "state": "ended",
        "end_reason": reason,
        "exit_code": code,
        "last_read_age": None,
        "unreported": None,
    }


def test_without_exit_status_an_unsuccessful_ending_exits_0(dash: Dash, clock: FakeTime) -> None:
    dash.end("startup_orphan_reap")
    assert run(dash.sid, "--json").exit_code == 0


def test_partial_history_pauses_with_9_under_exit_status(dash: Dash, clock: FakeTime) -> None:
    dash.end("compression")
    result = run(dash.sid, "--exit-status", "--no-hint")
    assert result.exit_code == 9
    assert result.stderr.splitlines()[-2:] == [
        "warning: partial history: the newest verified segment ended by compression and no newer "
        "segment is proven; final output may be missing",
        "following stopped on partial history; pass --tip NEWER_ID when known",
    ]


def test_timeout_exits_9_while_the_task_runs(dash: Dash, clock: FakeTime) -> None:
    result = run(dash.sid, "--timeout", "3", "--interval", "2")
    assert result.exit_code == 9
    assert clock.sleeps == [2.0, 1.0]
    assert result.stderr.splitlines()[-1] == f"--timeout ran out; task {dash.sid} is still running"

    result = run(dash.sid, "--timeout", "0", "--json")
    assert result.exit_code == 9
    assert events(result)[-1] == {
        "type": "result",
        "state": "running",
        "end_reason": None,
        "exit_code": 9,
        "last_read_age": None,
        "unreported": None,
    }


def test_transient_failures_are_error_events_and_polling_continues(dash: Dash, clock: FakeTime) -> None:
    # Each failure twice: the client retries a transient failure once before the loop sees it.
    busy = httpx.Response(503, json={"detail": "busy"})
    dash.faults[:] = [httpx.ConnectError("refused"), httpx.ConnectError("refused"), busy, busy]
    clock.steps = [lambda: None, lambda: dash.end("agent_close")]
    result = run(dash.sid, "--json")
    assert result.exit_code == 0
    lines = events(result)
    assert lines[0] == {
        "type": "error",
        "code": "network",
        "message": f"could not reach the dashboard: http://127.0.0.1:9119 (GET /api/sessions/{dash.sid}):"
        " connection refused",
        "retryable": True,
    }
    assert lines[1]["code"] == "server_error"
    assert lines[1]["retryable"] is True
    assert lines[-1]["exit_code"] == 0
    assert clock.sleeps[:2] == [pytest.approx(c, rel=0.5) for c in (1.5, 3.0)]  # jittered 2s, 4s


def test_auth_failure_is_final_with_rows_kept(dash: Dash, clock: FakeTime) -> None:
    clock.steps = [lambda: dash.faults.append(httpx.Response(401, json={"detail": "Unauthorized"}))]
    result = run(dash.sid, "--json")
    assert result.exit_code == 3
    lines = events(result)
    assert [e["type"] for e in lines if e["type"] != "warning"] == [
        "state",
        "row",
        "row",
        "row",
        "error",
        "result",
    ]
    assert lines[-2] == {
        "type": "error",
        "code": "auth_rejected",
        "message": "the dashboard rejected the credentials",
        "retryable": False,
    }
    # the last successful read ended one interval before the final failure
    assert lines[-1] == {
        "type": "result",
        "state": "running",
        "end_reason": None,
        "exit_code": 3,
        "last_read_age": 2.0,
        "unreported": None,
    }
    assert result.stderr == "error: the dashboard rejected the credentials\n"


def test_invalid_id_in_json_is_an_error_and_a_result(clock: FakeTime) -> None:
    result = run(" bad", "--json")
    assert result.exit_code == 2
    assert events(result) == [
        {
            "type": "error",
            "code": "invalid_id",
            "message": "invalid id: CHILD_ID has surrounding whitespace",
            "retryable": False,
        },
        {
            "type": "result",
            "state": "unknown",
            "end_reason": None,
            "exit_code": 2,
            "last_read_age": None,
            "unreported": None,
        },
    ]
    assert result.stderr == "error: invalid id: CHILD_ID has surrounding whitespace\n"


def test_interval_below_the_minimum_is_a_usage_error() -> None:
    result = run("20260101_000000_aaaaaa", "--interval", "0.3")
    assert result.exit_code == 2
    assert "Invalid value for '--interval'" in result.stderr
    assert result.stdout == ""


def test_ctrl_c_ends_the_stream_with_a_result_and_130(dash: Dash, clock: FakeTime) -> None:
    def interrupt() -> None:
        raise KeyboardInterrupt

    clock.steps = [interrupt]
    result = run(dash.sid, "--json")
    assert result.exit_code == 130
    assert events(result)[-1] == {
        "type": "result",
        "state": "running",
        "end_reason": None,
        "exit_code": 130,
        "last_read_age": None,
        "unreported": None,
    }


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_sigterm_and_sighup_end_the_stream_with_a_result(
    dash: Dash, clock: FakeTime, signum: int, status: int
) -> None:
    """CI cancellation sends SIGTERM: the NDJSON still ends in `result`, and the exit says why."""
    clock.steps = [lambda: os.kill(os.getpid(), signum)]
    previous = signal.getsignal(signum)
    result = run(dash.sid, "--json")
    assert result.exit_code == status
    lines = events(result)
    assert [e["type"] for e in lines].count("result") == 1
    assert lines[-1] == {
        "type": "result",
        "state": "running",
        "end_reason": None,
        "exit_code": status,
        "last_read_age": None,
        "unreported": None,
    }
    assert signal.getsignal(signum) == previous  # the handler is the command's only


def test_a_closed_pipe_while_idle_ends_quietly(dash: Dash, clock: FakeTime) -> None:
    def gone() -> None:
        raise BrokenPipeError

    clock.steps = [gone]
    result = run(dash.sid, "--json")
    assert result.exit_code == 0
    assert result.stderr == ""
    assert events(result)[-1]["type"] == "row"  # no result: nobody is reading any more


def test_idle_sleep_notices_a_closed_reader_at_once() -> None:
    read_end, write_end = os.pipe()
    with os.fdopen(write_end, "w") as stream:
        sleep = idle_sleep(stream)
        started = time.monotonic()
        sleep(0.05)  # a live reader: a plain wait
        assert time.monotonic() - started >= 0.05
        os.close(read_end)
        # A sleep of ten minutes that notices the closed reader ends long before the join's
        # generous bound (no timing is asserted: a sleep that ignored it would still be asleep).
        raised: list[BaseException] = []

        def wait() -> None:
            try:
                sleep(600)
            except BrokenPipeError as exc:
                raised.append(exc)

        waiter = threading.Thread(target=wait, daemon=True)
        waiter.start()
        waiter.join(120)
        assert not waiter.is_alive()
        assert len(raised) == 1


def test_help_separates_the_whole_follow_timeout_from_the_request_timeout() -> None:
    result = CliRunner().invoke(app, ["follow", "--help"], env={**ENV, "COLUMNS": "200"})
    assert result.exit_code == 0
    text = " ".join(result.stdout.split())
    assert "Stop after S seconds in all; exit 9 when the task is known to be still running." in text
    assert "--request-timeout S Per-request timeout in seconds" in text
