"""Completions Hermes holds but has not delivered (reading/tasktree.py, issue 25 item 5): a task
whose child is proven ended while the parent has no result is never `running`; the store's
`async_delegations` record proposes its outcome only when the child's proven end agrees;
`recover --watch --exit-status` notices the end without a parent row, within two cycles."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.support.clock import Clock
from tests.support.conversations import Conversations
from tests.support.dashboard import serving
from tests.unit.test_ledger import LEDGER, batch_event, entry
from tests.unit.test_recover_cli import run
from tests.unit.test_schemas import validator
from tests.unit.test_store import unchanged

P = "20261130_170000_aaaaaa"
A = "20261130_170001_bbbbbb"
B = "20261130_170002_cccccc"
A2 = "20261130_170005_dddddd"
OTHER = "20261130_165000_ffffff"
DELEG = "deleg_1f2d7b00"
GOALS = ["Count TODO markers", "Check the build"]
CONFIG = json.dumps({"max_iterations": 90, "_delegate_from": P})
# Both children proven (this suite's details carry no usage figures): their usage, summed.
NO_FIGURES_2 = {
    "input_tokens": None, "output_tokens": None, "cache_read_tokens": None, "cache_write_tokens": None,
    "reasoning_tokens": None, "api_calls": None, "cost_usd": None, "cost_kind": None, "complete": False,
    "segments": 2, "missing": ["figures", "cost"],
}  # fmt: skip


class Family(Conversations):
    """Conversations whose `latest-descendant` hint knows nothing (404), as iot's for children."""

    def __init__(self) -> None:
        super().__init__(serves=frozenset({"detail", "messages", "latest-descendant"}), hints=False)

    def end(self, sid: str, reason: str = "agent_close", at: float = 1796056500.0) -> None:
        self.details[sid].update(ended_at=at, end_reason=reason)

    def end_all(self) -> None:
        """Both children close (`agent_close`), in one write between two reads."""
        self.end(A)
        self.end(B)


@pytest.fixture
def conversations() -> Family:
    # Differs from conftest's: a Family (latest-descendant asked, and it knows no hint).
    return Family()


def dispatch(fake: Family, *, at: float = 100.0) -> None:
    """P delegates GOALS in the background (one unit, DELEG); A and B are its children."""
    fake.session(P)
    fake.add(P, "user", "Audit the repository in the background.", timestamp=at - 1)
    args = json.dumps({"tasks": [{"goal": g} for g in GOALS]})
    call = {"id": "call_1", "type": "function", "function": {"name": "delegate_task", "arguments": args}}
    fake.add(P, "assistant", "", tool_calls=[call], timestamp=at)
    payload = {
        "status": "dispatched",
        "mode": "background",
        "count": 2,
        "delegation_id": DELEG,
        "goals": GOALS,
    }
    fake.add(
        P, "tool", json.dumps(payload), tool_call_id="call_1", tool_name="delegate_task", timestamp=at + 0.001
    )
    for sid, goal in zip((A, B), GOALS, strict=True):
        fake.session(sid, parent=P)
        fake.details[sid]["started_at"] = 1796056440.0
        fake.add(sid, "user", goal, timestamp=1796056440.5)  # the goal row the assignment reads over HTTP


def store(
    tmp_path: Path, *, event: dict[str, Any] | None = None, extra: Sequence[tuple[str, str]] = ()
) -> Path:
    """The local store: A and B as P's children (goal rows), `extra` (id, parent) continuations,
    and DELEG's record: running, or completed with `event`."""
    path = tmp_path / "state.db"
    if path.exists():
        path.unlink()
    conn = sqlite3.connect(path)
    conn.executescript(unreported_schema())
    rows = [(A, P, 100.5, GOALS[0]), (B, P, 100.6, GOALS[1])] + [
        (sid, parent, 101.0, None) for sid, parent in extra
    ]
    for sid, parent, started, goal in rows:
        conn.execute(
            "INSERT INTO sessions (id, source, parent_session_id, model_config, started_at) VALUES (?,?,?,?,?)",
            (sid, "subagent", parent, CONFIG, started),
        )
        if goal:
            conn.execute(
                "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?,?,?,?)",
                (sid, "user", goal, started + 0.01),
            )
    state = "running" if event is None else event["status"]
    conn.execute(
        "INSERT INTO async_delegations (delegation_id, origin_session, parent_session_id, state, dispatched_at,"
        " updated_at, event_json, result_json, delivery_state) VALUES (?,?,?,?,?,?,?,?,?)",
        (DELEG, "", P, state, 100.0, 101.0, None if event is None else json.dumps(event), None, "pending"),
    )
    conn.commit()
    conn.close()
    return path


