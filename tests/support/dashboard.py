"""One in-memory Hermes dashboard for the unit tests, served through an `httpx.MockTransport`.

`Dashboard` holds sessions (their detail rows) and their message rows and answers the routes
hermes-task uses: `GET /api/sessions/{id}`, `/messages` in the three envelopes the backends
send (`current`: `order` honoured and echoed; `legacy` 0.19.x: oldest first, `order` ignored
and not echoed; `unpaginated` 0.18.x: every row, the query ignored), `/messages/around`,
`/latest-descendant` and `POST /auth/password-login`. A test adds sessions and rows, scripts
failures (`faults`: the next requests' answers or transport errors; `answer`: a hook that may
answer any request), runs hooks before a request or after one session's answer, and reads back
every request (`log`, `requests`). `client()` is the real `DashboardClient` on this transport,
so what a test proves about the reader it proves through the client's own checks; `serving()`
puts the same handler behind respx for tests that drive the CLI.
Invariant: a request the dashboard does not serve fails the test (an `AssertionError` naming
it) unless a hook answered it; no answer is made up outside the contract the test chose.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Literal, NamedTuple

import httpx
import respx

from hermes_task.dashboard.client import DashboardClient

Contract = Literal["current", "legacy", "unpaginated"]
BASE_URL = "http://127.0.0.1:9119"
NOT_FOUND: dict[str, Any] = {"detail": "Session not found"}
ROUTES = frozenset({"detail", "messages", "around", "latest-descendant", "login"})


class Call(NamedTuple):
    """One request as the dashboard saw it: the route kind ("detail", "messages", "around",
    "latest-descendant", "login" or "other"), the session id in the path and the query."""

    kind: str
    sid: str
    params: dict[str, str]


Hook = Callable[[Call], "httpx.Response | None"]


def refused() -> httpx.ConnectError:
    """A transport error: the connection was refused (the client's `network`)."""
    return httpx.ConnectError("[Errno 111] Connection refused")


def timed_out() -> httpx.ReadTimeout:
    """A transport error: no answer in time (the client's `timeout`)."""
    return httpx.ReadTimeout("timed out")


def status(code: int, body: Any = None, **kwargs: Any) -> httpx.Response:
    """An answer with `code` and a JSON `body` (none: an empty one)."""
    if body is None:
        return httpx.Response(code, **kwargs)
    return httpx.Response(code, json=body, **kwargs)


def _copy(response: httpx.Response) -> httpx.Response:
    """A fresh answer like `response` (one scripted answer may serve many requests)."""
    return httpx.Response(response.status_code, headers=response.headers, content=response.content)


def _route(path: str, method: str) -> tuple[str, str]:
    if method == "POST" and path == "/auth/password-login":
        return "login", ""
    parts = path.split("/")
    if method != "GET" or len(parts) < 4 or parts[1:3] != ["api", "sessions"]:
        return "other", ""
    tail = "/".join(parts[4:])
    kind = {"": "detail", "messages": "messages", "messages/around": "around"}.get(tail, tail)
    return kind, parts[3]


class Dashboard:
    """Sessions and rows, served through `transport()`; every request is logged."""

    def __init__(
        self,
        *,
        contract: Contract = "current",
        first_row_id: int = 1,
        hints: bool = True,
        around: bool = True,
        token: str | None = None,
        serves: frozenset[str] = ROUTES,
        fallback: Callable[[httpx.Request], httpx.Response] | None = None,
    ) -> None:
        self.contract: Contract = contract
        # hints False: `latest-descendant` answers "Session not found" (no lineage known).
        self.hints = hints
        # around False: `/messages/around` is Hermes's missing-route 404 (0.19, upstream 0.20).
        self.around = around
        # A token every request must carry in `X-Hermes-Session-Token` (None: not checked).
        self.token = token
        # The route kinds this dashboard may be asked (any other fails the test).
        self.serves = serves
        # Answers what this dashboard does not hold: a route kind it does not serve or a
        # session it has no detail for (a `Replay` of the captures around a modelled session).
        self.fallback = fallback
        self.details: dict[str, dict[str, Any]] = {}
        self.rows: dict[str, list[dict[str, Any]]] = {}
        # The segments whose rows a session's `/messages` serves, oldest first (iot merges a
        # compression lineage into its tip); default: the session alone.
        self.merged: dict[str, list[str]] = {}
        # `/messages` of the key answered as the value's (a backend after a rotation).
        self.redirect: dict[str, str] = {}
        # `latest-descendant`: a path walked (0.19.0) or one target (0.20+); default: itself.
        self.paths: dict[str, list[str]] = {}
        self.descendants: dict[str, str] = {}
        # Extra keys of every `/messages` envelope (iot and recover's backends: `profile`).
        self.envelope: dict[str, Any] = {}
        self.missing: set[str] = set()
        self.faults: list[httpx.Response | Exception] = []
        self.before: list[Hook] = []
        self.after: dict[tuple[str, str], Callable[[], object]] = {}
        # A broken backend: every page past the first is the newest one again.
        self.stuck = False
        self.logins: list[dict[str, Any]] = []
        self.log: list[Call] = []
        self.requests: list[httpx.Request] = []
        self.next_id = first_row_id

    # -- the store --------------------------------------------------------------------------

    def put(self, sid: str, **detail: Any) -> dict[str, Any]:
        """Add (or replace) session `sid` with these detail fields; its rows start empty.
        `message_count` is always the number of its own active rows (an archived row,
        `active` 0, is not counted, as on the real backends)."""
        self.details[sid] = {"id": sid, **detail}
        self.rows[sid] = []
        return self.details[sid]

    def row(self, sid: str, **fields: Any) -> tuple[str, int]:
        """Append a row to `sid` with the next row id; returns its durable key."""
        rid = self.next_id
        self.next_id += 1
        self.rows[sid].append({"id": rid, "session_id": sid, **fields})
        return sid, rid

    def ids(self, sid: str) -> list[int]:
        return [int(r["id"]) for r in self.rows[sid]]

    # -- what was asked ---------------------------------------------------------------------

    def calls(self) -> list[tuple[str, str]]:
        """(kind, session id) of every request, in order."""
        return [(c.kind, c.sid) for c in self.log]

    def paths_asked(self) -> list[str]:
        return [r.url.path for r in self.requests]

    def reads(self) -> list[tuple[str, str, str, str]]:
        """("messages", session id, offset, limit) of every `/messages` request."""
        return [(k, s, p.get("offset", ""), p.get("limit", "")) for k, s, p in self.log if k == "messages"]

    # -- serving ----------------------------------------------------------------------------

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handle)

    def http(self, base_url: str = BASE_URL) -> httpx.Client:
        return httpx.Client(transport=self.transport(), base_url=base_url)

    def client(self, *, profile: str | None = None, base_url: str = BASE_URL) -> DashboardClient:
        """The real client on this dashboard."""
        return DashboardClient(self.http(base_url), profile=profile, retry_pause=0.0)

    def answer(self, response: httpx.Response) -> None:
        """Answer every later request with `response` (a canned dashboard)."""
        self.before.append(lambda call: response)

    def handle(self, request: httpx.Request) -> httpx.Response:
        kind, sid = _route(request.url.path, request.method)
        call = Call(kind, sid, dict(request.url.params))
        self.requests.append(request)
        self.log.append(call)
        if self.fallback is not None and (kind not in self.serves or sid not in self.details):
            return self.fallback(request)
        if self.token is not None:
            assert request.headers.get("x-hermes-session-token") == self.token, request.url
        for hook in list(self.before):
            answered = hook(call)
            if answered is not None:
                return _copy(answered)
        if self.faults:
            fault = self.faults.pop(0)
            if isinstance(fault, Exception):
                raise fault
            return _copy(fault)
        if kind not in self.serves:
            raise AssertionError(f"the in-memory dashboard has no route {request.method} {request.url}")
        if kind == "login":
            self.logins.append(json.loads(request.content))
            return httpx.Response(200, json={"ok": True})
        if kind == "around" and not self.around:
            return httpx.Response(404, json={"detail": f"No such API endpoint: {request.url.path}"})
        if sid in self.missing or sid not in self.details or (kind == "latest-descendant" and not self.hints):
            return httpx.Response(404, json=NOT_FOUND)
        if kind == "messages":  # the contract's query, always (the client never leaves it out)
            assert call.params.get("inline_images") == "false", request.url
            assert call.params.get("include_compacted") == "true", request.url
        body = self._body(kind, sid, call.params)
        hook_after = self.after.pop((kind, sid), None)
        if hook_after is not None:
            hook_after()
        return httpx.Response(200, json=body)

    def _body(self, kind: str, sid: str, params: dict[str, str]) -> dict[str, Any]:
        if kind == "detail":
            active = [row for row in self.rows[sid] if row.get("active", 1) not in (0, False)]
            body = {**self.details[sid], "message_count": len(active)}
            if self.contract == "current":
                body.setdefault("is_default_profile", True)
            return body
        if kind == "latest-descendant":
            if sid in self.paths:
                path = list(self.paths[sid])
                return {"session_id": path[-1], "path": path, "changed": len(path) > 1}
            target = self.descendants.get(sid, sid)
            return {"session_id": target, "changed": target != sid}
        answer = self.redirect.get(sid, sid)
        rows = [row for segment in self.merged.get(answer, [answer]) for row in self.rows[segment]]
        if kind == "around":
            return self._around(answer, rows, params)
        if self.contract == "unpaginated":
            return {"session_id": answer, **self.envelope, "messages": rows}
        limit, offset, order = int(params["limit"]), int(params["offset"]), params.get("order", "latest")
        start = 0 if self.stuck else offset
        pagination: dict[str, Any]
        if self.contract == "legacy" or order == "oldest":
            got = rows[start : start + limit]
            pagination = {"limit": limit, "offset": offset, "returned": len(got)}
            if self.contract == "current":
                pagination["order"] = order
        else:
            end = max(0, len(rows) - start)
            got = rows[max(0, end - limit) : end]
            pagination = {"limit": limit, "offset": offset, "order": order, "returned": len(got)}
        return {"session_id": answer, **self.envelope, "messages": got, "pagination": pagination}

    def _around(self, sid: str, rows: list[dict[str, Any]], params: dict[str, str]) -> dict[str, Any]:
        row_id, limit = int(params["row_id"]), int(params.get("limit", "120"))
        start = next((i for i, row in enumerate(rows) if row["id"] >= row_id), len(rows))
        got = rows[start : start + limit]
        pagination = {"limit": limit, "offset": start, "returned": len(got)}
        return {"session_id": sid, **self.envelope, "messages": got, "pagination": pagination}


@contextmanager
def serving(
    handler: Callable[[httpx.Request], httpx.Response] | Exception, base_url: str = BASE_URL
) -> Iterator[respx.MockRouter]:
    """Serve `handler` (a `Dashboard.handle`, a `Replay`, a `Scripted`; an exception: every
    request raises it) to every httpx client while the block runs: the CLI tests' one respx
    setup."""
    with respx.mock(base_url=base_url, assert_all_called=False) as router:
        router.route().mock(side_effect=handler)
        yield router
