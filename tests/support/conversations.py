"""`Conversations`: the in-memory dashboard (`tests/support/dashboard.py`) with the vocabulary
of the unit tests that build delegations: sessions, their rows, and `delegate_task` calls that
spawn children. The unit tests get one served as the `fake` fixture (tests/unit/conftest.py)."""

from __future__ import annotations

import json
from typing import Any

import httpx

from tests.support.dashboard import Call, Dashboard

# What a `Conversations` may be asked unless a test says otherwise: details and pages only.
DETAILS_AND_PAGES = frozenset({"detail", "messages"})


class Conversations(Dashboard):
    """The in-memory dashboard with this suite's vocabulary: a current-contract backend (exact
    ids, `order=latest` pages naming profile "default") that is asked only details and pages
    (`serves` widens that; `hints` False: `latest-descendant` knows nothing); sessions whose
    rows spawn children with `delegate_task`. `status`: every request answers it (a backend
    that went away)."""

    def __init__(self, *, serves: frozenset[str] = DETAILS_AND_PAGES, hints: bool = True) -> None:
        super().__init__(serves=serves, hints=hints)
        self.envelope = {"profile": "default"}
        self.status: int | None = None
        self.before.append(self._down)

    def _down(self, call: Call) -> httpx.Response | None:
        return None if self.status is None else httpx.Response(self.status, json={"detail": "Unauthorized"})

    def session(self, sid: str, parent: str | None = None) -> None:
        config = None if parent is None else json.dumps({"max_iterations": 90, "_delegate_from": parent})
        self.put(sid, source="subagent" if parent else "cli", parent_session_id=parent, model_config=config,
                 started_at=1796056440.0, ended_at=None, end_reason=None, profile="default",
                 is_default_profile=True)  # fmt: skip

    def add(self, sid: str, role: str, content: Any = "", **extra: Any) -> None:
        self.row(sid, role=role, content=content, active=1, compacted=0, **extra)

    def spawn(self, sid: str, call_id: str, goals: list[str], payload: dict[str, Any]) -> None:
        call = {"id": call_id, "type": "function",
                "function": {"name": "delegate_task", "arguments": json.dumps({"tasks": [{"goal": g} for g in goals]})}}  # fmt: skip
        self.add(sid, "assistant", "", tool_calls=[call])
        self.add(sid, "tool", json.dumps(payload), tool_call_id=call_id, tool_name="delegate_task")
