"""Rotation and compaction: the children whose task spans several segments (c1, c2, c3,
``other``) and the plain rotated chat."""

from __future__ import annotations

import json
from typing import Any

from tests.support.seeding.common import GOALS, Agent, Msg, SeedError
from tests.support.seeding.payloads import assistant_call, dispatched_payload, new_delegation_id, tool_result
from tests.support.seeding.seeder import Seeder, finish, tool_call, tool_round


def seed_c1(s: Seeder, child: Agent, manifest: dict[str, Any], steer_text: str) -> None:
    """Delegated child rotated twice: root -> mid -> tip, tip ended agent_close."""
    root = child.session_id
    msgs: list[Msg] = [{"role": "user", "content": GOALS["c1"]}]
    for i in range(4):
        msgs += tool_round(i, "c1root")
    child._flush_messages_to_session_db(msgs)
    msgs = s.compact(child, msgs, in_place=False)
    mid = child.session_id
    for i in range(4):
        msgs += tool_round(i, "c1mid")
    child._flush_messages_to_session_db(msgs)
    msgs = s.compact(child, msgs, in_place=False)
    tip = child.session_id
    tail = tool_round(0, "c1tip", pad=False)
    if s.caps.steer_user_row is not None:
        msgs += [*tail, s.caps.steer_user_row(steer_text)]
    else:
        tail[1]["content"] += s.caps.format_steer_marker(steer_text)
        msgs += tail
    msgs.append(
        {
            "role": "assistant",
            "content": "",
            "reasoning": "All files scanned.",
            "codex_message_items": [
                {
                    "type": "message",
                    "role": "assistant",
                    "phase": "commentary",
                    "content": [{"type": "output_text", "text": "Scanning the last file now."}],
                }
            ],
            "tool_calls": [tool_call("terminal", {"command": "grep -rn TODO src/ --exclude-dir=tests"})],
        }
    )
    msgs.append(
        {
            "role": "tool",
            "tool_call_id": msgs[-1]["tool_calls"][0]["id"],
            "tool_name": "terminal",
            "content": json.dumps(
                {"output": "src/a.py:3: TODO\nsrc/a.py:9: TODO\nsrc/b.py:1: TODO", "exit_code": 0}
            ),
        }
    )
    finish(s, child, msgs, "Found 3 TODO markers in 2 files: src/a.py (2), src/b.py (1).")
    for sid, reason in ((root, "compression"), (mid, "compression"), (tip, "agent_close")):
        if s.session(sid)["end_reason"] != reason:
            raise SeedError(f"c1 segment {sid} has end_reason {s.session(sid)['end_reason']!r}")
    manifest["c1"] = {
        "root": root,
        "mid": mid,
        "tip": tip,
        "goal": GOALS["c1"],
        "subagent_id": getattr(child, "_subagent_id", None),
        "rows_per_segment": {
            k: s.counts(v)["active"] for k, v in (("root", root), ("mid", mid), ("tip", tip))
        },
        "steer_text": steer_text,
    }


def seed_c2(s: Seeder, child: Agent, manifest: dict[str, Any]) -> None:
    """``tool``-source child: compacted in place, then rotated once, tip ended."""
    root = child.session_id
    msgs: list[Msg] = [{"role": "user", "content": GOALS["c2"]}]
    for i in range(4):
        msgs += tool_round(i, "c2build")
    child._flush_messages_to_session_db(msgs)
    compacted = s.compact(child, msgs, in_place=True)
    msgs = list(compacted)
    for i in range(4):
        msgs += tool_round(i, "c2test")
    # Like the agent loop, the next turn's flush gets the compacted list as its history, so only
    # the new rows are appended (0.19.0 skips history dicts by identity).
    child._flush_messages_to_session_db(msgs, compacted)
    msgs = s.compact(child, msgs, in_place=False)
    tip = child.session_id
    msgs += tool_round(0, "c2final", pad=False)
    finish(s, child, msgs, "The build passes (0 errors, 2 warnings).")
    if s.counts(root)["archived"] == 0:
        raise SeedError("c2 root has no archived rows after in-place compaction")
    manifest["c2"] = {
        "root": root,
        "tip": tip,
        "goal": GOALS["c2"],
        "subagent_id": getattr(child, "_subagent_id", None),
        "source": s.session(root)["source"],
        "tip_source": s.session(tip)["source"],
        "archived_rows": s.counts(root)["archived"],
        "active_rows": s.counts(root)["active"],
        "tip_rows": s.counts(tip)["active"],
    }


