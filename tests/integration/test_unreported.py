"""Completions Hermes holds but has not delivered, against the four real backends (issue 25,
item 5). A background unit is seeded through the package's own functions (`seeding held-unit`:
`tools.async_delegation._persist_dispatch` where the package has the durable ledger), its
children then close and Hermes records the unit's completion (`_persist_completion`,
`delivery_state='pending'`), while the parent's transcript still shows only
`{"status": "dispatched"}`. `recover` must not say `running`, and `recover --watch
--exit-status` must end within two polling cycles of the children's end: 0 when the store's
outcome is completed and the children's proven end agrees, 8 without a proposed outcome
(hermes-agent 0.18 has no ledger: always 8)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from tests.integration.test_watch import WARNING, finish, first_line, stop
from tests.support.cli_runner import backend_store_env, cli_env, hermes_task

pytestmark = pytest.mark.integration

GOALS = ["Run the linter over src/", "Build the documentation site"]


def outcomes(doc: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [
        (t["number"], t["status"], t["terminal"], t["child_state"], t["result_source"]) for t in doc["tasks"]
    ]


def test_recover_of_ended_children_whose_completion_is_held_is_never_running(backend: Any) -> None:
    unit = backend.held_unit(GOALS)
    done = backend.finish_held(unit, ["completed", "failed"])
    assert done["completion"] is unit["ledger"]
    status, page = backend.get(f"/api/sessions/{unit['parent']}/messages?limit=50&offset=0")
    assert status == 200
    assert not any("ASYNC DELEGATION" in str(m.get("content")) for m in page["messages"])  # never delivered
    run = hermes_task(backend, "recover", unit["parent"], "--json", "--exit-status")
    assert run.code == 8, run.stderr
    doc = run.json()
    assert [t["child_session_id"] for t in doc["tasks"]] == unit["children"]
    if unit["ledger"]:
        assert outcomes(doc) == [
            ("1.1", "completed", True, "ended", "store"),
            ("1.2", "failed", True, "ended", "store"),
        ]
        assert [t["delivery_state"] for t in doc["tasks"]] == ["pending", "pending"]
        assert doc["tasks"][0]["summary"] == "Task 1 finished."
    else:  # no durable ledger (0.18): nothing proposes an outcome
        assert outcomes(doc) == [("1.1", "ended_unreported", True, "ended", None),
                                 ("1.2", "ended_unreported", True, "ended", None)]  # fmt: skip
    assert {k: v for k, v in doc["summary"].items() if k != "usage"} == {
        "total": 2,
        "terminal": 2,
        "state": "finished",
    }
    assert doc["summary"]["usage"]["segments"] == 2  # both children proven (no figures: not complete)
    assert "store_unavailable" not in [w["code"] for w in doc["warnings"]]


def test_a_rotated_childs_root_ended_by_compression_is_not_its_end(backend: Any) -> None:
    unit = backend.held_unit(GOALS)
    first = unit["children"][0]
    rotated = backend.rotate(first, before=2, after=2, how="by-hand")  # the new segment stays open
    detail = backend.get(f"/api/sessions/{first}")[1]
    assert (detail["end_reason"], detail["ended_at"] is not None) == ("compression", True)
    run = hermes_task(backend, "recover", unit["parent"], "--json")
    assert run.code == 0, run.stderr
    assert outcomes(run.json())[0] == ("1.1", "running", False, "running", None)  # the proven tip runs
    backend.end_session(rotated["new"])
    run = hermes_task(backend, "recover", unit["parent"], "--json")
    assert outcomes(run.json())[0] == ("1.1", "ended_unreported", True, "ended", None)


def cycles(stderr: str) -> list[list[str]]:
    """The watch's --debug lines, cut into polling cycles (each ends with `watch wait` or `watch stop`)."""
    out: list[list[str]] = [[]]
    for line in stderr.splitlines():
        out[-1].append(line)
        if line.startswith(("debug: watch wait ", "debug: watch stop ")):
            out.append([])
    return [c for c in out if c]


def checks(cycle: list[str], child: str) -> list[str]:
    """What one cycle found of one child's newest proven segment."""
    tag = f" child {child}: "
    return [
        line.split(tag, 1)[1] for line in cycle if line.startswith("debug: unreported: task ") and tag in line
    ]


@pytest.mark.parametrize(
    "statuses", [["completed", "completed"], None], ids=["completion_held", "no_completion"]
)
def test_watch_ends_within_two_cycles_of_the_childrens_end(backend: Any, statuses: list[str] | None) -> None:
    unit = backend.held_unit(GOALS)
    proc = subprocess.Popen(
        [sys.executable, "-m", "hermes_task", "recover", unit["parent"], "--watch", "--exit-status", "--json",
         "--debug", "--timeout", "120", "--url", backend.url],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=cli_env(backend.token, **backend_store_env(backend)),
    )  # fmt: skip
    try:
        head = json.loads(first_line(proc, skip=WARNING))  # the first cycle is done: tasks running
        done = backend.finish_held(unit, statuses)
        out, err = finish(proc, 90)
    finally:
        stop(proc)
    completed = done["completion"]
    assert proc.returncode == (0 if completed else 8), err
    events = [head, *(json.loads(line) for line in out.splitlines())]
    result = events[-1]
    unreported = [] if completed else ["1.1", "1.2"]
    end_reason = "completed" if completed else "unreported"
    assert result == {"type": "result", "state": "ended", "end_reason": end_reason, "exit_code": proc.returncode,
                      "last_read_age": None, "unreported": unreported}  # fmt: skip
    last = {e["number"]: e for e in events if e["type"] == "task"}
    assert [(n, t["status"], t["child_state"]) for n, t in last.items()] == [
        ("1.1", "completed" if completed else "ended_unreported", "ended"),
        ("1.2", "completed" if completed else "ended_unreported", "ended"),
    ]
    assert (head["status"], head["child_state"]) == ("running", "running")
    assert all(
        e["status"] != "running" for e in events if e["type"] == "task" and e["child_state"] == "ended"
    )
    # Cycle by cycle (the --debug lines): each child's newest segment is read in every cycle until
    # the one that finds it ended, with nothing skipped; the watch stops in that cycle or the next.
    found = cycles(err)
    assert found[-1][-1].startswith("debug: watch stop ended")
    ended_in = []
    for child in unit["children"]:
        seen = [checks(cycle, child) for cycle in found]
        ended = next(i for i, s in enumerate(seen) if s == ["ended"])
        assert all(s == ["running"] for s in seen[:ended]), seen
        assert all(s == [] for s in seen[ended + 1 :]), seen
        ended_in.append(ended)
    assert len(found) - 1 <= max(ended_in) + 1, [len(found), ended_in]
