"""Tool results and completion rows of ``delegate_task``, shaped the way each package builds them."""

from __future__ import annotations

import json
import time
import types
from typing import Any

from tests.support.seeding.common import GOALS, MODEL, Agent, Msg
from tests.support.seeding.seeder import Seeder, tool_call


def dispatched_payload(
    seeder: Seeder, goals: list[str], deleg_id: str, children: list[Agent]
) -> dict[str, Any]:
    """The tool result of a background delegate_task call, as each version builds it."""
    build = seeder.caps.dispatched_payload
    if build is not None:
        # The fields dispatched_payload reads from a tools.delegate_tool_dispatch._Batch.
        built = [(i, {"goal": g}, c) for i, (g, c) in enumerate(zip(goals, children, strict=True))]
        batch = types.SimpleNamespace(
            task_list=[{"goal": g} for g in goals],
            live_deleg_id=deleg_id,
            children=built,
            live_paths=[],
            group=None,
        )
        built_payload: dict[str, Any] = build(batch, [(batch, deleg_id)])
        return built_payload
    # hermes-agent 0.18/0.19 and upstream 0.20 build this dict inline in
    # tools/delegate_tool.py::delegate_task; 0.20 adds the children's ids and a control hint.
    n = len(goals)
    note = (
        "Subagent is running in the background. You and the user can keep working; its full "
        "result re-enters the conversation as a new message when it finishes. Do not wait or "
        "poll — just continue."
        if n == 1
        else f"{n} subagents are running in parallel in the background. You and the user can keep "
        f"working; they wait on each other and their consolidated results re-enter the "
        f"conversation as a single message once ALL of them finish. Do not wait or poll — just "
        f"continue."
    )
    payload: dict[str, Any] = {
        "status": "dispatched",
        "mode": "background",
        "count": n,
        "delegation_id": deleg_id,
        "goals": goals,
        "note": note,
    }
    sids = [getattr(c, "_subagent_id", None) for c in children]
    if seeder.caps.control_hint and any(isinstance(sid, str) and sid for sid in sids):
        payload["subagent_ids"] = sids
        payload["control_hint"] = seeder.caps.control_hint
    return payload


def result_entry(
    seeder: Seeder, task_index: int, status: str, summary: str, api_calls: int, duration: float
) -> dict[str, Any]:
    """One entry of a synchronous ``{"results": [...]}`` payload (shape per version)."""
    entry: dict[str, Any] = {
        "task_index": task_index,
        "status": status,
        "summary": summary,
        "api_calls": api_calls,
        "duration_seconds": duration,
        "model": MODEL,
        "exit_reason": "completed",
    }
    if seeder.caps.entry_truncated:
        entry["truncated"] = False
    entry["tokens"] = {"input": 1200 + 100 * task_index, "output": 90}
    entry["tool_trace"] = [
        {
            "tool": "terminal",
            "args_bytes": 38,
            "result_bytes": 52,
            "status": "ok" if status == "completed" else "error",
        }
    ]
    if seeder.caps.entry_cost:
        entry["cost_usd"] = 0.0
        entry["cost_status"] = "unknown"
    if status == "failed":
        entry["error"] = "Subagent did not produce a response."
    return entry


def sync_note(seeder: Seeder) -> str:
    return seeder.caps.sync_note


def completion_row(seeder: Seeder, event: dict[str, Any]) -> Msg:
    """The parent's user row written when a background unit finishes."""
    row = {"role": "user", "content": seeder.caps.format_completion(event)}
    if seeder.caps.completion_metadata is not None:
        row["display_kind"] = "async_delegation_complete"
        row["display_metadata"] = seeder.caps.completion_metadata(event)
    return row


def c1_c2_completion(seeder: Seeder, delegation_id: str, dispatched_at: float, parent_id: str) -> Msg:
    """The async completion row of the background batch that delegated c1 and c2: both
    completed (the parent P's, and the demo's)."""
    results = [
        result_entry(seeder, 0, "completed", "Found 3 TODO markers in 2 files.", 9, 8.4),
        result_entry(seeder, 1, "completed", "The build passes.", 5, 6.1),
    ]
    event = {
        "type": "async_delegation",
        "delegation_id": delegation_id,
        "is_batch": True,
        "goals": [GOALS["c1"], GOALS["c2"]],
        "results": results,
        "dispatched_at": dispatched_at,
        "completed_at": time.time(),
        "total_duration_seconds": 9.1,
        "model": MODEL,
        "role": "leaf",
        "parent_session_id": parent_id,
    }
    return completion_row(seeder, event)


def new_delegation_id() -> str:
    from tools.async_delegation import _new_delegation_id as new_id

    delegation_id: str = new_id()
    return delegation_id


def assistant_call(args: dict[str, Any]) -> tuple[Msg, str]:
    call = tool_call("delegate_task", args)
    return {"role": "assistant", "content": "", "tool_calls": [call], "finish_reason": "tool_calls"}, call[
        "id"
    ]


def tool_result(call_id: str, payload: Any) -> Msg:
    content = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
    return {"role": "tool", "tool_call_id": call_id, "tool_name": "delegate_task", "content": content}