def complete(db: Path, event: dict[str, Any]) -> None:
    """Hermes persists the unit's completion (`_persist_completion`): the record in place."""
    conn = sqlite3.connect(db)
    conn.execute(
        "UPDATE async_delegations SET state = ?, event_json = ? WHERE delegation_id = ?",
        (event["status"], json.dumps(event), DELEG),
    )
    conn.commit()
    conn.close()


def unreported_schema() -> str:
    from tests.unit.conftest import SCHEMA

    return SCHEMA + LEDGER


def completed_event(*statuses: str) -> dict[str, Any]:
    return batch_event(
        *(entry(i, s, **({} if s == "completed" else {"error": "boom"})) for i, s in enumerate(statuses))
    )


def recover(db: Path, *args: str) -> Any:
    return run(P, *args, env={"HERMES_TASK_STORE": str(db)})


def tasks(result: Any) -> list[tuple[Any, ...]]:
    doc = json.loads(result.stdout)
    return [
        (t["number"], t["status"], t["terminal"], t["child_state"], t["result_source"]) for t in doc["tasks"]
    ]


# -- recover ------------------------------------------------------------------------------


def test_a_child_that_ended_without_any_outcome_is_ended_unreported_never_running(
    fake: Family, tmp_path: Path
) -> None:
    dispatch(fake)
    fake.end(A)
    db = store(tmp_path)  # the record is still `running`: no outcome for anyone
    with unchanged(tmp_path, "state.db"):
        result = recover(db, "--json", "--exit-status")
    assert result.exit_code == 9, result.output  # B still runs
    assert tasks(result) == [
        ("1.1", "ended_unreported", True, "ended", None),
        ("1.2", "running", False, "running", None),
    ]
    doc = json.loads(result.stdout)
    assert doc["summary"] == {"total": 2, "terminal": 1, "state": "running", "usage": NO_FIGURES_2}
    assert doc["warnings"] == []
    validator("tasks").validate(doc)
    fake.end(B)
    result = recover(db, "--json", "--exit-status")
    assert result.exit_code == 8  # ended, but not known completed
    assert [t[1] for t in tasks(result)] == ["ended_unreported", "ended_unreported"]
    assert json.loads(result.stdout)["summary"] == {
        "total": 2, "terminal": 2, "state": "finished", "usage": NO_FIGURES_2
    }  # fmt: skip
    piped = recover(db, "--status", "ended_unreported")
    assert [line.split("\t")[:2] for line in piped.stdout.splitlines()] == [
        ["1.1", "ended_unreported"],
        ["1.2", "ended_unreported"],
    ]
    assert piped.stdout.splitlines()[0].split("\t")[7] == "the child ended; the parent has received no result"


def test_the_stores_outcome_is_used_only_once_the_child_is_proven_ended(fake: Family, tmp_path: Path) -> None:
    dispatch(fake)
    fake.end(A)
    db = store(tmp_path, event=completed_event("completed", "failed"))
    result = recover(db, "--json", "--exit-status")
    assert result.exit_code == 9  # the store says B failed, but B's child still runs: not used
    assert tasks(result) == [
        ("1.1", "completed", True, "ended", "store"),
        ("1.2", "running", False, "running", None),
    ]
    first = json.loads(result.stdout)["tasks"][0]
    assert (first["summary"], first["api_calls"], first["delivery_state"]) == ("Task 1 done.", 3, "pending")
    fake.end(B)
    result = recover(db, "--json", "--exit-status")
    assert result.exit_code == 8
    assert tasks(result)[1] == ("1.2", "failed", True, "ended", "store")
    assert json.loads(result.stdout)["tasks"][1]["error"] == "boom"
    db = store(tmp_path, event=completed_event("completed", "completed"))
    assert recover(db, "--exit-status").exit_code == 0


