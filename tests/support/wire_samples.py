"""The wire samples both the wire tests (tests/unit/test_wire.py) and the wire benchmark
(bench/bench_wire.py) mutate: one body of each endpoint (`BASES`, as the current contract sends
it) and `spliced`, which puts a raw JSON text at one place in a copy of a body (or drops the key
there), for the accept/reject cases of docs/decisions.md, entries 1 and 7."""

from __future__ import annotations

import json
from typing import Any

ROW: dict[str, Any] = {
    "id": 268,
    "session_id": "20261130_170941_b9b20e",
    "role": "assistant",
    "content": "",
    "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "terminal", "arguments": "{}"}}],
    "timestamp": 1796058581.14,
    "active": 1,
    "compacted": 0,
    "display_kind": None,
}
PAGE: dict[str, Any] = {
    "session_id": ROW["session_id"],
    "messages": [ROW],
    "pagination": {"limit": 50, "offset": 0, "order": "latest", "returned": 1},
    "profile": "default",
}
DETAIL: dict[str, Any] = {
    "id": ROW["session_id"],
    "source": "subagent",
    "parent_session_id": "20261130_170935_0a1434",
    "model_config": '{"_delegate_from": "20261130_170935_0a1434"}',
    "started_at": 1796058580.5,
    "ended_at": None,
    "end_reason": None,
    "is_default_profile": True,
}
HINT: dict[str, Any] = {
    "requested_session_id": DETAIL["parent_session_id"],
    "session_id": ROW["session_id"],
    "changed": True,
}
# Each endpoint's sample body, by the name the cases give the endpoint.
BASES: dict[str, dict[str, Any]] = {"messages": PAGE, "detail": DETAIL, "latest-descendant": HINT}

# The token that drops the key at the path instead of putting a value there.
DROP = object()
_HOLE = "\x00hole\x00"


def spliced(body: dict[str, Any], path: tuple[Any, ...], token: Any) -> bytes:
    """A copy of `body` as JSON bytes, with the raw JSON text `token` at `path` (keys and list
    indexes from the top), the key there dropped when `token` is `DROP`, or `token` alone when
    `path` is empty. `body` itself is never changed."""
    if not path:
        return str(token).encode()
    data = json.loads(json.dumps(body))
    parent = data
    for step in path[:-1]:
        parent = parent[step]
    if token is DROP:
        del parent[path[-1]]
    else:
        parent[path[-1]] = _HOLE
    return json.dumps(data).replace(json.dumps(_HOLE), str(token)).encode()
