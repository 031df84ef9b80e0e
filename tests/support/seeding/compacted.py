"""A background child compacted in place, its goal row archived (issue 35, item 9).

``compacted_child`` (the ``compacted-child`` command, run on demand against a serving home): a
``cli`` parent that dispatched one goal in a background ``delegate_task`` call; its child
(``tool`` source, built as ``delegate_task`` builds it) is compacted in place through the
real compression path with ``protect_first_n`` 0 (a user's ``compression`` setting): no head
message is kept verbatim, so the goal row is archived (``active=0``) and the child's oldest
active row is the compaction summary (the compressor re-adds the goal after it, as the newest
user message). On 0.19 (which hides archived rows over HTTP, backend.md section 11) the
child's oldest row served is that summary, not the goal; the store's first ``user`` row is
still the goal (checked here, read-only).

It returns ``parent``, ``call``, ``goal`` and ``child``.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from tests.support.seeding.common import Msg, SeedError
from tests.support.seeding.payloads import assistant_call, dispatched_payload, new_delegation_id, tool_result
from tests.support.seeding.seeder import Seeder, tool_round

GOAL = "Check that the build passes on the release branch"


def _first_rows(s: Seeder, child: str) -> tuple[str, str]:
    """The text of the child's oldest row and of its oldest active row (read-only)."""
    con = sqlite3.connect(f"file:{s.db.db_path}?mode=ro", uri=True)
    try:
        q = "SELECT content FROM messages WHERE session_id=? {} ORDER BY id LIMIT 1"
        first = con.execute(q.format(""), (child,)).fetchone()
        active = con.execute(q.format("AND active=1"), (child,)).fetchone()
    finally:
        con.close()
    return str(first[0] if first else ""), str(active[0] if active else "")


def compacted_child() -> dict[str, Any]:
    s = Seeder()
    parent = s.agent("cli")
    segment = parent.session_id
    s.append(segment, "user", "Check the release build in the background, please.")
    call, call_id = assistant_call({"tasks": [{"goal": GOAL}]})
    s.append_dict(segment, call)
    child = s.child(parent, 0, GOAL, 1, source="tool")
    s.append_dict(segment, tool_result(call_id, dispatched_payload(s, [GOAL], new_delegation_id(), [child])))
    root = child.session_id
    # A home whose config says `compression: {protect_first_n: 0}` (0.19 reads it into the
    # compressor; every version has the attribute): no head message is kept verbatim, so the
    # first in-place compaction archives the goal row itself.
    compressor: Any = getattr(child, "context_compressor", None)
    if compressor is None or not hasattr(compressor, "protect_first_n"):
        raise SeedError("the child's compressor has no protect_first_n")
    compressor.protect_first_n = 0
    msgs: list[Msg] = [{"role": "user", "content": GOAL}]
    for i in range(4):
        msgs += tool_round(i, "relbuild")
    child._flush_messages_to_session_db(msgs)
    compacted = s.compact(child, msgs, in_place=True)
    msgs = list(compacted)
    for i in range(4):
        msgs += tool_round(i, "reltest")
    # the next turn's flush gets the compacted list as its history: only new rows are appended
    child._flush_messages_to_session_db(msgs, compacted)
    history = list(msgs)
    msgs.append({"role": "assistant", "content": "The release build passes.", "finish_reason": "stop"})
    child._flush_messages_to_session_db(msgs, history)
    child.close()
    if child.session_id != root:
        raise SeedError("the child rotated instead of compacting in place")
    s.append(segment, "assistant", "The build check runs in the background.")
    first, first_active = _first_rows(s, root)
    if first != GOAL or not first_active.startswith("[CONTEXT COMPACTION"):
        raise SeedError("the child's goal row was not archived behind a compaction summary")
    return {"parent": segment, "call": call_id, "goal": GOAL, "child": root}
