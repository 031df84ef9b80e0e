"""Issue 35: one busy answer, a locked store or an unreported end never turns a parent's verdict.

Each case runs the real CLI against the in-memory dashboard (a real SQLite store file where the
store matters). A fault here is *two* 503s in a row: the client retries one by itself
(dashboard/client.py), so two reach the command's own rules, which are what these tests hold.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import Result

from tests.support.cli_runner import ENVIRONMENT, invoke
from tests.support.clock import Clock
from tests.support.conversations import Conversations
from tests.support.dashboard import ROUTES, Call
from tests.unit.test_family_proof import A, B, P, chain, child, complete, events, rows_of, spawn, store

DELEG_B = "deleg_2b3c4d5e"


@pytest.fixture
def conversations() -> Conversations:
    return Conversations(serves=ROUTES, hints=False)


def cli(command: str, *args: str) -> Result:
    return invoke(command, *args, environment=ENVIRONMENT[-1] if ENVIRONMENT else None)


def busy(sid: str, kind: str, times: int = 2) -> Callable[[Call], httpx.Response | None]:
    """Answer the first `times` `kind` requests of `sid` with 503 (then the dashboard's own)."""
    left = [times]

    def hook(call: Call) -> httpx.Response | None:
        if call.sid == sid and call.kind == kind and left[0] > 0:
            left[0] -= 1
            return httpx.Response(503, json={"detail": "busy"})
        return None

    return hook


@pytest.fixture
def two_done(fake: Conversations, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """P delegated two background tasks, both completed; their children are known only from
    the store (the parent's rows name none)."""
    fake.session(P)
    spawn(fake, "call_1", "Audit A", 100.0)
    spawn(fake, "call_2", "Audit B", 200.0, deleg=DELEG_B)
    child(fake, A, "Audit A")
    fake.add(A, "assistant", "A is fine.")
    child(fake, B, "Audit B", started=200.5)
    fake.add(B, "assistant", "B has a needle.")
    for sid in (A, B):
        fake.details[sid].update(ended_at=300.0, end_reason="agent_close")
    chain(complete(fake, "Audit A"), complete(fake, "Audit B", DELEG_B))()
    path = store(tmp_path, [(A, P, "Audit A", 100.5), (B, P, "Audit B", 200.5)])
    monkeypatch.setenv("HERMES_TASK_STORE", str(path))
    return path


def named(lines: list[dict[str, Any]]) -> dict[str, tuple[str | None, str]]:
    """Each task's last event: its child id and status."""
    return {e["number"]: (e["child_session_id"], e["status"]) for e in lines if e["type"] == "task"}


DONE = {"1.1": (A, "completed"), "2.1": (B, "completed")}


def test_case_1_recover_watch_keeps_every_task_after_a_busy_child_proof(
    fake: Conversations, clock: Clock, two_done: Path
) -> None:
    fake.before.append(busy(B, "detail"))
    result = cli("recover", P, "--watch", "--json", "--exit-status", "--timeout", "600")
    assert result.exit_code == 0, result.stdout
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert named(lines) == DONE
    assert lines[-1]["type"] == "result"
    assert lines[-1]["end_reason"] == "completed"


def test_case_2_follow_parent_reads_every_child_after_a_busy_child_proof(
    fake: Conversations, clock: Clock, two_done: Path
) -> None:
    fake.before.append(busy(B, "detail"))
    result = cli("follow", "--parent", P, "--json", "--exit-status", "--timeout", "600")
    assert result.exit_code == 0, result.stdout
    lines = events(result)
    assert named(lines) == DONE
    assert ("2.1", B, "B has a needle.") in rows_of(lines)


def test_case_3_search_a_childs_failure_is_that_tasks_code(
    fake: Conversations, clock: Clock, two_done: Path
) -> None:
    fake.before.append(busy(A, "detail", times=2))
    result = cli("search", "needle", P, "--json")
    assert result.exit_code == 0, result.stdout  # the match found in task 2.1 is the run's
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert any("needle" in json.dumps(e) for e in lines if e["type"] != "result")
    assert lines[-1]["matches"] == 1


def test_case_5_a_store_locked_for_a_moment_forgets_no_proven_child(
    fake: Conversations, clock: Clock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A child proven from the store, then the store locked past the busy timeout for two
    cycles while the child ends: it stays named, and its end is noticed (8: no result)."""
    fake.session(P)
    spawn(fake, "call_1", "Audit A", 100.0)
    child(fake, A, "Audit A")
    path = store(tmp_path, [(A, P, "Audit A", 100.5)])
    monkeypatch.setenv("HERMES_TASK_STORE", str(path))
    holder: list[sqlite3.Connection] = []

    def lock() -> None:
        conn = sqlite3.connect(path, isolation_level=None)
        conn.execute("BEGIN EXCLUSIVE")
        holder.append(conn)
        fake.add(A, "assistant", "Done.")
        fake.details[A].update(ended_at=300.0, end_reason="agent_close")

    def unlock() -> None:
        holder.pop().close()

    clock.hooks[1] = lock
    clock.hooks[3] = unlock
    try:
        result = cli("recover", P, "--watch", "--json", "--exit-status", "--timeout", "60")
    finally:
        for conn in holder:
            conn.close()
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    tasks = [e for e in lines if e["type"] == "task"]
    assert all(e["child_session_id"] == A for e in tasks), tasks
    assert tasks[-1]["status"] == "ended_unreported"
    assert result.exit_code == 8, result.stdout
    warnings = [e["code"] for e in lines if e["type"] == "warning"]
    assert warnings.count("store_unavailable") == 1  # said once per run, when it happened


@pytest.mark.parametrize("command", [("recover", "--watch"), ("follow", "--parent")])
def test_case_6_the_live_commands_say_store_unavailable(
    fake: Conversations,
    clock: Clock,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    command: tuple[str, str],
) -> None:
    fake.session(P)
    spawn(fake, "call_1", "Audit A", 100.0)
    complete(fake, "Audit A")()
    monkeypatch.setenv("HERMES_TASK_STORE", str(tmp_path / "missing.db"))
    name, flag = command
    args = (P, flag) if name == "recover" else (flag, P)
    result = cli(name, *args, "--json", "--timeout", "30")
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [e["code"] for e in lines if e["type"] == "warning"] == ["store_unavailable"]
    assert [e["unavailable_reason"] for e in lines if e["type"] == "task"][-1] == "store_unavailable"
    text = cli(name, *args, "--timeout", "30")
    assert "proposed none that the dashboard confirmed" not in text.stderr + text.stdout


def test_a_lasting_child_failure_ends_on_the_verdict_with_the_tasks_code(
    fake: Conversations, clock: Clock, two_done: Path
) -> None:
    """No command waits forever on what cannot come: a child whose proof keeps failing costs
    `FINAL_RETRIES` more cycles once every task is terminal, then its task keeps the code."""
    fake.before.append(busy(B, "detail", times=10**6))
    result = cli("recover", P, "--watch", "--json", "--exit-status")
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert result.exit_code == 0, result.stdout
    last = {e["number"]: e for e in lines if e["type"] == "task"}
    assert (last["2.1"]["child_session_id"], last["2.1"]["unavailable_reason"]) == (None, "server_error")
    assert last["1.1"]["child_session_id"] == A
