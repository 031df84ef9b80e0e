"""Hermes' `async_delegations` record: read read-only by exact id (store/sqlite_reader.py), and
what it proposes for one task's outcome (core/delegations.py): only a terminal per-task status of
the task's own delegation, parent and goal, sanitised."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from hermes_task.core.delegations import LedgerRecord, Proposal, TaskResult, propose
from hermes_task.core.ui_strings import TaskStatus
from hermes_task.store.sqlite_reader import Store
from tests.unit.conftest import SCHEMA
from tests.unit.test_store import unchanged

P = "20261201_100000_aaaaaa"
DELEG = "deleg_1f2d7b00"
GOALS = ["Count TODO markers", "Check the build"]

# The table as hermes-agent 0.19.0 creates it (tools/async_delegation.py `_connect`).
LEDGER = """
CREATE TABLE async_delegations (delegation_id TEXT PRIMARY KEY, origin_session TEXT NOT NULL,
  origin_ui_session_id TEXT NOT NULL DEFAULT '', parent_session_id TEXT, state TEXT NOT NULL,
  dispatched_at REAL NOT NULL, completed_at REAL, updated_at REAL NOT NULL, event_json TEXT,
  result_json TEXT, delivery_state TEXT NOT NULL DEFAULT 'pending', delivery_attempts INTEGER
  NOT NULL DEFAULT 0, delivered_at REAL, owner_pid INTEGER, owner_started_at INTEGER,
  task_json TEXT, delivery_claim TEXT, delivery_claimed_at REAL);
