"""`older --all` streamed (`reading/stream.py`, `cli/older.py`) on the in-memory dashboard.

A 130-row child paged 40 rows at a time (`STREAM_LIMIT` lowered): the newest page (50 rows)
is read first, then the segment oldest-first at offsets 0, 39, 78 (each page re-reads the
previous page's last row) until the page holding the newest page's first row.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_task.cli import older as run_older
from hermes_task.cli.options import Environment
from hermes_task.failures import ExitStatus, Interrupted
from hermes_task.reading import stream as stream_mod
from hermes_task.reading.reader import TaskReader
from hermes_task.reading.stream import StreamStats, stream_pages, streamable
from tests.support.cli_runner import invoke
from tests.support.dashboard import Call, Dashboard, serving

CHILD = "20261130_170001_cccccc"
PARENT = "20261130_170000_pppppp"
ROWS = 130
LIMIT = 40


class Child(Dashboard):
    """The child: row `goal_at` its user row stating `goal`, the others steps."""

    def __init__(
        self, contract: Any, goal_at: int | None = 0, goal: str = "Count the modules", rows: int = ROWS
    ) -> None:
        super().__init__(contract=contract, serves=frozenset({"detail", "messages"}))
        if contract == "current":
            self.envelope = {"profile": "default"}
        self.put(PARENT, source="cli", started_at=1796056440.0, ended_at=None, end_reason=None)
        config = json.dumps({"max_iterations": 90, "_delegate_from": PARENT})
        self.put(CHILD, source="subagent", parent_session_id=PARENT, model_config=config,
                 started_at=1796056441.0, ended_at=1796056500.0, end_reason="completed")  # fmt: skip
        for i in range(rows):
            if i == goal_at:
                self.add("user", goal)
            else:
                self.add("assistant" if i % 2 else "tool", f"step {i}")

    def add(self, role: str, content: str) -> None:
        extra = {"tool_call_id": "c1", "tool_name": "terminal"} if role == "tool" else {}
        self.row(CHILD, role=role, content=content, active=1, compacted=0, **extra)

    def offsets(self) -> list[tuple[str, str, str]]:
        return [(c.params["offset"], c.params["limit"], c.params.get("order", "")) for c in self.log
                if c.kind == "messages" and c.sid == CHILD]  # fmt: skip


@pytest.fixture(params=["current", "legacy"])
def child(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Child]:
    monkeypatch.setattr(stream_mod, "STREAM_LIMIT", LIMIT)
    dash = Child(request.param)
    with serving(dash.handle):
        yield dash


def _windowed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Turn streaming off: `older --all` as before (the whole window, then the output)."""
    monkeypatch.setattr(run_older, "stream", lambda *a, **k: False)


def test_streamed_json_is_byte_for_byte_the_windowed_document(
    child: Child, monkeypatch: pytest.MonkeyPatch
) -> None:
    streamed = invoke("older", CHILD, "--all", "--json")
    streamed_plain = invoke("older", CHILD, "--all")
    oldest = [o for o in child.offsets() if o[2] == "oldest" or child.contract == "legacy"]
    assert [o[0] for o in oldest][-3:] == ["0", "39", "78"]
    _windowed(monkeypatch)
    windowed = invoke("older", CHILD, "--all", "--json")
    windowed_plain = invoke("older", CHILD, "--all")
    assert streamed.exit_code == windowed.exit_code == 0, streamed.output
    assert streamed.stdout == windowed.stdout
    assert streamed_plain.stdout == windowed_plain.stdout
    assert streamed_plain.stderr == windowed_plain.stderr
    data = json.loads(streamed.stdout)
    assert [r["id"] for r in data["rows"]] == child.ids(CHILD)
    assert data["coverage"] == {"unique_rows": ROWS, "has_older": False, "at_start": True}
    assert data["task"]["segments"][0]["rows_shown"] == ROWS
    assert data["task"]["goal"] == "Count the modules"


def _read_all(fd: int) -> bytes:
    out = b""
    while True:
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            return out
        if not chunk:
            return out
        out += chunk


def _piped(child: Child, *args: str) -> tuple[Any, str, str]:
    """`older --all` (with `args`) into a real pipe; what the pipe held when the last
    oldest-first page was asked, and the rest."""
    read_fd, write_fd = os.pipe()
    os.set_blocking(read_fd, False)
    seen_before_last: list[bytes] = []

    def hold_last(call: Call) -> httpx.Response | None:
        if (
            call.kind == "messages"
            and call.params.get("offset") == "78"
            and call.params["limit"] == str(LIMIT)
        ):
            seen_before_last.append(_read_all(read_fd))
        return None

    child.before.append(hold_last)
    with os.fdopen(write_fd, "w") as out:
        result = invoke("older", CHILD, "--all", *args, environment=Environment(stdout_stream=out))
    rest = _read_all(read_fd)
    os.close(read_fd)
    return result, b"".join(seen_before_last).decode(), rest.decode()