def seed_plain(s: Seeder, manifest: dict[str, Any]) -> None:
    """A plain cli chat rotated once: the non-delegated control case."""
    chat = s.agent("cli")
    root = chat.session_id
    msgs: list[Msg] = [{"role": "user", "content": "Please look through the logs for errors."}]
    for i in range(4):
        msgs += tool_round(i, "logs")
    chat._flush_messages_to_session_db(msgs)
    msgs = s.compact(chat, msgs, in_place=False)
    tip = chat.session_id
    msgs.append({"role": "user", "content": "Anything serious?"})
    finish(s, chat, msgs, "No serious errors; two warnings about disk space.")
    manifest["plain"] = {
        "root": root,
        "tip": tip,
        "rows": {"root": s.counts(root)["active"], "tip": s.counts(tip)["active"]},
    }


def seed_other(s: Seeder, manifest: dict[str, Any]) -> None:
    """A second parent P2 with its own delegated child rotated once."""
    p2 = s.agent("cli")
    P2 = p2.session_id
    s.append(P2, "user", "Inventory the docs folder in the background.")
    call, call_id = assistant_call({"tasks": [{"goal": GOALS["other"]}]})
    s.append_dict(P2, call)
    child = s.child(p2, 0, GOALS["other"], 1)
    s.append_dict(
        P2, tool_result(call_id, dispatched_payload(s, [GOALS["other"]], new_delegation_id(), [child]))
    )
    root = child.session_id
    msgs: list[Msg] = [{"role": "user", "content": GOALS["other"]}]
    for i in range(4):
        msgs += tool_round(i, "docs")
    child._flush_messages_to_session_db(msgs)
    msgs = s.compact(child, msgs, in_place=False)
    tip = child.session_id
    finish(s, child, msgs, "docs/ holds 12 pages.")
    manifest["other"] = {"parent": P2, "root": root, "tip": tip, "goal": GOALS["other"]}


def seed_c3(s: Seeder, manifest: dict[str, Any]) -> None:
    """A third parent P3 with a `tool`-source child rotated twice (root -> mid -> tip); the
    mid segment holds 40 more rows than its handoff carries, so the newest 50 rows of the
    task span tip and mid."""
    p3 = s.agent("cli")
    P3 = p3.session_id
    s.append(P3, "user", "Trace the import cycles in the background.")
    call, call_id = assistant_call({"tasks": [{"goal": GOALS["c3"]}]})
    s.append_dict(P3, call)
    child = s.child(p3, 0, GOALS["c3"], 1, source="tool")
    s.append_dict(
        P3, tool_result(call_id, dispatched_payload(s, [GOALS["c3"]], new_delegation_id(), [child]))
    )
    root = child.session_id
    msgs: list[Msg] = [{"role": "user", "content": GOALS["c3"]}]
    for i in range(4):
        msgs += tool_round(i, "c3root")
    child._flush_messages_to_session_db(msgs)
    msgs = s.compact(child, msgs, in_place=False)
    mid = child.session_id
    for i in range(4):
        msgs += tool_round(i, "c3mid")
    child._flush_messages_to_session_db(msgs)
    # 40 more rows stored in mid only (as a long tool loop leaves them) and not carried into
    # the tip's handoff, so mid stays much larger than the tip.
    for i in range(20):
        call = tool_call("terminal", {"command": f"python -m cycles src/pkg_{i}"})
        s.append(mid, "assistant", f"Checking package {i}.", tool_calls=[call], finish_reason="tool_calls")
        output = json.dumps({"output": f"pkg_{i}: no cycle", "exit_code": 0})
        s.append(mid, "tool", output, tool_call_id=call["id"], tool_name="terminal")
    msgs = s.compact(child, msgs, in_place=False)
    tip = child.session_id
    msgs += tool_round(0, "c3tip", pad=False)
    finish(s, child, msgs, "2 import cycles: a -> b -> a, c -> d -> c.")
    for sid, reason in ((root, "compression"), (mid, "compression"), (tip, "agent_close")):
        if s.session(sid)["end_reason"] != reason:
            raise SeedError(f"c3 segment {sid} has end_reason {s.session(sid)['end_reason']!r}")
    manifest["c3"] = {
        "parent": P3,
        "root": root,
        "mid": mid,
        "tip": tip,
        "goal": GOALS["c3"],
        "source": s.session(root)["source"],
        "rows_per_segment": {
            k: s.counts(v)["active"] for k, v in (("root", root), ("mid", mid), ("tip", tip))
        },
    }
