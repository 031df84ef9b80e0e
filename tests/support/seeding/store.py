"""Store scenarios (issue 13): P3's same-goal tasks, a childless synchronous task, an
orchestrator with a grandchild, a tool-source child rotated twice and a running child."""

from __future__ import annotations

from typing import Any

from tests.support.seeding.common import Agent, Msg
from tests.support.seeding.payloads import (
    assistant_call,
    dispatched_payload,
    new_delegation_id,
    result_entry,
    sync_note,
    tool_result,
)
from tests.support.seeding.seeder import Seeder, finish, tool_round

# Issue 13 (child ids and newer segments from the local store). Realistic chronology: every
# spawn call row is written before its children start; a synchronous task with no child of
# its own follows a background task with the same goal.

STORE_GOALS = {
    "same": "Lint the docs folder and list every broken link",
    "docs": "Check that the documentation site builds",
    "orch": "Prepare the release notes for version 2.0",
    "grand": "Collect the merged pull requests since 1.9",
    "tool2": "Rebuild the search index from scratch",
    "live": "Tail the deploy log and report every error",
}


def _store_child(
    s: Seeder, parent: Agent, goal: str, *, source: str | None = None, close: bool = True
) -> tuple[Agent, list[Msg]]:
    child = s.child(parent, 0, goal, 1, source=source)
    msgs: list[Msg] = [{"role": "user", "content": goal}]
    msgs += tool_round(0, "store", pad=False)
    if close:
        finish(s, child, msgs, f"Done: {goal.lower()}.")
    else:
        child._flush_messages_to_session_db(msgs)
    return child, msgs


def _bg_call(s: Seeder, parent: Agent, goal: str, **kw: Any) -> tuple[str, Agent, list[Msg]]:
    """A background delegate_task call, its child (started after the call row) and result."""
    call, call_id = assistant_call({"tasks": [{"goal": goal}]})
    s.append_dict(parent.session_id, call)
    child, msgs = _store_child(s, parent, goal, **kw)
    payload = dispatched_payload(s, [goal], new_delegation_id(), [child])
    s.append_dict(parent.session_id, tool_result(call_id, payload))
    return call_id, child, msgs


def seed_store_cases(s: Seeder, manifest: dict[str, Any]) -> None:
    """P3: two tasks with the same goal, a synchronous task without a child after a background
    task with its goal, an orchestrator child with its own delegated task, a tool-source child
    rotated twice, and a running child (rotated later by the ``rotate`` command)."""
    p3 = s.agent("cli")
    P3 = p3.session_id
    s.append(P3, "user", "Run the release chores in the background.")
    same_a, child_a, _ = _bg_call(s, p3, STORE_GOALS["same"])
    same_b, child_b, _ = _bg_call(s, p3, STORE_GOALS["same"])
    docs_call, child_docs, _ = _bg_call(s, p3, STORE_GOALS["docs"])
    # A synchronous call with the same goal whose child never started (an error before spawn).
    call, sync_call = assistant_call({"tasks": [{"goal": STORE_GOALS["docs"]}]})
    s.append_dict(P3, call)
    s.append_dict(
        P3,
        tool_result(
            sync_call,
            {
                "results": [result_entry(s, 0, "failed", "", 0, 0.1)],
                "total_duration_seconds": 0.1,
                "note": sync_note(s),
            },
        ),
    )
    # An orchestrator child that delegates a task of its own.
    call, orch_call = assistant_call({"tasks": [{"goal": STORE_GOALS["orch"]}]})
    s.append_dict(P3, call)
    orch = s.child(p3, 0, STORE_GOALS["orch"], 1)
    s.append_dict(
        P3,
        tool_result(orch_call, dispatched_payload(s, [STORE_GOALS["orch"]], new_delegation_id(), [orch])),
    )
    s.append(orch.session_id, "user", STORE_GOALS["orch"])
    call, grand_call = assistant_call({"tasks": [{"goal": STORE_GOALS["grand"]}]})
    s.append_dict(orch.session_id, call)
    grand, _ = _store_child(s, orch, STORE_GOALS["grand"])
    s.append_dict(
        orch.session_id,
        tool_result(grand_call, dispatched_payload(s, [STORE_GOALS["grand"]], new_delegation_id(), [grand])),
    )
    s.append(orch.session_id, "assistant", "The release notes are ready.")
    # A tool-source child rotated twice: root -> mid -> tip.
    call, tool2_call = assistant_call({"tasks": [{"goal": STORE_GOALS["tool2"]}]})
    s.append_dict(P3, call)
    tool_child = s.child(p3, 0, STORE_GOALS["tool2"], 1, source="tool")
    s.append_dict(
        P3,
        tool_result(
            tool2_call, dispatched_payload(s, [STORE_GOALS["tool2"]], new_delegation_id(), [tool_child])
        ),
    )
    segments = [tool_child.session_id]
    msgs: list[Msg] = [{"role": "user", "content": STORE_GOALS["tool2"]}]
    for label in ("idx1", "idx2"):
        for i in range(4):
            msgs += tool_round(i, label)
        tool_child._flush_messages_to_session_db(msgs)
        msgs = s.compact(tool_child, msgs, in_place=False)
        segments.append(tool_child.session_id)
    msgs += tool_round(0, "idxdone", pad=False)
    finish(s, tool_child, msgs, "The search index is rebuilt.")
    # A running child, rotated while followed (``rotate``).
    live_call, live, _ = _bg_call(s, p3, STORE_GOALS["live"], close=False)
    live._end_session_on_close = False
    manifest["store"] = {
        "parent": P3,
        "same": {"goal": STORE_GOALS["same"], "calls": [same_a, same_b], "children": [child_a.session_id, child_b.session_id]},
        "docs": {"goal": STORE_GOALS["docs"], "call": docs_call, "child": child_docs.session_id, "sync_call": sync_call},
        "orch": {"call": orch_call, "child": orch.session_id, "grand_call": grand_call, "grand": grand.session_id},
        "tool2": {"call": tool2_call, "segments": segments, "source": s.session(segments[0])["source"],
                  "tip_source": s.session(segments[-1])["source"]},
        "live": {"call": live_call, "id": live.session_id, "goal": STORE_GOALS["live"]},
    }  # fmt: skip
