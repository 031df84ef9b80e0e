"""Hostile dashboard responses for the property tests (tests/unit/test_hostile.py).

`hostile_response` turns one valid captured body into a bad one of a named category (random
JSON, wrong types, missing or extra fields, huge strings, deep nesting, invalid UTF-8,
truncation, wrong content types, NaN/Infinity, extreme ints, another session's identity, odd
HTTP statuses, rows whose every field is hostile). `tests/support/scripted.py` serves them inside
real captured flows.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import httpx
from hypothesis import strategies as st

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
# Text that means something to Markdown, HTML or XML readers (the reports): links, images,
# raw HTML and the report's own tags, fences, table pipes, block markers at a line's start,
# autolinks, mentions, entities, math, XML's forbidden characters; mixed with `unsafe_text`.
MARKUP = (
    "[x](http://evil.example)", "![i](http://evil.example/i.png)", "<script>alert(1)</script>",
    "<details>", "</details>", "<summary>", "</summary>", "<!--", "-->", "<b>", "<http://evil.example>",
    "```", "````", "~~~", "`", "``", "|", "\\", "\\|", "*", "**", "_", "~~", "# ", "## ", "> ", "- ",
    "+ ", "1. ", "2) ", "    ", "\t", "---", "===", "***", "http://evil.example", "https://evil.example/x",
    "www.evil.example", "a@evil.example", "@octocat", "#123", "&amp;", "&#60;", "&lt;", "$x$", "$$",
    "[^1]", "[x]: http://evil.example", "\n", "\n\n", "  \n", "\\\n", "\ufffe", "\uffff",
    "]]>", "<![CDATA[", "&#0;", "\u00a0", "\u3000",
)  # fmt: skip
markup_text = st.lists(st.sampled_from(MARKUP) | unsafe_text | st.text(max_size=8), max_size=16).map("".join)
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


def encode(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=True, allow_nan=True).encode()


def _with_hole(data: st.DataObject, body: Any, raw: bytes) -> bytes:
    """`body` encoded with one node (or the root) replaced by `raw` JSON text."""
    paths = _paths(body)
    path = data.draw(st.sampled_from(paths)) if paths else ()
    return encode(_put(body, path, _HOLE)).replace(_HOLE_JSON, raw, 1)


def _type_name(value: Any) -> str:
    return (
        "number" if isinstance(value, int | float) and not isinstance(value, bool) else type(value).__name__
    )


def hostile_response(
    data: st.DataObject, body: Any, category: str | None = None
) -> tuple[str, httpx.Response]:
    """A bad response derived from the valid JSON `body`; returns (category, response)."""
    category = category or data.draw(st.sampled_from(CATEGORIES), label="category")
    valid = encode(body)
    paths = _paths(body)
    content: bytes
    headers = dict(JSON_TYPE)
    status = 200
    if category == "random_json":
        content = encode(data.draw(json_values))
    elif category == "wrong_types" and paths:
        path = data.draw(st.sampled_from(paths))
        old = _type_name(_get(body, path))
        new = data.draw(json_values.filter(lambda v: _type_name(v) != old))
        content = encode(_put(body, path, new))
    elif category == "missing_fields" and any(isinstance(_get(body, p[:-1]), dict) for p in paths):
        keyed = [p for p in paths if isinstance(_get(body, p[:-1]), dict)]
        out = copy.deepcopy(body)
        for path in data.draw(st.lists(st.sampled_from(keyed), min_size=1, max_size=3, unique=True)):
            parent = _get(out, path[:-1]) if _reachable(out, path) else None
            if isinstance(parent, dict):
                parent.pop(path[-1], None)
        content = encode(out)
    elif category == "extra_fields":
        dicts = [()] + [p for p in paths if isinstance(_get(body, p), dict)]
        path = data.draw(st.sampled_from(dicts))
        node = dict(_get(body, path)) if isinstance(_get(body, path), dict) else {}
        node.update(data.draw(st.dictionaries(st.text(max_size=12), json_values, min_size=1, max_size=4)))
        content = encode(_put(body, path, node))
    elif category == "huge_strings":
        size = data.draw(st.sampled_from([70_000, 300_000, 1_000_000]))
        tail = data.draw(unsafe_text)
        content = _with_hole(data, body, encode("x" * size + "\n" + tail))
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
        content = encode(_foreign(data, body))
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
        content = encode({**body, "messages": rows, "pagination": pagination})
    else:  # a body without the structure the category needs: fall back to random JSON
        category = "random_json"
        content = encode(data.draw(json_values))
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
