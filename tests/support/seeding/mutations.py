"""Changes to a seeded home while a server reads it: append rows, end a session, rotate one,
or add a plain chat rotated many times (``chain``)."""

from __future__ import annotations

import json
import uuid
from datetime import datetime
from typing import Any

from tests.support.seeding.common import DEAD_BASE_URL, MODEL, stub_summariser
from tests.support.seeding.seeder import Seeder, finish, tool_call, tool_round

ROTATIONS = ("compressor", "by-hand")


def append_rows(session_id: str, n: int) -> dict[str, Any]:
    """Append n rows (assistant tool call / tool result pairs) through SessionDB.append_message."""
    s = Seeder()
    s.session(session_id)
    _append_pairs(s, session_id, n)
    return {"session_id": session_id, "rows": s.counts(session_id)["active"]}


def _append_pairs(s: Seeder, session_id: str, n: int) -> None:
    last_call = ""
    for i in range(n):
        if i % 2 == 0:
            call = tool_call("terminal", {"command": f"pytest -q tests/ -k pass_{i // 2}"})
            last_call = call["id"]
            s.append(
                session_id,
                "assistant",
                f"Appended pass {i // 2}.",
                tool_calls=[call],
                finish_reason="tool_calls",
            )
        else:
            s.append(
                session_id,
                "tool",
                json.dumps({"output": f"pass {i // 2}: 43 passed", "exit_code": 0}),
                tool_call_id=last_call,
                tool_name="terminal",
            )


def end_session(session_id: str, reason: str) -> dict[str, Any]:
    s = Seeder()
    s.session(session_id)
    s.db.end_session(session_id, reason)
    row = s.session(session_id)
    return {"session_id": session_id, "end_reason": row["end_reason"], "ended_at": row["ended_at"]}


def rotate(session_id: str, *, before: int, after: int, how: str = "compressor") -> dict[str, Any]:
    """Append *before* rows to *session_id*, rotate it, append *after* rows to the new segment:
    all in one process, so no reader can poll between the old segment's last rows and the
    rotation. Returns the old and new ids, their active row counts and end reasons.

    ``compressor``: a running delegated child rotated through the real compression path
    (``AIAgent._compress_context`` with ``compression_in_place=False``); the rows are padded
    tool rounds, and the new segment gets an answer and is ended ``agent_close``.
    ``by-hand``: the SessionDB calls of 0.19.0's rotation in its order (end_session(old,
    'compression') -> create_session(new, parent=old) with the same source and model_config);
    the rows are tool-call pairs, and the new segment stays open."""
    if how not in ROTATIONS:
        raise ValueError(f"unknown rotation {how!r}; expected one of {', '.join(ROTATIONS)}")
    if how == "compressor":
        stub_summariser()
    s = Seeder()
    old = s.session(session_id)
    config = old.get("model_config")
    model_config = json.loads(config) if isinstance(config, str) else config
    if how == "compressor":
        new = _rotate_by_compressor(s, session_id, old, before, after)
    else:
        _append_pairs(s, session_id, before)
        s.db.end_session(session_id, "compression")
        new = f"{datetime.now().strftime('%Y%m%d_%H%M%S')}_{uuid.uuid4().hex[:6]}"
        s.db.create_session(
            session_id=new, source=old["source"], model_config=model_config, parent_session_id=session_id
        )
        _append_pairs(s, new, after)
    return {
        "old": session_id,
        "new": new,
        "old_rows": s.counts(session_id)["active"],
        "new_rows": s.counts(new)["active"],
        "old_end": s.session(session_id)["end_reason"],
        "new_end": s.session(new)["end_reason"],
    }


def _rotate_by_compressor(s: Seeder, session_id: str, old: dict[str, Any], before: int, after: int) -> str:
    from run_agent import AIAgent

    agent = AIAgent(
        base_url=DEAD_BASE_URL,
        api_key="sk-seed-dead-endpoint",
        model=MODEL,
        provider="custom",
        platform=old["source"] or "subagent",
        session_db=s.db,
        session_id=session_id,
        quiet_mode=True,
        skip_context_files=True,
        skip_memory=True,
    )
    config = old["model_config"]
    agent._session_init_model_config = json.loads(config) if isinstance(config, str) else dict(config or {})
    agent._session_db_created = True
    msgs = s.db.get_messages_as_conversation(session_id)
    msgs += [row for i in range((before + 1) // 2) for row in tool_round(i, "rot")][: max(0, before)]
    agent._flush_messages_to_session_db(msgs)
    msgs = s.compact(agent, msgs, in_place=False)
    new: str = agent.session_id
    msgs += [row for i in range((after + 1) // 2) for row in tool_round(i, "after", pad=False)][
        : max(0, after)
    ]
    finish(s, agent, msgs, "Two errors in the deploy log.")
    return new


def chain(rotations: int, *, fork: bool = False) -> dict[str, Any]:
    """A plain ``cli`` chat rotated *rotations* times through the real compression path, in one
    process: each segment gets four padded tool rounds before it is compressed, and the last
    one a question and its answer (the chat is not closed). ``fork``: the last compressed
    segment also gets a second continuation, created through ``SessionDB.create_session``
    with the segment's source and model config (what a second rotation of the same segment
    writes), holding one row. Returns the ids of every segment, oldest first (``segments``),
    ``root``, ``tip``, the tip's answer and the ``sibling`` (or None)."""
    stub_summariser()
    s = Seeder()
    chat = s.agent("cli")
    segments = [chat.session_id]
    msgs: list[Any] = [{"role": "user", "content": "Keep an eye on the deploy log."}]
    for n in range(rotations):
        msgs += [row for i in range(4) for row in tool_round(i, f"chain{n}")]
        chat._flush_messages_to_session_db(msgs)
        msgs = s.compact(chat, msgs, in_place=False)
        segments.append(chat.session_id)
    msgs.append({"role": "user", "content": "Anything new?"})
    answer = f"Nothing new after {rotations} rotations."
    finish(s, chat, msgs, answer, close=False)
    sibling = None
    if fork and rotations:
        old = s.session(segments[-2])
        config = old.get("model_config")
        sibling = f"{datetime.now().strftime('%Y%m%d_%H%M%S')}_{uuid.uuid4().hex[:6]}"
        s.db.create_session(
            session_id=sibling,
            source=old["source"],
            model_config=json.loads(config) if isinstance(config, str) else config,
            parent_session_id=segments[-2],
        )
        s.append(sibling, "user", "A second continuation of the same segment.")
    return {
        "root": segments[0],
        "tip": segments[-1],
        "segments": segments,
        "answer": answer,
        "sibling": sibling,
    }
