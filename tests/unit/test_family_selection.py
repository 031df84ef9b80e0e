"""`follow --parent` (issue 26 items 4 and 5): each distinct warning once per run, not once
per task; `--tail N` per task (the backlog of the tasks there at the first read; a task
delegated later is new, every row of it) and `--role`, as `follow CHILD` selects rows."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support.clock import Clock
from tests.support.conversations import Conversations
from tests.unit.test_family import DELEG, GOALS, A, B, chain, complete, family, run, write
from tests.unit.test_recover_cli import P

C = "20261130_170003_dddddd"


@pytest.fixture
def legacy(fake: Conversations) -> Conversations:
    """The fake dashboard answering as 0.19.x does (`legacy_backend` on every transcript)."""
    fake.contract = "legacy"
    return fake


def events(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines()]


def test_a_warning_about_the_backend_is_said_once_not_once_per_task(
    legacy: Conversations, clock: Clock
) -> None:
    family(legacy, GOALS, [A, B, C])
    clock.hooks[1] = write(legacy, A, "a1")
    clock.hooks[2] = complete(legacy, GOALS, ["completed"] * 3)
    result = run("--parent", P)
    assert result.exit_code == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if "warning:" in line]
    assert warnings == [
        "warning: legacy backend (hermes-agent 0.19.x): archived rows are not visible over HTTP"
    ]


def test_json_carries_the_backend_warning_once_too(legacy: Conversations, clock: Clock) -> None:
    family(legacy, GOALS, [A, B, C])
    clock.hooks[1] = complete(legacy, GOALS, ["completed"] * 3)
    result = run("--parent", P, "--json")
    assert result.exit_code == 0, result.stderr
    codes = [e["code"] for e in events(result.stdout) if e["type"] == "warning"]
    assert codes == ["legacy_backend"]


def test_quiet_keeps_it_off_stderr(legacy: Conversations, clock: Clock) -> None:
    family(legacy, GOALS, [A, B, C])
    clock.hooks[1] = complete(legacy, GOALS, ["completed"] * 3)
    result = run("--parent", P, "--quiet")
    assert result.exit_code == 0, result.stderr
    assert "warning" not in result.stderr


def rows_by_task(stdout: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for event in events(stdout):
        if event["type"] == "row":
            out.setdefault(event["task"]["number"], []).append(event["text"])
    return out


def test_tail_cuts_each_tasks_backlog_then_every_new_row_follows(fake: Conversations, clock: Clock) -> None:
    family(fake, GOALS[:2], [A, B])
    write(fake, A, "a1", "a2", "a3")()
    write(fake, B, "b1")()
    clock.hooks[1] = chain(write(fake, A, "a4", "a5"), write(fake, B, "b2"))
    clock.hooks[2] = complete(fake, GOALS[:2], ["completed", "completed"])
    result = run("--parent", P, "--json", "--tail", "1")
    assert result.exit_code == 0, result.stderr
    assert rows_by_task(result.stdout) == {"1.1": ["a3", "a4", "a5"], "1.2": ["b1", "b2"]}


def test_tail_0_is_only_new_rows_and_a_task_delegated_later_is_new_whole(
    fake: Conversations, clock: Clock
) -> None:
    family(fake, ["Write the parser"], [A])
    write(fake, A, "a1")()

    def late_task() -> None:
        fake.session(B, parent=P)
        fake.add(B, "user", "Late task")
        fake.add(B, "assistant", "b1")
        call = {"id": "late", "type": "function",
                "function": {"name": "delegate_task", "arguments": json.dumps({"goal": "Late task"})}}  # fmt: skip
        fake.add(P, "assistant", "", tool_calls=[call])
        result = {"results": [{"task_index": 0, "status": "running", "child_session_id": B}],
                  "delegation_id": DELEG}  # fmt: skip
        fake.add(P, "tool", json.dumps(result), tool_call_id="late", tool_name="delegate_task")

    clock.hooks[1] = chain(write(fake, A, "a2"), late_task)
    clock.hooks[2] = write(fake, B, "b2")
    clock.hooks[3] = complete(fake, ["Write the parser"], ["completed"])
    result = run("--parent", P, "--json", "--tail", "0")
    assert result.exit_code == 0, result.stderr
    assert rows_by_task(result.stdout) == {"1.1": ["a2"], "2.1": ["Late task", "b1", "b2"]}


def test_role_selects_every_tasks_rows(fake: Conversations, clock: Clock) -> None:
    family(fake, GOALS[:2], [A, B])
    clock.hooks[1] = chain(write(fake, A, "a1"), write(fake, B, "b1"))
    clock.hooks[2] = complete(fake, GOALS[:2], ["completed", "completed"])
    result = run("--parent", P, "--json", "--role", "user")
    assert result.exit_code == 0, result.stderr
    assert rows_by_task(result.stdout) == {"1.1": [GOALS[0]], "1.2": [GOALS[1]]}


def test_tail_and_role_on_a_terminal_prefix_each_kept_row(fake: Conversations, clock: Clock) -> None:
    family(fake, GOALS[:2], [A, B])
    write(fake, A, "a1", "a2")()
    clock.hooks[1] = complete(fake, GOALS[:2], ["completed", "completed"])
    result = run("--parent", P, "--tail", "1", "--role", "assistant")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert any(line.startswith("1.1 │ ") and "a2" in line for line in lines), lines
    assert not any("a1" in line for line in lines)
    assert not any(line.startswith("1.2 │ ") for line in lines)  # its only row is its goal (user)


def test_a_tasks_status_line_names_its_child_once(fake: Conversations, clock: Clock) -> None:
    family(fake, GOALS[:2], [A, B])
    clock.hooks[1] = complete(fake, GOALS[:2], ["completed", "completed"])
    result = run("--parent", P)
    assert result.exit_code == 0, result.stderr
    news = result.stderr.splitlines()
    assert news[:2] == [f"1.1 │ running · child {A}", f"1.2 │ running · child {B}"]
    assert sum(A in line for line in news) == 1
    assert "1.1 │ ✓ completed" in "\n".join(news)
