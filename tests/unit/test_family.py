"""`follow --parent` (reading/family.py, render/watchout.py) on a fake current-contract
dashboard whose results carry `child_session_id` (the real backends persist none; the
store-proposed ids of issue 13 will feed the same task objects): every row of two
concurrently written children once each, prefixed; tasks joining; the unavailable task listed
once; the exit status by the parent's verdicts; and the request bound per cycle."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable

import pytest
from typer.testing import Result

from hermes_task.reading.family import MAX_READS_PER_CYCLE
from hermes_task.render.watchout import PALETTE, colour_of
from tests.support.cli_runner import ENVIRONMENT, invoke
from tests.support.clock import Clock
from tests.support.conversations import Conversations
from tests.unit.test_recover_cli import ENV, P
from tests.unit.test_schemas import validator

DELEG = "deleg_66c2a77e"
A = "20261130_170001_bbbbbb"
B = "20261130_170002_cccccc"


def run(*args: str) -> Result:
    return invoke("follow", *args, env=ENV, environment=ENVIRONMENT[-1] if ENVIRONMENT else None)


def family(dash: Conversations, goals: list[str], children: list[str | None]) -> None:
    dash.session(P)
    dash.add(P, "user", "Fan out.")
    results = [{"task_index": i, "status": "running", **({"child_session_id": c} if c else {})}
               for i, c in enumerate(children)]  # fmt: skip
    dash.spawn(P, "fan", goals, {"results": results, "delegation_id": DELEG})
    for child, goal in zip(children, goals, strict=True):
        if child:
            dash.session(child, parent=P)
            dash.add(child, "user", goal)


def write(dash: Conversations, child: str, *texts: str) -> Callable[[], None]:
    def step() -> None:
        for text in texts:
            dash.add(child, "assistant", text)

    return step


def complete(dash: Conversations, goals: list[str], statuses: list[str]) -> Callable[[], None]:
    def done() -> None:
        text = [f"[ASYNC DELEGATION BATCH COMPLETE — {DELEG}]", "Finished.", ""]
        for i, (goal, status) in enumerate(zip(goals, statuses, strict=True)):
            text += ["", f"--- ✓ TASK {i + 1}/{len(goals)}: {goal}  (status={status}, 2.0s) ---", "ok"]
        dash.add(P, "user", "\n".join(text))

    return done


def chain(*steps: Callable[[], None]) -> Callable[[], None]:
    def run_all() -> None:
        for step in steps:
            step()

    return run_all


GOALS = ["Write the parser", "Write the tests", "Write the docs"]


def test_rows_of_two_concurrent_children_once_each_prefixed_in_json(
    fake: Conversations, clock: Clock
) -> None:
    family(fake, GOALS, [A, B, None])
    clock.hooks[1] = chain(write(fake, A, "a1", "a2"), write(fake, B, "b1"))
    clock.hooks[2] = chain(write(fake, B, "b2", "b3"), write(fake, A, "a3"))
    clock.hooks[3] = chain(write(fake, A, "a4"), complete(fake, GOALS, ["completed", "failed", "completed"]))
    result = run("--parent", P, "--json", "--exit-status")
    assert result.exit_code == 8, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    rows = [
        (e["task"]["number"], e["task"]["child_session_id"], e["text"]) for e in events if e["type"] == "row"
    ]
    assert sorted(rows) == sorted(
        [("1.1", A, t) for t in ("Write the parser", "a1", "a2", "a3", "a4")]
        + [("1.2", B, t) for t in ("Write the tests", "b1", "b2", "b3")]
    )
    assert [r[2] for r in rows if r[0] == "1.1"] == ["Write the parser", "a1", "a2", "a3", "a4"]  # in order
    assert events[-1] == {
        "type": "result",
        "state": "ended",
        "end_reason": "failed",
        "exit_code": 8,
        "last_read_age": None,
        "unreported": [],
    }
    tasks = [(e["number"], e["status"], e["unavailable_reason"]) for e in events if e["type"] == "task"]
    assert tasks[:3] == [("1.1", "running", None), ("1.2", "running", None),
                         ("1.3", "running", "no_durable_child_reference")]  # fmt: skip
    check = validator("events")
    for event in events:
        check.validate(event)


def test_text_lines_are_prefixed_and_the_unavailable_task_is_listed_once(
    fake: Conversations, clock: Clock
) -> None:
    family(fake, GOALS, [A, B, None])
    clock.hooks[1] = write(fake, B, "line one\nline two")
    clock.hooks[2] = complete(fake, GOALS, ["completed", "completed", "completed"])
    result = run("--parent", P, "--exit-status")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert all(line.startswith(("1.1 │ ", "1.2 │ ")) for line in lines)
    assert "1.2 │   line one" in lines
    assert "1.2 │   line two" in lines
    assert sum(1 for line in lines if line.startswith("1.1 │ ▌ user")) == 1
    assert result.stderr.count("1.3 │ rows unavailable:") == 1
    assert result.stderr.splitlines()[-1] == "every task ended (completed) · 3 of 3 tasks terminal"


def test_ids_that_appear_later_are_picked_up_and_tasks_join(fake: Conversations, clock: Clock) -> None:
    family(fake, ["Write the parser"], [A])

    def more() -> None:
        fake.session(B, parent=P)
        fake.add(B, "user", "Late task")
        call = {"id": "late", "type": "function",
                "function": {"name": "delegate_task", "arguments": json.dumps({"goal": "Late task"})}}  # fmt: skip
        fake.add(P, "assistant", "", tool_calls=[call])
        fake.add(P, "tool", json.dumps({"results": [{"task_index": 0, "status": "completed", "child_session_id": B}]}),
                 tool_call_id="late", tool_name="delegate_task")  # fmt: skip

    clock.hooks[1] = more
    clock.hooks[2] = complete(fake, ["Write the parser"], ["completed"])
    result = run("--parent", P, "--json")
    assert result.exit_code == 0
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert {(e["task"]["number"], e["text"]) for e in events if e["type"] == "row"} == {
        ("1.1", "Write the parser"), ("2.1", "Late task")}  # fmt: skip


def test_requests_per_cycle_are_bounded_and_children_are_read_in_turn(
    fake: Conversations, clock: Clock
) -> None:
    children = [f"20261130_1700{i:02d}_aaaaaa" for i in range(10, 16)]
    goals = [f"Task {i}" for i in range(6)]
    family(fake, goals, list(children))
    counts: list[int] = []

    def mark() -> None:
        counts.append(len(fake.paths_asked()))

    for n in range(1, 5):
        clock.hooks[n] = mark
    clock.hooks[5] = complete(fake, goals, ["completed"] * 6)
    result = run("--parent", P, "--json", "--timeout", "30")
    assert result.exit_code == 0, result.stdout
    per_cycle = [b - a for a, b in itertools.pairwise(counts)]
    assert len(per_cycle) == 3
    assert max(per_cycle) <= 3 + 3 * MAX_READS_PER_CYCLE
    rows = {e["task"]["number"] for e in map(json.loads, result.stdout.splitlines()) if e["type"] == "row"}
    assert rows == {f"1.{i}" for i in range(1, 7)}  # every child was read, in turn


def test_colours_are_stable_per_number() -> None:
    assert colour_of("1.1") == colour_of("1.1")
    assert {colour_of(f"1.{i}") for i in range(1, 9)} <= set(PALETTE)
    assert len({colour_of(f"1.{i}") for i in range(1, 9)}) > 1


@pytest.mark.parametrize("args", [[], [A, "--parent", P], ["--parent", P, "--tip", A]])
def test_either_a_child_or_a_parent(args: list[str]) -> None:
    assert run(*args).exit_code == 2


@pytest.mark.parametrize(("args", "seconds"), [((), 2.0), (("--interval", "5"), 5.0)])
def test_interval_paces_the_cycles_with_parent(
    fake: Conversations, clock: Clock, args: tuple[str, ...], seconds: float
) -> None:
    family(fake, ["Write the parser"], [A])
    clock.hooks[1] = complete(fake, ["Write the parser"], ["completed"])
    result = run("--parent", P, "--json", *args)
    assert result.exit_code == 0, result.stderr
    assert clock.sleeps[0] == seconds