def test_the_parents_own_word_wins_and_no_child_is_read_for_it(fake: Family, tmp_path: Path) -> None:
    dispatch(fake)
    fake.end(A)
    fake.end(B)
    text = [f"[ASYNC DELEGATION BATCH COMPLETE — {DELEG}]", "A background fan-out has finished.", "",
            "Role: leaf   Model: study-model   Total duration: 9.1s"]  # fmt: skip
    for i, goal in enumerate(GOALS):
        text += ["", f"--- ✓ TASK {i + 1}/2: {goal}  (status=completed, api_calls=3, 8.4s) ---", "Done."]
    fake.add(P, "user", "\n".join(text), timestamp=200.0)
    db = store(tmp_path, event=completed_event("failed", "failed"))  # disagrees: never asked
    result = recover(db, "--json", "--exit-status", "--debug")
    assert result.exit_code == 0
    assert tasks(result) == [
        ("1.1", "completed", True, None, "parent"),
        ("1.2", "completed", True, None, "parent"),
    ]
    assert fake.paths_asked().count(f"/api/sessions/{A}") == 1  # the store's proposal, confirmed; no more
    assert "store query delegation" not in result.stderr


def test_a_rotated_childs_root_ends_at_compression_the_proven_tip_decides(
    fake: Family, tmp_path: Path
) -> None:
    dispatch(fake)
    fake.end(A, "compression", at=1796056450.0)
    result = recover(store(tmp_path, event=completed_event("completed", "completed")), "--json")
    assert tasks(result)[0] == ("1.1", "running", False, "unknown", None)  # no newer segment proven
    fake.put(A2, source="subagent", parent_session_id=A, model_config=CONFIG, started_at=1796056450.5,
             ended_at=None, end_reason=None, profile="default", is_default_profile=True)  # fmt: skip
    db = store(tmp_path, event=completed_event("completed", "completed"), extra=[(A2, A)])
    assert tasks(recover(db, "--json"))[0] == ("1.1", "running", False, "running", None)  # the tip runs
    fake.end(A2)
    assert tasks(recover(db, "--json"))[0] == ("1.1", "completed", True, "ended", "store")


def test_a_child_not_proven_the_tasks_decides_nothing(fake: Family, tmp_path: Path) -> None:
    fake.session(P)
    results = {"results": [{"task_index": 0, "status": "running", "child_session_id": A},
                           {"task_index": 1, "status": "running", "child_session_id": B}]}  # fmt: skip
    fake.spawn(P, "call_1", GOALS, results)
    fake.session(A, parent=OTHER)  # names another parent
    fake.session(B, parent=P)
    fake.details[B]["model_config"] = json.dumps({"max_iterations": 90})  # no _delegate_from
    fake.end(A)
    fake.end(B)
    result = recover(
        store(tmp_path, event=completed_event("completed", "completed")), "--json", "--exit-status", "--debug"
    )
    assert result.exit_code == 9
    assert tasks(result) == [("1.1", "running", False, None, None), ("1.2", "running", False, None, None)]
    assert f"unreported: task 1.1 child {A}: not proven the task's child" in result.stderr
    assert "store query delegation" not in result.stderr  # the store's word alone decides nothing
    fake.details[B]["model_config"] = "{not json"  # a config that cannot be read proves nothing
    assert tasks(recover(store(tmp_path), "--json"))[1] == ("1.2", "running", False, None, None)