def test_rows_reach_the_pipe_before_the_last_page_is_asked(child: Child) -> None:
    result, early, rest = _piped(child)
    assert result.exit_code == 0, result.output
    assert early
    assert early.startswith("goal: Count the modules\n")
    assert "step 78" in early
    assert "step 79" not in early
    assert "step 129" in rest
    assert "130 rows shown" in rest


def test_json_rows_reach_the_pipe_before_the_last_page_is_asked(child: Child) -> None:
    """`--json` opens the document with the first page and writes each page's rows as they
    are proven; what depends on the end (`kind`, the task, coverage) comes after them."""
    result, early, rest = _piped(child, "--json")
    assert result.exit_code == 0, (result.output, child.offsets())
    assert early
    assert early.startswith('{\n  "schema_version": 1,\n  "rows": [\n')
    assert '"text": "step 78"' in early
    assert '"text": "step 79"' not in early
    assert '\n  "kind"' not in early  # the document's own, not a row's
    data = json.loads(early + rest)
    assert data["kind"] == "transcript"
    assert [r["id"] for r in data["rows"]] == child.ids(CHILD)
    assert data["task"]["segments"][0]["rows_shown"] == ROWS


def test_an_interrupt_ends_the_open_document_as_an_error(child: Child) -> None:
    """SIGTERM (or Ctrl-C) mid-stream: the document already open ends as the `interrupted`
    error document holding the rows written, one valid document, the signal's status."""

    def stop_last(call: Call) -> httpx.Response | None:
        if call.kind == "messages" and call.params.get("offset") == "78":
            raise Interrupted(ExitStatus.TERMINATED, "SIGTERM")
        return None

    child.before.append(stop_last)
    result, early, rest = _piped(child, "--json")
    data = json.loads(early + rest)
    assert result.exit_code == 143
    assert data["kind"] == "error"
    assert data["error"]["code"] == "interrupted"
    assert [r["id"] for r in data["rows"]] == child.ids(CHILD)[:79]
    assert result.stderr.startswith("error: ")


@pytest.mark.parametrize("contract", ["current", "legacy"])
def test_json_goal_found_past_the_first_page_as_the_window_finds_it(
    contract: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stream_mod, "STREAM_LIMIT", LIMIT)
    dash = Child(contract, goal_at=60, goal="Count the modules, late")  # past the first page
    with serving(dash.handle):
        streamed = invoke("older", CHILD, "--all", "--json")
        _windowed(monkeypatch)
        windowed = invoke("older", CHILD, "--all", "--json")
    assert streamed.exit_code == windowed.exit_code == 0, streamed.output
    assert json.loads(streamed.stdout)["task"]["goal"] == "Count the modules, late"
    assert streamed.stdout == windowed.stdout


def test_the_window_held_is_bounded_by_one_page_plus_the_newest(child: Child) -> None:
    reader = TaskReader(child.client(), CHILD)
    reader.refresh()
    assert streamable(reader)
    stats = StreamStats()
    held = 0
    ids: list[int] = []
    for rows in stream_pages(reader, stats):
        held = max(held, len(rows))
        ids += [r.id for r in rows]
    assert ids == child.ids(CHILD)  # every row once, in order
    assert stats.pages == 3
    assert stats.held_max <= LIMIT + 50
    assert held <= LIMIT + 50 < ROWS


def test_rows_written_meanwhile_are_neither_skipped_nor_repeated(child: Child) -> None:
    def append(call: Call) -> httpx.Response | None:
        if (
            call.kind == "messages"
            and call.params.get("offset") == "39"
            and call.params["limit"] == str(LIMIT)
        ):
            child.add("assistant", "written while streaming")
        return None

    snapshot = child.ids(CHILD)
    child.before.append(append)
    result = invoke("older", CHILD, "--all", "--json")
    assert result.exit_code == 0, result.output
    assert [r["id"] for r in json.loads(result.stdout)["rows"]] == snapshot


def test_a_failure_after_rows_were_streamed(child: Child) -> None:
    def fail_last(call: Call) -> httpx.Response | None:
        if (
            call.kind == "messages"
            and call.params.get("offset") == "78"
            and call.params["limit"] == str(LIMIT)
        ):
            return httpx.Response(500, json={"detail": "Internal Server Error"})
        return None

    child.before.append(fail_last)
    as_json = invoke("older", CHILD, "--all", "--json")
    plain = invoke("older", CHILD, "--all")
    data = json.loads(as_json.stdout)  # still one valid document
    assert data["kind"] == "error"
    assert data["error"]["code"] == "server_error"
    assert [r["id"] for r in data["rows"]] == child.ids(CHILD)[:79]
    assert as_json.exit_code == plain.exit_code != 0
    assert as_json.stderr.startswith("error: ")
    assert "step 78" in plain.stdout
    assert "step 79" not in plain.stdout
    assert "rows shown" not in plain.stdout
    assert plain.stderr.startswith("error: ")


