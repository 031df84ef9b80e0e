"""`--tail`, `--role` and `--quiet` against both real backends (issue 16, item 12).

The shared `backend` is only read; the follow tests start a server of their own (a copy of the
seeded home), because they write rows into its `running` child and end it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.integration.test_follow import Follow, keys
from tests.support.cli_runner import hermes_task

pytestmark = pytest.mark.integration


def test_show_tail_and_role_select_rows_and_keep_the_coverage(backend: Any) -> None:
    c1 = backend.manifest["c1"]
    args = ("show", c1["root"], "--tip", c1["tip"], "--json")
    whole = hermes_task(backend, *args)
    assert whole.code == 0, whole.stderr
    rows = whole.json()["rows"]
    assert len(rows) > 5

    tail = hermes_task(backend, *args, "--tail", "4")
    assert tail.code == 0, tail.stderr
    assert tail.json()["rows"] == rows[-4:]
    assert tail.json()["coverage"] == whole.json()["coverage"]
    assert sum(s["rows_shown"] for s in tail.json()["task"]["segments"]) == 4

    tools = hermes_task(backend, *args, "--role", "tool")
    assert tools.code == 0, tools.stderr
    assert tools.json()["rows"] == [r for r in rows if r["role"] == "tool"]
    assert tools.json()["rows"]
    assert tools.json()["coverage"] == whole.json()["coverage"]

    text = hermes_task(backend, "show", c1["root"], "--tip", c1["tip"], "--role", "tool", "--tail", "1")
    assert text.code == 0, text.stderr
    assert text.stdout.count("▌ ") == 1
    assert "▌ tool" in text.stdout
    assert "· 1 row shown" in text.stdout  # singular (issue 26)


@pytest.mark.parametrize("args", [("--tail", "-3"), ("--role", "robot")])
def test_bad_selection_values_are_usage_errors(backend: Any, args: tuple[str, ...]) -> None:
    run = hermes_task(backend, "show", backend.manifest["c1"]["root"], *args)
    assert run.code == 2
    assert run.stdout == ""
    assert run.stderr.startswith("error: invalid usage: ")


def test_quiet_keeps_setup_warnings_off_stderr_but_in_json(backend: Any, tmp_path: Path) -> None:
    c1 = backend.manifest["c1"]
    store = str(tmp_path / "no-such" / "state.db")  # looked up for the root: store_unavailable
    args = ("show", c1["root"], "--no-hint", "--store", store)
    loud = hermes_task(backend, *args)
    quiet = hermes_task(backend, *args, "--quiet")
    as_json = hermes_task(backend, *args, "--quiet", "--json")
    assert loud.code == quiet.code == as_json.code == 0, loud.stderr
    setup = {"store_unavailable"} | ({"legacy_backend"} if backend.contract == "legacy" else set())
    assert {w["code"] for w in as_json.json()["warnings"]} == setup | {"partial_history"}
    assert len(loud.stderr.splitlines()) == len(setup) + 1
    assert all(line.startswith("warning: ") for line in loud.stderr.splitlines())
    # about the task itself: always said
    assert quiet.stderr.splitlines() == [
        line for line in loud.stderr.splitlines() if "partial history" in line
    ]
    assert quiet.stderr.startswith("warning: partial history")
    assert quiet.stdout == loud.stdout


def test_follow_tail_prints_the_last_rows_then_every_new_one(fresh: Any) -> None:
    running = fresh.manifest["running"]
    sid, seeded = running["id"], running["rows"]
    everything = Follow(fresh, sid, "--interval", "0.5")
    new_only = Follow(fresh, sid, "--interval", "0.5", "--tail", "0")
    last_two = Follow(fresh, sid, "--interval", "0.5", "--tail", "2")
    try:
        before = everything.rows_until(seeded)
        assert last_two.rows_until(2) == before[-2:]
        new_only.state_seen()  # its first read is done: what is there now is not printed
        assert fresh.append_rows(sid, 3) == seeded + 3
        assert len(new_only.rows_until(3)) == 3
        assert fresh.end_session(sid, "agent_close")["end_reason"] == "agent_close"
        results = {
            name: f.finish() for name, f in (("all", everything), ("new", new_only), ("two", last_two))
        }
        for code, _events, stderr in results.values():
            assert code == 0, stderr
        all_rows = keys(results["all"][1])
        assert len(all_rows) == seeded + 3
        assert keys(results["new"][1]) == all_rows[seeded:]  # only the rows written after it started
        assert keys(results["two"][1]) == all_rows[seeded - 2 :]
        assert results["new"][1][-1] == {
            "type": "result",
            "state": "ended",
            "end_reason": "agent_close",
            "exit_code": 0,
            "last_read_age": None,
            "unreported": None,
        }
    finally:
        for follow in (everything, new_only, last_two):
            follow.close()
