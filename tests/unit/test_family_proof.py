"""`follow --parent` holds each child to the proof `follow CHILD` meets (issue 25): a child is
read only once its detail names a segment of the parent's lineage (else a `gap`, never a
row), through its rotations with the store and the hint, with the final-read rule; a child
that cannot be read is reported unreadable and the stream still ends; a withdrawn store match
stops streaming at once."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import Result

from tests.support.clock import Clock
from tests.support.conversations import Conversations
from tests.support.dashboard import ROUTES
from tests.unit.conftest import SCHEMA
from tests.unit.test_family import run
from tests.unit.test_schemas import validator

P = "20261201_110000_a1a1a1"
OTHER = "20261201_105000_b1b1b1"
A = "20261201_110001_c1c1c1"
B = "20261201_110002_d1d1d1"
TIP = "20261201_110003_e1e1e1"
MISSING = "20261201_110004_f1f1f1"
DELEG = "deleg_1a2b3c4d"


@pytest.fixture
def conversations() -> Conversations:
    # Differs from conftest's: every route served; latest-descendant knows no hint (iot's children).
    return Conversations(serves=ROUTES, hints=False)


def events(result: Result) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    check = validator("events")
    for event in lines:
        check.validate(event)
    return lines


def spawn(
    fake: Conversations, call_id: str, goal: str, at: float, child: str | None = None, deleg: str = DELEG
) -> None:
    """A background delegate_task call at time `at` (its result names `child` when given)."""
    args = json.dumps({"tasks": [{"goal": goal}]})
    call = {"id": call_id, "type": "function", "function": {"name": "delegate_task", "arguments": args}}
    fake.add(P, "assistant", "", tool_calls=[call], timestamp=at)
    payload: dict[str, Any] = {"status": "dispatched", "delegation_id": deleg, "goals": [goal]}
    if child is not None:
        payload = {
            "results": [{"task_index": 0, "status": "running", "child_session_id": child}],
            "delegation_id": deleg,
        }
    fake.add(P, "tool", json.dumps(payload), tool_call_id=call_id, tool_name="delegate_task", timestamp=at)


def complete(fake: Conversations, goal: str, deleg: str = DELEG) -> Callable[[], None]:
    def write() -> None:
        text = [f"[ASYNC DELEGATION BATCH COMPLETE — {deleg}]", "Finished.", ""]
        text += ["", f"--- ✓ TASK 1/1: {goal}  (status=completed, 2.0s) ---", "ok"]
        fake.add(P, "user", "\n".join(text))

    return write


def chain(*steps: Callable[[], None]) -> Callable[[], None]:
    def run_all() -> None:
        for step in steps:
            step()

    return run_all


def child(fake: Conversations, sid: str, goal: str, *, parent: str = P, started: float = 100.5) -> None:
    fake.session(sid, parent=parent)
    fake.details[sid]["started_at"] = started
    fake.add(sid, "user", goal)


def store(tmp_path: Path, rows: list[tuple[str, str, str | None, float]]) -> Path:
    """A local store: (id, parent, goal, started_at) rows delegated by P (`_delegate_from`)."""
    path = tmp_path / "state.db"
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA)
    conn.close()  # an open connection left to the collector is a ResourceWarning on 3.13
    add_rows(path, rows)
    return path


def add_rows(path: Path, rows: list[tuple[str, str, str | None, float]]) -> None:
    conn = sqlite3.connect(path)
    config = json.dumps({"max_iterations": 90, "_delegate_from": P})
    for sid, parent, goal, started in rows:
        conn.execute(
            "INSERT INTO sessions (id, source, parent_session_id, model_config, started_at) VALUES (?,?,?,?,?)",
            (sid, "subagent", parent, config, started),
        )
        if goal is not None:
            conn.execute(
                "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?,?,?,?)",
                (sid, "user", goal, started),
            )
    conn.commit()
    conn.close()


def rows_of(lines: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    return [(e["task"]["number"], e["session_id"], e["text"]) for e in lines if e["type"] == "row"]


def test_a_child_naming_another_parent_is_a_gap_and_never_streamed(fake: Conversations, clock: Clock) -> None:
    fake.session(P)
    spawn(fake, "call_1", "Audit A", 100.0, A)
    child(fake, A, "Audit A", parent=OTHER)  # the result names a session another chat spawned
    fake.add(A, "assistant", "NOT THIS PARENT'S ROW")
    clock.hooks[1] = complete(fake, "Audit A")
    result = run("--parent", P, "--json", "--exit-status")
    assert result.exit_code == 0, result.stdout
    lines = events(result)
    assert rows_of(lines) == []
    assert [(e["number"], e["gap"]) for e in lines if e["type"] == "task"][-1] == ("1.1", "identity_mismatch")
    # ownership first: A's detail was read, never its messages
    assert f"/api/sessions/{A}" in fake.paths_asked()
    assert not any(p.startswith(f"/api/sessions/{A}/") for p in fake.paths_asked())
    text = run("--parent", P)
    assert "1.1 │ ↳ child not read: it names another session as its parent" in text.stderr


def test_a_child_that_cannot_be_read_is_reported_and_the_stream_ends(
    fake: Conversations, clock: Clock
) -> None:
    fake.session(P)
    spawn(fake, "call_1", "Audit A", 100.0, MISSING)  # never flushed: 404 throughout
    clock.hooks[1] = complete(fake, "Audit A")
    result = run("--parent", P, "--json", "--exit-status", "--timeout", "600")
    assert result.exit_code == 0, result.stdout  # today: 9 at --timeout (it never ended)
    lines = events(result)
    assert lines[-1] == {"type": "result", "state": "ended", "end_reason": "completed", "exit_code": 0,
                         "last_read_age": None, "unreported": []}  # fmt: skip
    tasks = [(e["status"], e["gap"]) for e in lines if e["type"] == "task"]
    assert tasks[-1] == ("completed", "not_found")
    final = [e for e in lines if e["type"] == "error" and not e["retryable"]]
    assert [e["code"] for e in final] == ["not_found"]
    assert final[0]["message"].startswith("task 1.1: ")


def test_at_the_timeout_with_every_task_terminal_the_verdict_decides_not_9(
    fake: Conversations, clock: Clock
) -> None:
    fake.session(P)
    spawn(fake, "call_1", "Audit A", 100.0, A)
    child(fake, A, "Audit A")
    complete(fake, "Audit A")()
    fake.before.append(
        lambda call: httpx.Response(503) if call.sid == A and call.kind == "messages" else None
    )
    result = run("--parent", P, "--json", "--exit-status", "--timeout", "3")
    assert result.exit_code == 0, result.stdout
    assert events(result)[-1] == {"type": "result", "state": "ended", "end_reason": "completed", "exit_code": 0,
                                  "last_read_age": None, "unreported": []}  # fmt: skip


def test_a_child_failing_after_the_verdict_is_unreadable_after_its_retries(
    fake: Conversations, clock: Clock
) -> None:
    fake.session(P)
    spawn(fake, "call_1", "Audit A", 100.0, A)
    child(fake, A, "Audit A")
    complete(fake, "Audit A")()
    fake.before.append(
        lambda call: httpx.Response(503) if call.sid == A and call.kind == "messages" else None
    )
    result = run("--parent", P, "--json", "--exit-status")
    assert result.exit_code == 0, result.stdout
    lines = events(result)
    errors = [(e["code"], e["retryable"]) for e in lines if e["type"] == "error"]
    assert errors == [("server_error", True), ("server_error", False)]  # reported once per streak
    assert [(e["status"], e["gap"]) for e in lines if e["type"] == "task"][-1] == (
        "completed",
        "server_error",
    )
    assert (
        len([c for c in fake.log if c.sid == A and c.kind == "messages"]) == 8
    )  # (1 + 3 retries) x the client's own retry


def test_a_child_whose_segment_ended_gets_one_final_read_then_rests(
    fake: Conversations, clock: Clock
) -> None:
    fake.session(P)
    spawn(fake, "call_1", "Audit A", 100.0, A)  # the parent still reports it running
    child(fake, A, "Audit A")
    fake.add(A, "assistant", "Done.")
    fake.details[A].update(ended_at=1796056450.0, end_reason="agent_close")
    result = run("--parent", P, "--json", "--exit-status", "--timeout", "10")
    # The undelivered-completion rule (issue 35 case 4): the child is proven ended and the
    # parent has no result for it, so the task is `ended_unreported`, never `running`.
    assert result.exit_code == 8, result.stdout
    lines = events(result)
    assert lines[-1]["unreported"] == ["1.1"]
    assert [r[2] for r in rows_of(lines)] == ["Audit A", "Done."]
    pages = [c for c in fake.log if c.sid == A and c.kind == "messages"]
    assert len(pages) == 1  # the task was terminal before its child's first read: that read is final


def test_a_rotated_child_is_followed_into_its_newer_segment_with_the_store(
    fake: Conversations, clock: Clock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As `follow CHILD` does: while followed, the child rotates; the store proposes the
    continuation, the lineage proof accepts it, and the final answer (in the newer segment)
    is streamed, with no partial_history (today: the root's rows and partial_history)."""
    fake.session(P)
    spawn(fake, "call_1", "Rotate me", 100.0)
    child(fake, A, "Rotate me")
    fake.add(A, "assistant", "Working on it.")
    path = store(tmp_path, [(A, P, "Rotate me", 100.5)])
    monkeypatch.setenv("HERMES_TASK_STORE", str(path))

    def rotate() -> None:
        fake.add(A, "assistant", "Compressing.")
        fake.details[A].update(ended_at=101.0, end_reason="compression")
        continuation = {k: v for k, v in fake.details[A].items() if k != "id"}
        fake.put(TIP, **{**continuation, "parent_session_id": A, "started_at": 100.9, "ended_at": 102.0,
                         "end_reason": "agent_close"})  # fmt: skip
        fake.add(TIP, "assistant", "FINAL ANSWER")
        add_rows(path, [(TIP, A, None, 100.9)])

    clock.hooks[1] = rotate
    clock.hooks[2] = complete(fake, "Rotate me")
    result = run("--parent", P, "--json", "--exit-status")
    assert result.exit_code == 0, result.stdout
    lines = events(result)
    assert rows_of(lines) == [("1.1", A, "Rotate me"), ("1.1", A, "Working on it."), ("1.1", A, "Compressing."),
                              ("1.1", TIP, "FINAL ANSWER")]  # fmt: skip
    assert not [e for e in lines if e["type"] == "warning" and e["code"] == "partial_history"]