def test_rows_removed_before_the_anchor_fail_instead_of_skipping(child: Child) -> None:
    def remove(call: Call) -> httpx.Response | None:
        if (
            call.kind == "messages"
            and call.params.get("offset") == "39"
            and call.params["limit"] == str(LIMIT)
        ):
            del child.rows[CHILD][5]
        return None

    child.before.append(remove)
    result = invoke("older", CHILD, "--all", "--json")
    data = json.loads(result.stdout)
    assert data["kind"] == "error"
    assert data["error"]["code"] == "identity_mismatch"
    assert len(data["rows"]) == LIMIT
    assert result.exit_code != 0


def test_an_oldest_first_read_without_pagination_keeps_the_window(child: Child) -> None:
    """Streaming is decided by the answer: one that shows no paging keeps the window path."""

    def unpaginated(call: Call) -> httpx.Response | None:
        if call.kind == "messages" and call.params["offset"] == "0" and call.params["limit"] == str(LIMIT):
            body: dict[str, Any] = {"session_id": CHILD, "messages": child.rows[CHILD][:LIMIT]}
            return httpx.Response(200, json=body)
        return None

    child.before.append(unpaginated)
    result = invoke("older", CHILD, "--all", "--json")
    assert result.exit_code == 0, result.output
    assert [r["id"] for r in json.loads(result.stdout)["rows"]] == child.ids(CHILD)
    assert [o[1] for o in child.offsets()].count(str(LIMIT)) == 1  # asked once, then the window path


def _both_piped(dash: Child, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    """`older --all` piped, streamed then windowed, against `dash`."""
    with serving(dash.handle), monkeypatch.context() as patch:
        streamed = invoke("older", CHILD, "--all")
        patch.setattr(run_older, "stream", lambda *a, **k: False)
        windowed = invoke("older", CHILD, "--all")
    return streamed, windowed


@pytest.mark.parametrize("contract", ["current", "legacy"])
def test_a_task_the_newest_page_holds_whole_is_piped_as_the_window_pipes_it(
    contract: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 35: a 50-row task (its newest page full, so older rows may exist): the first
    oldest-first page holds nothing before the newest page. Streamed, the goal line was lost
    and the "nothing older" note never written."""
    monkeypatch.setattr(stream_mod, "STREAM_LIMIT", LIMIT)
    streamed, windowed = _both_piped(Child(contract, rows=50), monkeypatch)
    assert streamed.exit_code == windowed.exit_code == 0, streamed.output
    assert streamed.stdout.startswith("goal: Count the modules")
    assert "note: nothing older" in streamed.stderr
    assert (streamed.stdout, streamed.stderr) == (windowed.stdout, windowed.stderr)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    contract=st.sampled_from(["current", "legacy"]),
    rows=st.integers(min_value=1, max_value=170),
    goal=st.one_of(st.none(), st.floats(min_value=0, max_value=1, exclude_max=True)),
    limit=st.sampled_from([40, 50, 500]),
)
def test_streamed_piped_text_is_the_windowed_text(
    contract: str, rows: int, goal: float | None, limit: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Property (issue 35): for any row count, goal position (or none) and page size, the
    streamed piped output (stdout and stderr) is the windowed path's."""
    monkeypatch.setattr(stream_mod, "STREAM_LIMIT", limit)
    goal_at = None if goal is None else int(goal * rows)
    streamed, windowed = _both_piped(Child(contract, goal_at=goal_at, rows=rows), monkeypatch)
    assert streamed.exit_code == windowed.exit_code == 0, streamed.output
    assert (streamed.stdout, streamed.stderr) == (windowed.stdout, windowed.stderr)


@pytest.mark.parametrize("contract", ["current", "legacy"])
def test_a_failure_while_the_goal_is_sought_writes_no_row(
    contract: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The goal past the first page: the pages are held until it is found, so a failure on
    the way is reported as without streaming: no row, no goal line, the failure's status."""
    monkeypatch.setattr(stream_mod, "STREAM_LIMIT", LIMIT)
    dash = Child(contract, goal_at=60, goal="Count the modules, late")

    def fail_second(call: Call) -> httpx.Response | None:
        if (
            call.kind == "messages"
            and call.params.get("offset") == "39"
            and call.params["limit"] == str(LIMIT)
        ):
            return httpx.Response(500, json={"detail": "Internal Server Error"})
        return None

    dash.before.append(fail_second)
    with serving(dash.handle):
        plain = invoke("older", CHILD, "--all")
    assert plain.exit_code != 0
    assert "step" not in plain.stdout
    assert "goal:" not in plain.stdout
    assert plain.stderr.startswith("error: ")
