"""Parent P's one-segment children: ``long`` (241 rows), ``running`` (never ended) and ``rich``
(every row kind and hostile text)."""

from __future__ import annotations

import json
from typing import Any

from tests.support.seeding.common import GOALS, HOSTILE, PNG_1PX, Agent, Msg, SeedError
from tests.support.seeding.seeder import Seeder, finish, tool_call


def seed_long(s: Seeder, child: Agent, manifest: dict[str, Any]) -> None:
    """Exactly 241 rows: the goal, a plan, 119 tool rounds, the answer; ended agent_close."""
    msgs: list[Msg] = [
        {"role": "user", "content": GOALS["long"]},
        {"role": "assistant", "content": "Plan: read each module once, then summarise."},
    ]
    for i in range(119):
        call = tool_call("read_file", {"path": f"src/module_{i:03d}.py"})
        msgs.append({"role": "assistant", "content": f"Reading module {i:03d}.", "tool_calls": [call]})
        msgs.append(
            {
                "role": "tool",
                "tool_call_id": call["id"],
                "tool_name": "read_file",
                "content": f"module_{i:03d}: {i} functions, {i % 7} classes (row {2 * i + 4})",
            }
        )
    finish(s, child, msgs, "Summarised 119 modules.")
    rows = s.counts(child.session_id)["active"]
    if rows != 241:
        raise SeedError(f"long child has {rows} rows, expected 241")
    manifest["long"] = {"id": child.session_id, "goal": GOALS["long"], "rows": rows}


def seed_running(s: Seeder, child: Agent, manifest: dict[str, Any]) -> None:
    """A few rows and no end: the task is still running."""
    msgs: list[Msg] = [{"role": "user", "content": GOALS["running"]}]
    call = tool_call("terminal", {"command": "pytest -q -x tests/ --count 3"})
    msgs.append({"role": "assistant", "content": "Starting the first pass.", "tool_calls": [call]})
    msgs.append(
        {
            "role": "tool",
            "tool_call_id": call["id"],
            "tool_name": "terminal",
            "content": json.dumps({"output": "42 passed, 1 flaky (test_retry)", "exit_code": 0}),
        }
    )
    child._flush_messages_to_session_db(msgs)
    child._end_session_on_close = False  # never ended, even if something closes the agent
    row = s.session(child.session_id)
    if row["end_reason"] is not None:
        raise SeedError("running child was ended")
    manifest["running"] = {
        "id": child.session_id,
        "goal": GOALS["running"],
        "subagent_id": getattr(child, "_subagent_id", None),
        "rows": s.counts(child.session_id)["active"],
    }


def seed_rich(s: Seeder, child: Agent, manifest: dict[str, Any]) -> None:
    """Rows exercising reasoning, commentary, steer, hidden, multimodal, JSON args and hostile text."""
    sid = child.session_id
    ids: dict[str, int] = {}
    ids["goal"] = s.append(sid, "user", GOALS["rich"])
    args = {
        "path": "report.json",
        "content": json.dumps({"nested": {"ok": True, "list": [1, 2]}}),
        "note": 'quotes " and unicode ✓',
    }
    call = tool_call("write_file", args)
    ids["reasoning"] = s.append(
        sid,
        "assistant",
        "I will write the report first.",
        tool_calls=[call],
        finish_reason="tool_calls",
        reasoning="The user wants a JSON report; write it before describing the image.",
        reasoning_content="Plan: write report.json, then look at the screenshot.",
        reasoning_details=[
            {"type": "reasoning.summary", "summary": "Write the report, then inspect."},
            {"type": "reasoning.encrypted", "data": "gAAAAB-opaque-blob", "id": "rs_1"},
        ],
    )
    ids["tool_result"] = s.append(
        sid,
        "tool",
        json.dumps({"bytes_written": 57, "path": "report.json"}),
        tool_call_id=call["id"],
        tool_name="write_file",
    )
    steer = "Also mention the window title."
    if s.caps.steer_user_row is not None:
        row = s.caps.steer_user_row(steer)
        ids["steer"] = s.append(sid, "user", row["content"], display_kind=row["display_kind"])
    else:
        format_steer_marker = s.caps.format_steer_marker
        call2 = tool_call("terminal", {"command": "xdotool getactivewindow getwindowname"})
        s.append(sid, "assistant", "", tool_calls=[call2], finish_reason="tool_calls")
        ids["steer"] = s.append(
            sid,
            "tool",
            json.dumps({"output": "Terminal — build", "exit_code": 0}) + format_steer_marker(steer),
            tool_call_id=call2["id"],
            tool_name="terminal",
        )
    hidden = "[System: The previous tool call was cut off; continue from the last result.]"
    ids["hidden"] = s.append(sid, "user", hidden)
    ids["image"] = s.append(
        sid,
        "user",
        [
            {"type": "text", "text": "what is in this picture?"},
            {"type": "image_url", "image_url": {"url": PNG_1PX}},
        ],
    )
    ids["commentary"] = s.append(
        sid,
        "assistant",
        "The picture is a single white pixel.",
        reasoning="Looked at the image.",
        codex_message_items=[
            {
                "type": "message",
                "role": "assistant",
                "phase": "commentary",
                "content": [{"type": "output_text", "text": "Opening the image now."}],
            },
            {
                "type": "message",
                "role": "assistant",
                "phase": "final",
                "content": [{"type": "output_text", "text": "The picture is a single white pixel."}],
            },
        ],
    )
    ids["hostile"] = s.append(sid, "assistant", HOSTILE)
    child.close()
    manifest["rich"] = {
        "id": sid,
        "goal": GOALS["rich"],
        "row_ids": ids,
        "steer_text": steer,
        "hostile_text": HOSTILE,
        "rows": s.counts(sid)["active"],
    }
