"""A background unit that has not completed yet, its completion row, and the demo's home."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from tests.support.seeding import segments
from tests.support.seeding.common import GOALS, MODEL
from tests.support.seeding.payloads import (
    assistant_call,
    c1_c2_completion,
    completion_row,
    dispatched_payload,
    new_delegation_id,
    result_entry,
    tool_result,
)
from tests.support.seeding.seeder import Seeder


def watch_parent(goals: list[str]) -> dict[str, Any]:
    """A fresh parent chat that dispatched *goals* as one background unit (children built the
    way delegate_task builds them); nothing has completed yet (for ``recover --watch``)."""
    s = Seeder()
    parent = s.agent("cli")
    P = parent.session_id
    s.append(P, "user", "Run these checks in the background.")
    call, call_id = assistant_call({"tasks": [{"goal": g} for g in goals]})
    s.append_dict(P, call)
    deleg = new_delegation_id()
    children = [s.child(parent, i, g, len(goals)) for i, g in enumerate(goals)]
    s.append_dict(P, tool_result(call_id, dispatched_payload(s, goals, deleg, children)))
    for child, goal in zip(children, goals, strict=True):  # a child's first row is its goal
        s.append(child.session_id, "user", goal)
    return {
        "parent": P,
        "delegation_id": deleg,
        "goals": goals,
        "children": [c.session_id for c in children],
        "dispatched_at": time.time(),
    }


def complete_unit(
    parent: str, deleg: str, goals: list[str], statuses: list[str], dispatched_at: float
) -> dict[str, Any]:
    """The parent's completion row for background unit *deleg*, written by the package's own
    formatter (``[ASYNC DELEGATION BATCH COMPLETE — …]``; iot adds display metadata)."""
    s = Seeder()
    s.session(parent)
    results = [
        result_entry(s, i, status, f"Task {i + 1} finished." if status == "completed" else "", 3, 4.2)
        for i, status in enumerate(statuses)
    ]
    event = {
        "type": "async_delegation",
        "delegation_id": deleg,
        "is_batch": True,
        "goals": goals,
        "results": results,
        "dispatched_at": dispatched_at,
        "completed_at": time.time(),
        "total_duration_seconds": 4.4,
        "model": MODEL,
        "role": "leaf",
        "parent_session_id": parent,
    }
    s.append_dict(parent, completion_row(s, event))
    return {"parent": parent, "rows": s.counts(parent)["active"]}


def seed_demo(out: Path, watch_goals: list[str]) -> dict[str, Any]:
    """The demo's home in one process (tools/demo.py): a parent whose unit of *watch_goals* is
    still running (``watch_parent``), then a parent chat whose background unit ran two tasks
    (c1 rotated twice, c2 compacted then rotated; completion row written)."""
    s = Seeder()
    # The still-running chat first: the finished one delegated last, so `parents` lists it
    # first, and the demo takes it from there.
    manifest: dict[str, Any] = {"watch": watch_parent(watch_goals)}
    parent = s.agent("cli")
    P = parent.session_id
    manifest["parent"] = P
    s.append(P, "user", "Count the TODO markers and check the build, in the background.")
    call, bg_call = assistant_call({"tasks": [{"goal": GOALS["c1"]}, {"goal": GOALS["c2"]}]})
    s.append_dict(P, call)
    dispatched_at = time.time()
    deleg = new_delegation_id()
    c1 = s.child(parent, 0, GOALS["c1"], 2)
    c2 = s.child(parent, 1, GOALS["c2"], 2, source="tool")
    s.append_dict(P, tool_result(bg_call, dispatched_payload(s, [GOALS["c1"], GOALS["c2"]], deleg, [c1, c2])))
    segments.seed_c1(s, c1, manifest, "Skip tests/ when counting.")
    segments.seed_c2(s, c2, manifest)
    s.append_dict(P, c1_c2_completion(s, deleg, dispatched_at, P))
    s.append(P, "assistant", "Both background tasks finished: 3 TODO markers, build passes.")
    out.write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    return manifest
