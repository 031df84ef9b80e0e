"""A captured scenario of a real backend, served through respx with one request answered badly.

`Scripted` answers from fixtures/<backend>/delegated_task_dashboard.json and gives request
number `corrupt` a hostile answer from `tests.support.hostile.hostile_response`, remembering which
row keys came from responses that named another session, so a test can prove they are never
shown. `scenarios` lists command lines whose every request is captured.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

import httpx

from tests.support.hostile import JSON_TYPE, encode, hostile_response
from tests.support.replay import derive, load


@dataclass
class Scripted:
    """A captured scenario of one backend; request number `corrupt` gets a hostile answer.

    `legit` holds the row keys served in messages pages that named the session they were
    asked for; `tainted` those served in a page that named another session.
    """

    backend: str
    data: Any  # hypothesis data, or anything with a compatible draw()
    corrupt: int
    category: str | None = None
    served: list[str] = field(default_factory=list)
    used: str | None = None
    legit: set[tuple[str, int]] = field(default_factory=set)
    tainted: set[tuple[str, int]] = field(default_factory=set)
    unmatched: int = 0

    def __post_init__(self) -> None:
        captured = capture(self.backend)
        self.manifest: dict[str, Any] = captured["manifest"]
        self._index: dict[tuple[str, frozenset[tuple[str, str]]], dict[str, Any]] = {}
        for exchange in captured["exchanges"]:
            if exchange["name"].endswith(("no-token", "wrong-token")):
                continue
            query = frozenset((k, str(v)) for k, v in (exchange.get("query") or {}).items())
            self._index.setdefault((exchange["path"], query), exchange)

    def replace(
        self, name: str, edit: Any = None, *, status: int | None = None, body: Any = None
    ) -> Scripted:
        """Answer the captured exchange `name` differently: `edit(body)` on a copy of its
        body, or a whole new `body` and/or `status`. Returns self."""
        for key, exchange in list(self._index.items()):
            if exchange["name"] == name:
                new = copy.deepcopy(exchange["body"]) if body is None else body
                if edit is not None:
                    edit(new)
                status = exchange["status"] if status is None else status
                self._index[key] = {**exchange, "body": new, "status": status}
                return self
        raise KeyError(name)

    def _lookup(self, request: httpx.Request) -> dict[str, Any] | None:
        query = {k: v for k, v in request.url.params.items()}
        if request.url.path.endswith("/around"):
            query.pop("limit", None)  # the capture was made without it; the rows are the same
        found = self._index.get((request.url.path, frozenset(query.items())))
        if found is None and request.url.path.endswith("/messages"):
            found = derive(self._index.values(), request.url.path, query)
        return found

    def __call__(self, request: httpx.Request) -> httpx.Response:
        number = len(self.served)
        self.served.append(f"{request.url.path}?{request.url.query.decode()}")
        exchange = self._lookup(request)
        if exchange is None:
            self.unmatched += 1
            return httpx.Response(404, json={"detail": "Session not found"})
        body = exchange["body"]
        if number != self.corrupt:
            self._note_rows(request, body, body)
            return httpx.Response(exchange["status"], content=encode(body), headers=JSON_TYPE)
        self.used, response = hostile_response(self.data, body, self.category)
        try:
            sent = json.loads(response.content)
        except (ValueError, RecursionError):
            sent = None
        self._note_rows(request, body, sent)
        return response

    def _note_rows(self, request: httpx.Request, body: Any, sent: Any) -> None:
        if not (isinstance(sent, dict) and isinstance(sent.get("messages"), list)):
            return
        asked = request.url.path.split("/")[3]
        keys: set[tuple[str, int]] = {
            (m["session_id"], m["id"])
            for m in sent["messages"]
            if isinstance(m, dict) and isinstance(m.get("session_id"), str) and isinstance(m.get("id"), int)
        }
        named = sent.get("session_id")
        honest = isinstance(body, dict) and named == body.get("session_id")
        if honest or named == asked:
            self.legit |= keys
        else:
            self.tainted |= keys


_CAPTURES: dict[str, dict[str, Any]] = {}


def capture(backend: str) -> dict[str, Any]:
    """The captured exchanges of `backend`, read once per test session."""
    if backend not in _CAPTURES:
        _CAPTURES[backend] = load(backend)
    return _CAPTURES[backend]


def scenarios(manifest: dict[str, Any]) -> dict[str, list[str]]:
    """Command lines whose every request is captured for this backend (`show` mostly, plus
    `older --all` and `recover`)."""
    m = manifest
    out = {
        "c1_tip": ["show", m["c1"]["root"], "--tip", m["c1"]["tip"]],
        "c1_hint": ["show", m["c1"]["root"]],
        "rich": ["show", m["rich"]["id"]],
        "running": ["show", m["running"]["id"]],
        "plain": ["show", m["plain"]["root"]],
        "older_c1": ["older", m["c1"]["root"], "--tip", m["c1"]["tip"], "--all"],
        "recover": ["recover", m["parent"]],
    }
    if m["backend"]["contract"] == "current":
        out["long"] = ["show", m["long"]["id"]]
        # The capture holds no hint answer for c2's root (a `tool` chain): the hint, asked
        # about every compressed segment, is covered by c1_hint.
        out["c2_tip"] = ["show", m["c2"]["root"], "--tip", m["c2"]["tip"], "--no-hint"]
        out["around"] = ["show", m["rich"]["id"], "--around", str(m["rich"]["row_ids"]["goal"])]
    return out
