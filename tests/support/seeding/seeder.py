"""The ``Seeder`` (one SessionDB and the agents of a run) and the rows every scenario writes."""

from __future__ import annotations

import json
import os
import sqlite3
import uuid
from typing import Any

from tests.support.seeding.capabilities import Capabilities
from tests.support.seeding.common import DEAD_BASE_URL, MODEL, PAD, Agent, Msg, SeedError


def new_call_id() -> str:
    return f"call_{uuid.uuid4().hex[:24]}"


def tool_call(name: str, args: dict[str, Any], call_id: str | None = None) -> Msg:
    return {
        "id": call_id or new_call_id(),
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)},
    }


def tool_round(i: int, label: str, pad: bool = True) -> list[Msg]:
    """One assistant tool call and its result (padded so compaction really shrinks the transcript)."""
    call = tool_call("terminal", {"command": f"grep -n TODO src/{label}_{i}.py"})
    output = f"src/{label}_{i}.py: {i % 3} TODO marker(s)\n" + (PAD if pad else "")
    return [
        {"role": "assistant", "content": "", "tool_calls": [call], "finish_reason": "tool_calls"},
        {
            "role": "tool",
            "tool_call_id": call["id"],
            "tool_name": "terminal",
            "content": json.dumps({"output": output, "exit_code": 0}),
        },
    ]


class Seeder:
    """Owns the SessionDB and the agents of one seeding run."""

    def __init__(self) -> None:
        from hermes_state import SessionDB

        self.caps = Capabilities()
        self.db = SessionDB()
        self._keep: list[Any] = []  # agents stay referenced until the run ends

    # ---------------------------------------------------------------- agents
    def agent(self, platform: str = "cli") -> Agent:
        from run_agent import AIAgent

        ag = AIAgent(
            base_url=DEAD_BASE_URL,
            api_key="sk-seed-dead-endpoint",
            model=MODEL,
            provider="custom",
            platform=platform,
            session_db=self.db,
            quiet_mode=True,
            skip_context_files=True,
            skip_memory=True,
        )
        ag._ensure_db_session()
        self._keep.append(ag)
        return ag

    def child(
        self, parent: Agent, task_index: int, goal: str, task_count: int, source: str | None = None
    ) -> Agent:
        """Build a delegated child exactly the way delegate_task does and create its row."""
        import tools.delegate_tool as delegate_tool

        build = self.caps.build_child
        cfg = delegate_tool._load_config()
        max_iter = cfg.get("max_iterations", delegate_tool.DEFAULT_MAX_ITERATIONS)
        child = build(
            task_index=task_index,
            goal=goal,
            context=None,
            toolsets=None,
            model=None,
            max_iterations=max_iter,
            task_count=task_count,
            parent_agent=parent,
        )
        if child._session_init_model_config.get("_delegate_from") != parent.session_id:
            raise SeedError("child is missing the _delegate_from marker")
        previous = os.environ.get("HERMES_SESSION_SOURCE")
        if source:
            os.environ["HERMES_SESSION_SOURCE"] = source
        try:
            child._ensure_db_session()
        finally:
            if previous is None:
                os.environ.pop("HERMES_SESSION_SOURCE", None)
            else:
                os.environ["HERMES_SESSION_SOURCE"] = previous
        row = self.db.get_session(child.session_id)
        if not row or row["parent_session_id"] != parent.session_id:
            raise SeedError(f"child row for {goal!r} was not created under {parent.session_id}")
        if source and row["source"] != source:
            raise SeedError(f"child source is {row['source']!r}, expected {source!r}")
        self._keep.append(child)
        return child

    @staticmethod
    def compact(agent: Agent, messages: list[Msg], *, in_place: bool) -> list[Msg]:
        """Run the real compression path; verify it rotated (or compacted in place).

        Upstream 0.20 refuses a compaction whose result would not be smaller than its input
        (``failure_class: would_grow``): the study model's unknown context window defaults to
        256k tokens, so its verbatim tail budget (about 38k tokens) swallows a whole short
        segment.  On a refusal the compressor's tail budget is cut to its message-count floor
        (what a small-context model would get) and the compaction is run once more."""
        start = agent.session_id
        agent.compression_in_place = in_place
        out: list[Msg]
        for attempt in range(2):
            rows_before = len(messages)
            out, _prompt = agent._compress_context(messages, None, force=True)
            if in_place:
                if agent.session_id == start and len(out) < rows_before:
                    return out
            elif agent.session_id != start:
                return out
            compressor: Any = getattr(agent, "context_compressor", None)
            if attempt or not isinstance(getattr(type(compressor), "tail_token_budget", None), property):
                break
            compressor.tail_token_budget = 1
        what = "in-place compaction" if in_place else "rotation"
        raise SeedError(f"{what} of {start} was refused (transcript would not shrink?)")

    # ---------------------------------------------------------------- reads
    def counts(self, session_id: str) -> dict[str, int]:
        """Row counts straight from state.db (read-only connection)."""
        con = sqlite3.connect(f"file:{self.db.db_path}?mode=ro", uri=True)
        try:
            q = "SELECT COUNT(*) FROM messages WHERE session_id=? AND {}"
            active: int = con.execute(q.format("active=1"), (session_id,)).fetchone()[0]
            archived: int = con.execute(q.format("active=0 AND compacted=1"), (session_id,)).fetchone()[0]
        finally:
            con.close()
        return {"active": active, "archived": archived}

    def session(self, session_id: str) -> dict[str, Any]:
        row: dict[str, Any] | None = self.db.get_session(session_id)
        if row is None:
            raise SeedError(f"session {session_id} not found")
        return row

    # ---------------------------------------------------------------- rows
    def append(self, session_id: str, role: str, content: Any = None, **kw: Any) -> int:
        row_id: int = self.db.append_message(session_id=session_id, role=role, content=content, **kw)
        return row_id

    def append_dict(self, session_id: str, msg: Msg) -> int:
        kw = {
            k: msg[k]
            for k in (
                "tool_calls",
                "tool_call_id",
                "tool_name",
                "finish_reason",
                "reasoning",
                "reasoning_content",
                "reasoning_details",
                "codex_message_items",
            )
            if msg.get(k) is not None
        }
        if self.caps.display_columns:
            kw.update({k: msg[k] for k in ("display_kind", "display_metadata") if msg.get(k) is not None})
        return self.append(session_id, msg["role"], msg.get("content"), **kw)


def finish(s: Seeder, agent: Agent, messages: list[Msg], answer: str, *, close: bool = True) -> None:
    messages.append({"role": "assistant", "content": answer, "finish_reason": "stop"})
    agent._flush_messages_to_session_db(messages)
    if close:
        agent.close()