def test_either_end_field_is_an_end(fake: Family, tmp_path: Path) -> None:
    dispatch(fake)
    fake.details[A]["ended_at"] = 1796056500.0  # ended, no reason recorded
    fake.details[B]["end_reason"] = "agent_close"  # a reason, no time
    result = recover(store(tmp_path), "--json")
    assert [t[1:4] for t in tasks(result)] == [("ended_unreported", True, "ended")] * 2


def test_the_dashboards_hint_finds_a_rotated_childs_newer_segment(tmp_path: Path) -> None:
    dash = Family()
    dash.hints = True  # 0.19: latest-descendant walks into the newer segment; the store does not know it
    with serving(dash.handle):
        dispatch(dash)
        dash.end(A, "compression", at=1796056450.0)
        dash.put(A2, source="subagent", parent_session_id=A, model_config=CONFIG, started_at=1796056450.5,
                 ended_at=1796056470.0, end_reason="agent_close", profile="default", is_default_profile=True)  # fmt: skip
        dash.descendants[A] = A2
        result = recover(store(tmp_path), "--json")
    assert tasks(result)[0] == ("1.1", "ended_unreported", True, "ended", None)


def test_one_lookup_per_delegation_and_none_without_a_ledger_or_a_delegation_id(
    fake: Family, tmp_path: Path
) -> None:
    dispatch(fake)
    fake.end_all()
    result = recover(store(tmp_path), "--json", "--debug")
    assert result.stderr.count("store query delegation") == 1  # one record serves the unit's tasks
    db = tmp_path / "state.db"
    conn = sqlite3.connect(db)
    conn.execute("DROP TABLE async_delegations")  # a Hermes without the ledger (0.18)
    conn.commit()
    conn.close()
    result = recover(db, "--json", "--debug")
    assert [t[1] for t in tasks(result)] == ["ended_unreported", "ended_unreported"]
    assert json.loads(result.stdout)["warnings"] == []
    assert "store: no usable async_delegations table; no outcome is proposed" in result.stderr


def test_a_task_without_a_delegation_id_ends_unreported_without_asking_the_store(
    fake: Family, tmp_path: Path
) -> None:
    fake.session(P)
    fake.spawn(
        P, "call_1", GOALS[:1], {"results": [{"task_index": 0, "status": "running", "child_session_id": A}]}
    )
    fake.session(A, parent=P)
    fake.end(A)
    result = recover(store(tmp_path, event=completed_event("completed", "completed")), "--json", "--debug")
    assert tasks(result) == [("1.1", "ended_unreported", True, "ended", None)]
    assert "store query delegation" not in result.stderr


def test_an_unreadable_child_is_undecided_not_ended(fake: Family, tmp_path: Path) -> None:
    dispatch(fake)
    fake.end(B)
    fake.missing.add(A)
    result = recover(store(tmp_path), "--json", "--debug")
    assert result.exit_code == 0
    assert tasks(result)[0] == ("1.1", "running", False, None, None)  # the store's proposal was not confirmed
    assert tasks(result)[1] == ("1.2", "ended_unreported", True, "ended", None)


def test_the_table_marks_a_store_outcome_and_an_unreported_end(fake: Family, tmp_path: Path) -> None:
    from hermes_task.cli.options import Environment
    from tests.support.cli_runner import ENVIRONMENT

    dispatch(fake)
    fake.end(A)
    fake.end(B)
    event = completed_event("completed")  # the record has task 1 only
    event["results"][0]["summary"] = "Found \x1b]52;c;ZXZpbA==\x07 3 markers"
    ENVIRONMENT.append(Environment(isatty=lambda stream: True))
    try:
        result = recover(store(tmp_path, event=event))
    finally:
        ENVIRONMENT.clear()
    lines = [line.rstrip() for line in result.stdout.splitlines()]
    assert lines[1].split()[:4] == ["1.1", "✓", "completed", "(store)"]
    assert lines[2].split()[:4] == ["1.2", "◌", "ended,", "unreported"]
    assert "\x1b]52" not in result.stdout
    assert "2 tasks · 2 terminal · finished (1 completed, 1 ended_unreported) · usage ≥?/? $?" in lines
    assert any(line.startswith("(store): the outcome Hermes holds for the parent") for line in lines)