"""


def entry(index: int, status: str, **extra: Any) -> dict[str, Any]:
    return {"task_index": index, "status": status, "summary": f"Task {index + 1} done.", "api_calls": 3,
            "duration_seconds": 4.2, "model": "study-model", "exit_reason": "completed", **extra}  # fmt: skip


def batch_event(*results: dict[str, Any], status: str = "completed", **extra: Any) -> dict[str, Any]:
    return {"type": "async_delegation", "delegation_id": DELEG, "parent_session_id": P, "goals": GOALS,
            "goal": "2 parallel subagents: Count TODO markers; Check the build", "status": status,
            "is_batch": True, "results": list(results), **extra}  # fmt: skip


def record(
    event: dict[str, Any] | None = None, result: dict[str, Any] | None = None, **cols: Any
) -> LedgerRecord:
    fields: dict[str, Any] = {"delegation_id": DELEG, "parent_session_id": P, "state": "completed",
                              "event_json": None if event is None else json.dumps(event),
                              "result_json": None if result is None else json.dumps(result),
                              "delivery_state": "pending", **cols}  # fmt: skip
    return LedgerRecord(**fields)


def ask(rec: LedgerRecord, index: int = 0, goal: str | None = GOALS[0], **kw: Any) -> Proposal | None:
    args: dict[str, Any] = {"delegation_id": DELEG, "segments": frozenset({P}), **kw}
    return propose(rec, task_index=index, goal=goal, **args)


# -- propose ------------------------------------------------------------------------------


def test_a_batch_completion_proposes_each_tasks_own_status_and_result() -> None:
    rec = record(batch_event(entry(0, "completed"), entry(1, "failed", error="boom", summary="")))
    first, second = ask(rec, 0), ask(rec, 1, GOALS[1])
    assert first == Proposal(
        status=TaskStatus.completed,
        result=TaskResult(summary="Task 1 done.", duration_seconds=4.2, exit_reason="completed", api_calls=3,
                          model="study-model"),
        delivery_state="pending",
    )  # fmt: skip
    assert second is not None
    assert (second.status, second.result.error, second.result.summary) == ("failed", "boom", None)


def test_entries_are_matched_by_task_index_not_position() -> None:
    rec = record(batch_event(entry(1, "failed"), entry(0, "completed")))
    found = ask(rec, 0)
    assert found is not None
    assert found.status == "completed"


def test_entries_without_a_task_index_are_taken_by_position() -> None:
    rec = record(batch_event({"status": "failed", "error": "boom"}, {"status": "completed"}))
    found = [ask(rec, 0), ask(rec, 1, GOALS[1])]
    assert [p.status if p else None for p in found] == ["failed", "completed"]
    assert ask(rec, 2, None) is None


def test_nothing_is_proposed_for_a_task_the_record_has_no_terminal_outcome_for() -> None:
    assert ask(record(state="running")) is None  # dispatched, nothing recorded yet
    assert ask(record(batch_event(entry(0, "completed"))), 1, GOALS[1]) is None  # no entry for task 2
    for status in ("unknown", "running", "queued", "success", None):  # not a recognised terminal status
        assert (
            ask(record(batch_event(entry(0, "completed"), {"task_index": 1, "status": status})), 1, GOALS[1])
            is None
        )
    assert ask(record(event_json="{not json", result_json="[1, 2]")) is None


def test_another_delegation_parent_or_goal_proposes_nothing() -> None:
    rec = record(batch_event(entry(0, "completed")))
    assert ask(rec, delegation_id="deleg_00000000") is None
    assert ask(rec, segments=frozenset({"20261201_090000_ffffff"})) is None
    assert ask(rec, goal="Delete the repository") is None
    assert ask(rec, goal="  Count   TODO\nmarkers ") is not None  # whitespace-normalised
    assert ask(record(batch_event(entry(0, "completed")), parent_session_id=None)) is not None
    short = batch_event(entry(0, "completed"), entry(1, "completed"), goals=GOALS[:1])  # no goal for task 2
    assert ask(record(short), 1, GOALS[1]) is not None  # the unit's label is no task's goal


def test_the_completion_event_is_read_before_the_runners_result() -> None:
    rec = record(batch_event(entry(0, "failed")), {"results": [entry(0, "completed")]})
    found = ask(rec)
    assert found is not None
    assert found.status == "failed"
    # iot: a still-running unit records each finished child's result in result_json
    partial = record(None, {"results": [entry(0, "completed")], "partial": True}, state="running")
    found = ask(partial)
    assert found is not None
    assert found.status == "completed"


def test_a_single_task_unit_and_a_crashed_batch() -> None:
    single = {"type": "async_delegation", "delegation_id": DELEG, "goal": GOALS[0], "status": "timeout",
              "summary": None, "error": "Timed out after 600s", "api_calls": 12}  # fmt: skip
    found = ask(record(single))
    assert found is not None
    assert (found.status, found.result.error, found.result.api_calls) == (
        "timeout",
        "Timed out after 600s",
        12,
    )
    assert ask(record(single), 1, None) is None  # a single unit is one task
    assert ask(record(single), 0, "Check the build") is None  # its own goal must agree
    partial = batch_event(entry(0, "failed"), status="error", error="1 of 2 children crashed")
    assert ask(record(partial), 1, GOALS[1]) is None  # results exist, none for this task: not a crash
    crashed = batch_event(status="error", error="RuntimeError: pool died")
    found = ask(record(crashed), 1, GOALS[1])
    assert found is not None
    assert (found.status, found.result.error) == ("error", "RuntimeError: pool died")


def test_hostile_text_is_sanitised_and_an_odd_delivery_state_is_dropped() -> None:
    rec = record(batch_event(entry(0, "completed", summary="ok \x1b]52;c;ZXZpbA==\x07 \x9b31m")),
                 delivery_state="pending\x1b[2J")  # fmt: skip
    found = ask(rec)
    assert found is not None
    assert "\x1b" not in (found.result.summary or "")
    assert "\x9b" not in (found.result.summary or "")
    assert found.delivery_state is None


# -- the store ----------------------------------------------------------------------------


def store_with_ledger(path: Path, ddl: str = LEDGER, rows: list[tuple[Any, ...]] | None = None) -> None:
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA + ddl)
    for row in rows or []:
        conn.execute(
            "INSERT INTO async_delegations (delegation_id, origin_session, parent_session_id, state,"
            " dispatched_at, updated_at, event_json, result_json, delivery_state) VALUES (?,?,?,?,?,?,?,?,?)",
            row,
        )
    conn.commit()
    conn.close()


def test_the_store_reads_one_record_by_exact_id_without_touching_anything(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    event = json.dumps(batch_event(entry(0, "completed")))
    store_with_ledger(db, rows=[(DELEG, "", P, "completed", 1.0, 2.0, event, "{}", "pending"),
                                ("deleg_2f2d7b00", "", P, "running", 1.0, 1.0, None, None, "pending")])  # fmt: skip
    lines: list[str] = []
    with unchanged(tmp_path, "state.db"):
        store = Store(db, debug=lines.append)
        assert store.delegation(DELEG) == LedgerRecord(
            delegation_id=DELEG, parent_session_id=P, state="completed", event_json=event, result_json="{}",
            delivery_state="pending",
        )  # fmt: skip
        assert store.delegation("deleg_2f2d7b0") is None  # a prefix is not an id
        assert store.delegation("deleg_ffffffff") is None
        store.close()
    text = "\n".join(lines)
    assert DELEG not in text
    assert "TODO" not in text
    assert sum("store query delegation" in line for line in lines) == 3


@pytest.mark.parametrize(
    "ddl",
    ["", LEDGER.replace(" delivery_state TEXT NOT NULL DEFAULT 'pending',", ""),
     LEDGER.replace("delegation_id TEXT PRIMARY KEY", "delegation_id TEXT")],
    ids=["no_table", "no_column", "no_key"],
)  # fmt: skip
def test_a_store_without_a_usable_ledger_has_no_record_and_stays_usable(tmp_path: Path, ddl: str) -> None:
    db = tmp_path / "state.db"
    store_with_ledger(db, ddl)
    lines: list[str] = []
    store = Store(db, debug=lines.append)
    assert store.delegation(DELEG) is None
    assert store.delegation(DELEG) is None
    assert store.children(P) == []  # a Hermes without the ledger (0.18) is no store failure
    store.close()
    assert lines.count("store: no usable async_delegations table; no outcome is proposed") == 1
