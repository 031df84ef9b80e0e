"""A background unit whose completion Hermes holds but has not delivered (issue 25, item 5).

``held_unit`` is ``watch.watch_parent`` (a parent that dispatched its goals as one background
unit, children built the way delegate_task builds them) plus the record Hermes writes at that
moment, through its own ``tools.async_delegation._persist_dispatch`` (state ``running``).
``finish_held`` closes every child (a final answer, then ``SessionDB.end_session(...,
'agent_close')``) and, when given statuses, records the unit's completion through
``_persist_completion`` (``delivery_state='pending'``) -- and writes nothing to the parent: the
parent agent was busy or gone, so its transcript still shows only ``{"status": "dispatched"}``.
Where the package has no durable ledger (0.18 keeps its units in memory), no record is written
and the result says ``ledger: false``.
"""

from __future__ import annotations

import time
from typing import Any

from tests.support.seeding import watch
from tests.support.seeding.common import MODEL
from tests.support.seeding.payloads import result_entry
from tests.support.seeding.seeder import Seeder


def _unit_record(parent: str, deleg: str, goals: list[str], dispatched_at: float) -> dict[str, Any]:
    """The in-memory record ``dispatch_async_delegation_batch`` builds (the keys every version reads)."""
    label = (
        goals[0]
        if len(goals) == 1
        else f"{len(goals)} parallel subagents: " + "; ".join(g[:40] for g in goals)
    )
    return {
        "delegation_id": deleg,
        "goal": label,
        "goals": list(goals),
        "context": None,
        "toolsets": None,
        "role": "leaf",
        "model": MODEL,
        "session_key": "",
        "origin_ui_session_id": "",
        "parent_session_id": parent,
        "status": "running",
        "dispatched_at": dispatched_at,
        "completed_at": None,
        "is_batch": True,
    }


def held_unit(goals: list[str]) -> dict[str, Any]:
    """A parent whose background unit of *goals* is running, recorded in the ledger."""
    unit = watch.watch_parent(goals)
    s = Seeder()
    persist = s.caps.persist_dispatch
    if persist is not None and s.caps.persist_completion is not None:
        persist(_unit_record(unit["parent"], unit["delegation_id"], goals, unit["dispatched_at"]))
    unit["ledger"] = s.caps.summary()["ledger"]
    return unit


def finish_held(
    parent: str,
    deleg: str,
    goals: list[str],
    children: list[str],
    dispatched_at: float,
    statuses: list[str] | None,
) -> dict[str, Any]:
    """Every child answers and closes; with *statuses*, Hermes records the unit's completion
    for the parent (never delivered: nothing is written to the parent's transcript)."""
    s = Seeder()
    for child, goal in zip(children, goals, strict=True):
        s.session(child)
        s.append(child, "assistant", f"Finished: {goal.lower()}.", finish_reason="stop")
        s.db.end_session(child, "agent_close")
    persist = s.caps.persist_completion
    recorded = statuses is not None and persist is not None and s.caps.persist_dispatch is not None
    if recorded:
        assert statuses is not None
        results = [
            result_entry(s, i, status, f"Task {i + 1} finished." if status == "completed" else "", 3, 4.2)
            for i, status in enumerate(statuses)
        ]
        failed = all(status not in ("completed", "success") for status in statuses)
        event = {
            **_unit_record(parent, deleg, goals, dispatched_at),
            "type": "async_delegation",
            "status": "error" if failed else "completed",
            "results": results,
            "live_transcripts": None,
            "error": None,
            "total_duration_seconds": 4.4,
            "completed_at": time.time(),
        }
        persist(event, {"results": results, "total_duration_seconds": 4.4})
    return {"parent": parent, "children": children, "completion": recorded}