# -- recover --watch ------------------------------------------------------------------------


def watch(db: Path, *args: str) -> Any:
    # --timeout: a watch that never notices the end stops (9) instead of polling forever
    return run(P, "--watch", "--exit-status", "--json", "--debug", "--timeout", "60", *args,
               env={"HERMES_TASK_STORE": str(db)})  # fmt: skip


def events(result: Any) -> list[dict[str, Any]]:
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_watch_notices_the_childs_end_without_a_parent_row_and_takes_the_stores_outcome(
    fake: Family, clock: Clock, tmp_path: Path
) -> None:
    dispatch(fake)
    db = store(tmp_path, event=completed_event("completed", "completed"))  # held by Hermes from the start

    clock.hooks[2] = fake.end_all  # while the watch sleeps after its 2nd cycle
    result = watch(db)
    assert result.exit_code == 0, result.stderr
    lines = events(result)
    assert [(e["type"], e.get("number"), e.get("status"), e.get("child_state")) for e in lines] == [
        ("task", "1.1", "running", "running"), ("task", "1.2", "running", "running"),
        ("task", "1.1", "completed", "ended"), ("task", "1.2", "completed", "ended"),
        ("result", None, None, None),
    ]  # fmt: skip
    assert lines[-1] == {
        "type": "result",
        "state": "ended",
        "end_reason": "completed",
        "exit_code": 0,
        "last_read_age": None,
        "unreported": [],
    }
    assert lines[2]["result_source"] == "store"
    assert clock.sleeps == [2.0, 2.0]  # the 3rd cycle, the first after the end, ends the watch
    for event in lines:
        validator("events").validate(event)
    # The history once, then each cycle: the parent (detail, page, fresh detail) and each running
    # child's newest segment (one detail); the first cycle's check takes the detail its store
    # proposal was confirmed with (one cycle's reads share their details: issue 29).
    per_child = [p for p in fake.paths_asked() if p in (f"/api/sessions/{A}", f"/api/sessions/{B}")]
    assert len(per_child) == 2 * 3
    # and, when the store proposes it, each child's goal row (its oldest row, over HTTP)
    assert len(fake.paths_asked()) == 3 * 3 + len(per_child) + 2


def test_watch_without_an_outcome_ends_one_cycle_later_with_8_and_names_the_tasks(
    fake: Family, clock: Clock, tmp_path: Path
) -> None:
    dispatch(fake)
    db = store(tmp_path)  # Hermes never recorded the outcome (its process died)
    clock.hooks[1] = fake.end_all
    result = watch(db)
    assert result.exit_code == 8
    lines = events(result)
    assert [(e.get("number"), e.get("status")) for e in lines[:-1]] == [
        ("1.1", "running"), ("1.2", "running"), ("1.1", "ended_unreported"), ("1.2", "ended_unreported")]  # fmt: skip
    assert lines[-1] == {"type": "result", "state": "ended", "end_reason": "unreported", "exit_code": 8,
                         "last_read_age": None, "unreported": ["1.1", "1.2"]}  # fmt: skip
    assert clock.sleeps == [2.0, 2.0]  # noticed in the 2nd cycle, confirmed by the 3rd


def test_watch_takes_a_completion_persisted_a_moment_after_the_end(
    fake: Family, clock: Clock, tmp_path: Path
) -> None:
    dispatch(fake)
    db = store(tmp_path)
    clock.hooks[1] = fake.end_all
    clock.hooks[2] = lambda: complete(db, completed_event("completed", "completed"))
    result = watch(db)
    assert result.exit_code == 0
    statuses = [(e.get("number"), e.get("status")) for e in events(result)[:-1]]
    assert statuses[2:] == [("1.1", "ended_unreported"), ("1.2", "ended_unreported"),
                            ("1.1", "completed"), ("1.2", "completed")]  # fmt: skip


