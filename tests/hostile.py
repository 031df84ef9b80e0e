"""Hostile dashboard responses for the property tests (tests/unit/test_hostile.py).

`hostile_response` turns one valid captured body into a bad one of a named category (random
JSON, wrong types, missing or extra fields, huge strings, deep nesting, invalid UTF-8,
truncation, wrong content types, NaN/Infinity, extreme ints, another session's identity, odd
HTTP statuses). `Scripted` serves a captured scenario of a real backend
(fixtures/<backend>/...) and corrupts exactly one request of it, remembering which row keys
came from responses that named another session, so a test can prove they are never shown.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

import httpx
from hypothesis import strategies as st

from tests.replay import load

CATEGORIES = (
    "random_json",
    "wrong_types",
    "missing_fields",
    "extra_fields",
    "huge_strings",
    "deep_nesting",
    "invalid_utf8",
    "truncated",
    "wrong_content_type",
    "nan_infinity",
    "extreme_ints",
    "foreign_identity",
    "http_status",
    "hostile_rows",
)
FOREIGN_ID = "20991231_235959_f0f0f0"
JSON_TYPE = {"content-type": "application/json"}
_HOLE = "\x00HOLE\x00"
_HOLE_JSON = json.dumps(_HOLE).encode()

unsafe_text = st.lists(
    st.one_of(
        st.characters(codec=None, categories=None, exclude_categories=()),
        st.sampled_from(["\x1b", "\x9b", "\x07", "\r", "\u202e", "\u2066", "\x1b]52;c;", "\x1b[2J"]),
        st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),
    ),
    max_size=24,
).map("".join)
_leaf = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | unsafe_text
)
json_values = st.recursive(
    _leaf,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=16,
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every node's path below the root (dict keys and list indexes)."""
    out: list[tuple[Any, ...]] = []
    items: list[tuple[Any, Any]] = []
    if isinstance(value, dict):
        items = list(value.items())
    elif isinstance(value, list):
        items = list(enumerate(value))
    for key, child in items:
        out.append((*prefix, key))
        out.extend(_paths(child, (*prefix, key)))
    return out


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        value = value[key]
    return value


