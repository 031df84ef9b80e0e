"""`search` against every real backend: the seeded parent's tasks as `recover` finds them,
each child read whole through its rotations; a text that exists only in the tip (the third
segment) of the twice-rotated `c1` task is found there and named by its task; an absent text
exits 10 only where the backend serves every row."""

from __future__ import annotations

import json
from typing import Any

import pytest
from tests.support.backends import legacy_warning
from tests.support.cli_runner import hermes_task

pytestmark = pytest.mark.integration

ONLY_IN_C1_TIP = "c1tip_0"  # the tool round written after c1's second rotation (seeding/segments.py)


def events(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines()]


def number_of(backend: Any, child: str) -> str:
    """The task number `recover` gives the task whose child is `child`."""
    run = hermes_task(backend, "recover", backend.manifest["parent"], "--json")
    assert run.code == 0, run.stderr
    (number,) = [t["number"] for t in run.json()["tasks"] if t["child_session_id"] == child]
    return str(number)


def test_a_row_only_in_a_rotated_tasks_tip_is_found_and_named(backend: Any) -> None:
    manifest, c1 = backend.manifest, backend.manifest["c1"]
    number = number_of(backend, c1["root"])
    run = hermes_task(backend, "search", ONLY_IN_C1_TIP, manifest["parent"], "--json")
    assert run.code == 0, run.stderr
    assert run.stderr == ""
    lines = events(run.stdout)
    matches = [e for e in lines if e["type"] == "match"]
    # the call's arguments and its output, both in the tip (the third segment) of task c1
    assert [(e["role"], e["field"]) for e in matches] == [("assistant", "arguments"), ("tool", "output")]
    assert {(e["task"]["number"], e["task"]["child_session_id"], e["session_id"]) for e in matches} == {
        (number, c1["root"], c1["tip"])
    }
    assert matches[1]["line"] == f"src/{ONLY_IN_C1_TIP}.py: 0 TODO marker(s)"
    tasks = {e["number"]: e for e in lines if e["type"] == "task"}
    assert len(tasks) == len(manifest["expected_tasks"])  # every task accounted for
    found = tasks[number]
    assert (found["searched"], found["segments"], found["matches"]) == (
        "whole",
        [c1["root"], c1["mid"], c1["tip"]],
        2,
    )
    older = hermes_task(backend, "older", c1["root"], "--all", "--json")
    assert older.code == 0, older.stderr
    assert found["rows"] == len(older.json()["rows"])  # the rows `older --all` reads, every one
    assert {e["searched"] for e in tasks.values()} == {"whole"}
    warnings = [(e["code"], e["task"]) for e in lines if e["type"] == "warning"]
    assert warnings == ([("legacy_backend", None)] if legacy_warning(backend.features) else [])
    assert lines[-1] == {
        "type": "result",
        "tasks": len(tasks),
        "searched": len(tasks),
        "matches": 2,
        "complete": legacy_warning(backend.features) is None,
        "exit_code": 0,
    }

    piped = hermes_task(backend, "search", ONLY_IN_C1_TIP, manifest["parent"], "-C", "1")
    assert piped.code == 0, piped.stderr
    rows = [line.split("\t") for line in piped.stdout.splitlines()]
    assert {len(r) for r in rows} == {10}
    assert {(r[0], r[1], r[2]) for r in rows} == {(number, c1["root"], c1["tip"])}
    assert [(r[6], r[8], r[9]) for r in rows if r[8] == ":"] == [
        ("arguments", ":", f'{{"command": "grep -n TODO src/{ONLY_IN_C1_TIP}.py"}}'),
        ("output", ":", f"src/{ONLY_IN_C1_TIP}.py: 0 TODO marker(s)"),
    ]


def test_an_absent_text_is_proven_absent_only_where_every_row_is_served(backend: Any) -> None:
    run = hermes_task(backend, "search", "no such text 7f3a9c", backend.manifest["parent"], "--json")
    legacy = legacy_warning(backend.features) is not None
    assert run.code == (11 if legacy else 10), run.stdout
    lines = events(run.stdout)
    assert [e for e in lines if e["type"] == "match"] == []
    assert {e["searched"] for e in lines if e["type"] == "task"} == {"whole"}
    assert (lines[-1]["complete"], lines[-1]["exit_code"]) == (not legacy, run.code)


def test_without_the_store_no_task_can_be_searched(backend: Any) -> None:
    run = hermes_task(backend, "search", ONLY_IN_C1_TIP, backend.manifest["parent"], "--no-store")
    assert (run.code, run.stdout) == (11, "")
    lines = run.stderr.splitlines()
    assert sum(" not searched: the backend persisted no child session id" in line for line in lines) == len(
        backend.manifest["expected_tasks"]
    )
