"""Big orchestrations (issue 29): a parent that fans out hundreds of tasks, seeded in seconds.

``fan_out`` is ``watch.watch_parent`` at scale: a ``cli`` parent whose ``delegate_task`` call
dispatched its goals as one background unit, written by the package (the call row, the
package's own dispatch payload, each child's goal as its first row). Building a child through
``delegate_task``'s builder constructs a whole ``AIAgent`` (about a second each), so only the
first child is built that way; every other child's row is written by the very call the built
agent's ``_ensure_db_session`` makes -- ``SessionDB.create_session(session_id, source, model,
model_config, parent_session_id)`` -- with the first child's stored source, model and model
config (``_delegate_from`` naming the parent), an id in Hermes' session-id format and a
subagent id in the builder's format (``sa-{index}-{hex8}``). Options:

- ``finished``: every child answers and is ended ``agent_close`` (``SessionDB.end_session``),
  and the parent gets the package's own completion row, every task completed;
- ``nested``: each child in turn dispatched ``nested`` goals of its own (a tree: its delegate
  call and dispatch payload rows after its goal), its children written the same way
  (``_delegate_from`` naming that child); they stay running.

``writer`` (for the follow latency benchmark) appends one assistant row per stdin line
``SESSION_ID TEXT`` through ``SessionDB.append_message`` and prints ``{"id", "at"}`` once it is
committed (``at``: ``time.time()``), until stdin closes.
"""

from __future__ import annotations

import json
import sys
import time
import uuid
from collections.abc import Callable
from datetime import datetime
from typing import Any

from tests.support.seeding.payloads import (
    assistant_call,
    completion_row,
    dispatched_payload,
    new_delegation_id,
    result_entry,
    tool_result,
)
from tests.support.seeding.seeder import Seeder


def _session_id() -> str:
    """A new id in Hermes' format (second resolution plus six hex digits)."""
    return f"{datetime.now().strftime('%Y%m%d_%H%M%S')}_{uuid.uuid4().hex[:6]}"


class _Written:
    """A child whose row was written without building an agent: what the payload builders read."""

    def __init__(self, session_id: str, index: int) -> None:
        self.session_id = session_id
        self._subagent_id = f"sa-{index}-{uuid.uuid4().hex[:8]}"


def _children(
    s: Seeder, parent_id: str, goals: list[str], template: dict[str, Any], *, start: int = 0
) -> list[Any]:
    """The rows of `goals`' children of `parent_id` (task indexes from `start`), as
    `_ensure_db_session` writes them."""
    config = json.loads(template["model_config"]) if template.get("model_config") else {}
    config["_delegate_from"] = parent_id
    out = []
    for i in range(start, start + len(goals)):
        sid = _session_id()
        s.db.create_session(
            session_id=sid,
            source=template["source"],
            model=template.get("model"),
            model_config=config,
            parent_session_id=parent_id,
        )
        out.append(_Written(sid, i))
    return out


def _dispatch(
    s: Seeder, parent_id: str, goals: list[str], build: Callable[[], list[Any]]
) -> tuple[str, list[Any]]:
    """The parent's delegate_task call, then its children (`build`: every spawn call row is
    written before its children start), then the dispatch payload and each child's goal row."""
    call, call_id = assistant_call({"tasks": [{"goal": g} for g in goals]})
    s.append_dict(parent_id, call)
    children = build()
    deleg = new_delegation_id()
    s.append_dict(parent_id, tool_result(call_id, dispatched_payload(s, goals, deleg, children)))
    for child, goal in zip(children, goals, strict=True):
        s.append(child.session_id, "user", goal)
    return deleg, children


def fan_out(goals: list[str], *, finished: bool = False, nested: int = 0) -> dict[str, Any]:
    """A parent that dispatched `goals` in one background unit (module docstring)."""
    s = Seeder()
    parent = s.agent("cli")
    P = parent.session_id
    s.append(P, "user", "Run every shard of the suite in the background.")
    template: dict[str, Any] = {}

    def build() -> list[Any]:
        first = s.child(parent, 0, goals[0], len(goals))
        template.update(s.session(first.session_id))
        return [first, *_children(s, P, goals[1:], template, start=1)]

    dispatched_at = time.time()
    deleg, children = _dispatch(s, P, goals, build)
    manifest: dict[str, Any] = {
        "parent": P,
        "delegation_id": deleg,
        "goals": goals,
        "children": [c.session_id for c in children],
        "dispatched_at": dispatched_at,
    }
    if nested:
        manifest["grandchildren"] = {}
        for child, goal in zip(children, goals, strict=True):
            sub = [f"Part {j + 1} of: {goal}" for j in range(nested)]

            def grand(sid: str = child.session_id, wanted: list[str] = sub) -> list[Any]:
                return _children(s, sid, wanted, template)

            _, kids = _dispatch(s, child.session_id, sub, grand)
            manifest["grandchildren"][child.session_id] = [k.session_id for k in kids]
    if finished:
        for child, goal in zip(children, goals, strict=True):
            s.append(child.session_id, "assistant", f"Finished: {goal.lower()}.", finish_reason="stop")
            s.db.end_session(child.session_id, "agent_close")
        results = [
            result_entry(s, i, "completed", f"Task {i + 1} finished.", 3, 4.2) for i in range(len(goals))
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
            "model": template.get("model"),
            "role": "leaf",
            "parent_session_id": P,
        }
        s.append_dict(P, completion_row(s, event))
    return manifest


def writer() -> None:
    """Append one row per stdin line `SESSION_ID TEXT`; print `{"id", "at"}` once committed."""
    s = Seeder()
    out = sys.__stdout__
    assert out is not None
    for line in sys.stdin:
        sid, _, text = line.rstrip("\n").partition(" ")
        if not sid:
            continue
        row_id = s.append(sid, "assistant", text)
        out.write(json.dumps({"id": row_id, "at": time.time()}) + "\n")
        out.flush()


__all__ = ["fan_out", "writer"]