def test_a_store_match_proven_once_stays_whatever_the_store_says_later(
    fake: Conversations, clock: Clock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Proven stays proven (issue 35): a second task with the same goal makes the store's
    match ambiguous now, but 1.1's child was proven in this run and keeps streaming."""
    fake.session(P)
    spawn(fake, "call_1", "Run the tests", 100.0)
    child(fake, A, "Run the tests")
    path = store(tmp_path, [(A, P, "Run the tests", 100.5)])
    monkeypatch.setenv("HERMES_TASK_STORE", str(path))

    def same_goal_again() -> None:
        spawn(fake, "call_2", "Run the tests", 200.0, deleg="deleg_2b3c4d5e")
        child(fake, B, "Run the tests", started=200.5)
        add_rows(path, [(B, P, "Run the tests", 200.5)])
        fake.add(A, "assistant", "AFTER THE SECOND TASK")

    clock.hooks[1] = same_goal_again
    clock.hooks[3] = chain(complete(fake, "Run the tests"), complete(fake, "Run the tests", "deleg_2b3c4d5e"))
    result = run("--parent", P, "--json")
    assert result.exit_code == 0, result.stdout
    lines = events(result)
    assert [r for r in rows_of(lines) if r[0] == "1.1"] == [
        ("1.1", A, "Run the tests"),
        ("1.1", A, "AFTER THE SECOND TASK"),
    ]
    refs = [
        (e["number"], e["child_session_id"], e["unavailable_reason"]) for e in lines if e["type"] == "task"
    ]
    assert all(ref == ("1.1", A, None) for ref in refs if ref[0] == "1.1")


def test_a_child_paused_on_compression_is_read_each_cycle_until_its_continuation_appears(
    fake: Conversations, clock: Clock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 29's change probe decides nothing for a child whose newest segment ended by
    compression with nothing newer proven: its continuation is another session, created
    without changing the ended segment's detail (0.19 ends the old segment, then creates the
    new one), so the child is read in full each cycle until the store proposes it."""
    fake.session(P)
    spawn(fake, "call_1", "Rotate me", 100.0)
    child(fake, A, "Rotate me")
    path = store(tmp_path, [(A, P, "Rotate me", 100.5)])
    monkeypatch.setenv("HERMES_TASK_STORE", str(path))

    def end_old() -> None:
        fake.add(A, "assistant", "Compressing.")
        fake.details[A].update(ended_at=101.0, end_reason="compression")

    def create_new() -> None:  # two cycles later: A's detail did not change meanwhile
        continuation = {k: v for k, v in fake.details[A].items() if k != "id"}
        fake.put(TIP, **{**continuation, "parent_session_id": A, "started_at": 101.1, "ended_at": 102.0,
                         "end_reason": "agent_close"})  # fmt: skip
        fake.add(TIP, "assistant", "FINAL ANSWER")
        add_rows(path, [(TIP, A, None, 101.1)])

    clock.hooks[1] = end_old
    clock.hooks[3] = create_new
    result = run("--parent", P, "--json", "--timeout", "12")  # the parent never reports it
    # The child is proven ended in its newer segment: ended_unreported, the stream ends.
    assert result.exit_code == 0, result.stdout
    assert events(result)[-1]["unreported"] == ["1.1"]
    assert rows_of(events(result))[-1] == ("1.1", TIP, "FINAL ANSWER")
