"""Replay captured real dashboard exchanges (fixtures/<backend>/...) through respx.

Requests are matched on method, path, query and whether a session token was sent; an
unmatched request fails the test (it names the request), so the mocks stay exactly as
true as the captures made by tools/capture_task_history_fixture.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import httpx

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
BASE_URL = "http://127.0.0.1:9119"
TOKEN = "replay-token-0123456789"


def load(backend: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / backend / "delegated_task_dashboard.json").read_text())
    return data


def derive(exchanges: Iterable[dict[str, Any]], path: str, query: dict[str, str]) -> dict[str, Any] | None:
    """A messages page no capture asked for exactly, cut from a captured page of the same
    session and query that holds every row asked for (a page shorter than its limit holds
    the segment's whole remaining range). The envelope is rebuilt as the backend builds it;
    a legacy backend (no `order` in its pagination) ignores `order`, reading oldest first. A
    current backend's page in the other order serves only when it holds the whole sequence
    (read from offset 0 and shorter than its limit)."""
    try:
        offset, limit = int(query["offset"]), int(query["limit"])
    except (KeyError, ValueError):
        return None
    rest = {k: v for k, v in query.items() if k not in ("offset", "limit")}
    for exchange in exchanges:
        body = exchange["body"]
        where = exchange["path"]
        other = {k: str(v) for k, v in (exchange.get("query") or {}).items()}
        if (
            exchange["name"].endswith(("no-token", "wrong-token"))
            or where != path
            or exchange["status"] != 200
            or not isinstance(body, dict)
        ):
            continue
        pagination = body.get("pagination") or {}
        legacy = "order" not in pagination
        rows, start, size = body["messages"], int(other["offset"]), int(other["limit"])
        whole = start == 0 and len(rows) < size
        if {k: v for k, v in other.items() if k not in ("offset", "limit", "order")} != {
            k: v for k, v in rest.items() if k != "order"
        } or (not legacy and not whole and other.get("order") != rest.get("order")):
            continue
        if offset < start or (offset + limit > start + len(rows) and len(rows) >= size):
            continue
        skip = offset - start
        if legacy or rest.get("order") == "oldest":
            cut = rows[skip : skip + limit]
        else:
            cut = rows[max(0, len(rows) - skip - limit) : max(0, len(rows) - skip)]
        envelope = {**pagination, "limit": limit, "offset": offset, "returned": len(cut)}
        if not legacy:
            envelope["order"] = rest.get("order")
        derived = {**body, "messages": cut, "pagination": envelope}
        return {**exchange, "name": f"{exchange['name']}:derived", "body": derived}
    return None


class Replay:
    """A respx side effect answering from captured exchanges."""

    def __init__(self, backend: str) -> None:
        self.data = load(backend)
        self.manifest: dict[str, Any] = self.data["manifest"]
        self.by_name = {e["name"]: e for e in self.data["exchanges"]}
        self.seen: list[str] = []
        self.overrides: dict[tuple[str, str], httpx.Response] = {}

    def _match(self, request: httpx.Request) -> dict[str, Any] | None:
        query = dict(request.url.params)
        authed = request.headers.get("x-hermes-session-token") == TOKEN
        for exchange in self.data["exchanges"]:
            if exchange["method"] != request.method or exchange["path"] != request.url.path:
                continue
            if {k: str(v) for k, v in (exchange.get("query") or {}).items()} != query:
                continue
            name = exchange["name"]
            wants_auth = not name.endswith(("no-token", "wrong-token"))
            if wants_auth == authed:
                return dict(exchange)
        return None

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(f"{request.method} {request.url.path}?{request.url.query.decode()}")
        override = self.overrides.get((request.url.path, request.url.query.decode()))
        if override is not None:
            return override
        exchange = self._match(request)
        if exchange is None and request.url.path.endswith("/messages"):
            exchange = derive(self.data["exchanges"], request.url.path, dict(request.url.params))
        if exchange is None:
            raise AssertionError(f"no captured exchange for {request.method} {request.url}")
        return httpx.Response(exchange["status"], json=exchange["body"])