def test_piped_watch_lines_and_the_ending_name_the_unreported_tasks(
    fake: Family, clock: Clock, tmp_path: Path
) -> None:
    dispatch(fake)
    clock.hooks[1] = lambda: fake.end(A)
    clock.hooks[2] = lambda: fake.end(B)
    result = run(
        P, "--watch", "--exit-status", "--timeout", "60", env={"HERMES_TASK_STORE": str(store(tmp_path))}
    )
    assert result.exit_code == 8
    assert [line.split("\t")[:2] for line in result.stdout.splitlines()] == [
        ["1.1", "running"], ["1.2", "running"], ["1.1", "ended_unreported"], ["1.2", "ended_unreported"]]  # fmt: skip
    assert result.stderr.splitlines()[-1] == (
        "every task ended (unreported) · 2 of 2 tasks terminal · ended unreported: 1.1, 1.2"
    )


def test_watch_checks_at_most_so_many_children_a_cycle_in_turn(
    fake: Family, clock: Clock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("hermes_task.reading.tasktree.MAX_CHECKS_PER_CYCLE", 1)  # the bound the watch passes
    dispatch(fake)
    fake.end(A)
    fake.end(B)
    result = watch(store(tmp_path))
    assert result.exit_code == 8
    checks = [line for line in result.stderr.splitlines() if line.startswith("debug: unreported: task")]
    assert [line.split(" child ")[0] for line in checks if " child " in line] == [
        "debug: unreported: task 1.1", "debug: unreported: task 1.2"]  # fmt: skip
    assert clock.sleeps == [2.0, 2.0]  # 1.1 in the 1st cycle, 1.2 in the 2nd, confirmed in the 3rd


def test_a_timeout_during_the_second_look_counts_the_unreported_end_as_not_completed(
    fake: Family, clock: Clock, tmp_path: Path
) -> None:
    dispatch(fake)
    clock.hooks[1] = fake.end_all
    result = run(
        P,
        "--watch",
        "--exit-status",
        "--json",
        "--timeout",
        "3",
        env={"HERMES_TASK_STORE": str(store(tmp_path))},
    )
    assert result.exit_code == 8  # not 9: nothing still runs, and no outcome is known
    # every task is terminal at the deadline: the watch ends by the verdict (issue 25 item 4)
    assert events(result)[-1] == {"type": "result", "state": "ended", "end_reason": "unreported", "exit_code": 8,
                                  "last_read_age": None, "unreported": ["1.1", "1.2"]}  # fmt: skip
    assert clock.sleeps == [2.0, 1.0]


def test_watch_reads_a_rotated_childs_root_once_then_only_its_proven_tip(
    fake: Family, clock: Clock, tmp_path: Path
) -> None:
    dispatch(fake)
    fake.end(A, "compression", at=1796056450.0)
    fake.put(A2, source="subagent", parent_session_id=A, model_config=CONFIG, started_at=1796056450.5,
             ended_at=None, end_reason=None, profile="default", is_default_profile=True)  # fmt: skip
    fake.end(B)
    db = store(tmp_path, event=completed_event("completed", "completed"), extra=[(A2, A)])
    clock.hooks[2] = lambda: fake.end(A2)
    result = watch(db)
    assert result.exit_code == 0
    assert [(e.get("number"), e.get("status"), e.get("child_state")) for e in events(result)[:-1]] == [
        ("1.1", "running", "running"), ("1.2", "completed", "ended"), ("1.1", "completed", "ended")]  # fmt: skip
    details = [p for p in fake.paths_asked() if not p.endswith(("/messages", "/latest-descendant"))]
    # A: the store's proposal confirmed, and that detail is the proof's (one cycle's reads share
    # their details: issue 29); A2: once a cycle
    assert (details.count(f"/api/sessions/{A}"), details.count(f"/api/sessions/{A2}")) == (1, 3)