def _put(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    out = copy.deepcopy(value)
    if not path:
        return new
    _get(out, path[:-1])[path[-1]] = new
    return out


def _encode(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=True, allow_nan=True).encode()


def _with_hole(data: st.DataObject, body: Any, raw: bytes) -> bytes:
    """`body` encoded with one node (or the root) replaced by `raw` JSON text."""
    paths = _paths(body)
    path = data.draw(st.sampled_from(paths)) if paths else ()
    return _encode(_put(body, path, _HOLE)).replace(_HOLE_JSON, raw, 1)


def _type_name(value: Any) -> str:
    return (
        "number" if isinstance(value, int | float) and not isinstance(value, bool) else type(value).__name__
    )


def hostile_response(
    data: st.DataObject, body: Any, category: str | None = None
) -> tuple[str, httpx.Response]:
    """A bad response derived from the valid JSON `body`; returns (category, response)."""
    category = category or data.draw(st.sampled_from(CATEGORIES), label="category")
    valid = _encode(body)
    paths = _paths(body)
    content: bytes
    headers = dict(JSON_TYPE)
    status = 200
    if category == "random_json":
        content = _encode(data.draw(json_values))
    elif category == "wrong_types" and paths:
        path = data.draw(st.sampled_from(paths))
        old = _type_name(_get(body, path))
        new = data.draw(json_values.filter(lambda v: _type_name(v) != old))
        content = _encode(_put(body, path, new))
    elif category == "missing_fields" and any(isinstance(_get(body, p[:-1]), dict) for p in paths):
        keyed = [p for p in paths if isinstance(_get(body, p[:-1]), dict)]
        out = copy.deepcopy(body)
        for path in data.draw(st.lists(st.sampled_from(keyed), min_size=1, max_size=3, unique=True)):
            parent = _get(out, path[:-1]) if _reachable(out, path) else None
            if isinstance(parent, dict):
                parent.pop(path[-1], None)
        content = _encode(out)
    elif category == "extra_fields":
        dicts = [()] + [p for p in paths if isinstance(_get(body, p), dict)]
        path = data.draw(st.sampled_from(dicts))
        node = dict(_get(body, path)) if isinstance(_get(body, path), dict) else {}
        node.update(data.draw(st.dictionaries(st.text(max_size=12), json_values, min_size=1, max_size=4)))
        content = _encode(_put(body, path, node))
    elif category == "huge_strings":
        size = data.draw(st.sampled_from([70_000, 300_000, 1_000_000]))
        tail = data.draw(unsafe_text)
        content = _with_hole(data, body, _encode("x" * size + "\n" + tail))
    elif category == "deep_nesting":
        depth = data.draw(st.sampled_from([10_000, 3_000, 900, 400]))
        opener, closer = data.draw(st.sampled_from([(b"[", b"]"), (b'{"a":', b"}")]))
        content = _with_hole(data, body, opener * depth + b"1" + closer * depth)
    elif category == "invalid_utf8":
        bad = data.draw(
            st.sampled_from([b"\xff\xfe", b"\xc3(", b"\xed\xa0\x80", b"\x80", b"\xf8\x88\x80\x80\x80"])
        )
        content = _with_hole(data, body, b'"' + bad + b'"')
    elif category == "truncated":
        content = valid[: data.draw(st.integers(0, max(0, len(valid) - 1)))]
    elif category == "wrong_content_type":
        kind = data.draw(st.sampled_from(["text/html", "text/plain", "application/octet-stream", ""]))
        headers = {"content-type": kind} if kind else {}
        content = data.draw(st.sampled_from([valid, b"<!doctype html><html>Headless backend</html>"]))
    elif category == "nan_infinity":
        token = data.draw(st.sampled_from([b"NaN", b"Infinity", b"-Infinity"]))
        content = _with_hole(data, body, token)
    elif category == "extreme_ints":
        number = data.draw(st.sampled_from([-1, 0, -(2**63), 2**63, 2**64 + 1, 10**30, -(10**30), 10**4000]))
        content = _with_hole(data, body, str(number).encode())
    elif category == "foreign_identity":
        content = _encode(_foreign(data, body))
    elif category == "http_status":
        status = data.draw(
            st.sampled_from(
                [204, 206, 301, 302, 400, 401, 403, 404, 405, 409, 418, 422, 429, 500, 502, 503, 504, 599]
            )
        )
        content = data.draw(
            st.sampled_from([b"", valid, b'{"detail": "\\u001b]52;c;ZXZpbA==\\u0007 no"}', b"oops"])
        )
    elif category == "hostile_rows" and isinstance(body, dict) and isinstance(body.get("messages"), list):
        first = data.draw(st.sampled_from([1, 7_000, 2**63, 10**400, -(2**63)]))
        rows = data.draw(hostile_rows(str(body.get("session_id")), first))
        pagination = dict(body.get("pagination") or {}, returned=len(rows))
        content = _encode({**body, "messages": rows, "pagination": pagination})
    else:  # a body without the structure the category needs: fall back to random JSON
        category = "random_json"
        content = _encode(data.draw(json_values))
    return category, httpx.Response(status, content=content, headers=headers)


def _reachable(value: Any, path: tuple[Any, ...]) -> bool:
    try:
        _get(value, path)
    except (KeyError, IndexError, TypeError):
        return False
    return True


def _foreign(data: st.DataObject, body: Any) -> Any:
    """`body` naming another session: the detail's `id`, the envelope's `session_id`, or a
    latest-descendant answer pointing elsewhere."""
    if not isinstance(body, dict):
        return body
    other = data.draw(st.sampled_from([FOREIGN_ID, "20261130_000000_abcdef", body.get("id", FOREIGN_ID)]))
    out = dict(body)
    for key in ("id", "session_id"):
        if key in out:
            out[key] = other if other != body.get(key) else FOREIGN_ID
    return out


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
        return self._index.get((request.url.path, frozenset(query.items())))

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
            return httpx.Response(exchange["status"], content=_encode(body), headers=JSON_TYPE)
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
        keys = {
            (m.get("session_id"), m.get("id"))
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
        out["c2_tip"] = ["show", m["c2"]["root"], "--tip", m["c2"]["tip"]]
        out["around"] = ["show", m["rich"]["id"], "--around", str(m["rich"]["row_ids"]["goal"])]
    return out


_numbers = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([-1, 0, -(2**63), 2**63, 2**64 + 1, 10**30, 10**400, -(10**400)]),
    st.integers(),
)
_parts = st.lists(
    st.fixed_dictionaries(
        {"type": st.sampled_from(["text", "image_url", "image", "input_image", "other"])},
        optional={"text": unsafe_text, "alt": unsafe_text, "image_url": json_values},
    ),
    max_size=3,
)
_call = st.fixed_dictionaries(
    {},
    optional={
        "id": unsafe_text | json_values,
        "type": st.just("function"),
        "function": st.fixed_dictionaries(
            {}, optional={"name": unsafe_text | json_values, "arguments": unsafe_text | json_values}
        ),
        "name": unsafe_text,
        "arguments": unsafe_text,
    },
)


def _reasoning_sidecar() -> st.SearchStrategy[Any]:
    item = st.fixed_dictionaries(
        {}, optional={"type": unsafe_text, "text": unsafe_text, "summary": unsafe_text, "data": unsafe_text}
    )
    native = st.lists(item, max_size=3)
    return native | native.map(lambda v: json.dumps(v, ensure_ascii=False)) | unsafe_text


def hostile_rows(session_id: str, first_id: int) -> st.SearchStrategy[list[dict[str, Any]]]:
    """Transcript rows of `session_id` whose every displayed field is hostile (escape and
    control sequences, lone surrogates, bidi overrides, huge and non-finite numbers)."""
    row = st.fixed_dictionaries(
        {
            "session_id": st.just(session_id),
            "role": st.sampled_from(["user", "assistant", "tool", "system", "agent"]) | unsafe_text,
        },
        optional={
            "content": unsafe_text | _parts | json_values,
            "tool_calls": st.lists(_call, max_size=2)
            | st.lists(_call, max_size=2).map(json.dumps)
            | json_values,
            "tool_name": unsafe_text,
            "tool_call_id": unsafe_text,
            "timestamp": _numbers,
            "reasoning": unsafe_text,
            "reasoning_content": unsafe_text,
            "reasoning_details": _reasoning_sidecar(),
            "codex_reasoning_items": _reasoning_sidecar(),
            "display_kind": st.sampled_from(["steer", "failed_turn", "hidden"]) | unsafe_text,
            "display_content": unsafe_text | _parts | st.none(),
            "display_reasoning": unsafe_text | st.none(),
            "display_commentary": st.lists(unsafe_text, max_size=2) | unsafe_text,
            "active": st.sampled_from([0, 1]),
            "compacted": st.sampled_from([0, 1]),
        },
    )
    return st.lists(row, max_size=6).map(lambda rows: [{"id": first_id + i, **r} for i, r in enumerate(rows)])
