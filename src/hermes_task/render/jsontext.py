"""JSON text: one document (indented) or one NDJSON event per line, always ASCII; the JSON
Schemas of the documents; the values `config show` reports. docs/decisions.md ("JSON out",
"Schemas") says how: msgspec's bytes, escaped as `ensure_ascii` would; msgspec's schemas
completed with the documents' promises. Invariant: `document(doc)` and `event(doc)` load to the
same data (`msgspec.to_builtins`), ASCII, no line break inside a value.
"""

from __future__ import annotations

import codecs
import inspect
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

if TYPE_CHECKING:
    from hermes_task.settings import Settings, Source


_ENCODER = msgspec.json.Encoder()
_ERRORS = "hermes_task.json_ascii"


def _escape(error: UnicodeError) -> tuple[str, int]:
    """A codec error handler: non-ASCII as `\\uXXXX` (UTF-16 units: an astral one is a pair)."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    units = error.object[error.start : error.end].encode("utf-16-be", "surrogatepass").hex()
    return "".join(f"\\u{units[i : i + 4]}" for i in range(0, len(units), 4)), error.end


codecs.register_error(_ERRORS, _escape)


def ascii_only(raw: bytes) -> bytes:
    """JSON text `raw` (UTF-8) with non-ASCII and DEL escaped: the same value (only strings change)."""
    if not raw.isascii():
        raw = raw.decode("utf-8").encode("ascii", _ERRORS)
    return raw.replace(b"\x7f", b"\\u007f") if b"\x7f" in raw else raw


def _encode(value: Any, indent: int | None) -> bytes:
    try:
        raw = _ENCODER.encode(value)
    except UnicodeEncodeError:  # a lone surrogate: UTF-8 cannot carry it, JSON's escapes can
        data = msgspec.to_builtins(value)
        separators = (",", ": ") if indent else (",", ":")
        return json.dumps(data, ensure_ascii=True, indent=indent, separators=separators).encode("ascii")
    return ascii_only(msgspec.json.format(raw, indent=indent) if indent else raw)


def document(doc: Any) -> str:
    return _encode(doc, 2).decode("ascii") + "\n"


def event(payload: Any) -> str:
    return _encode(payload, None).decode("ascii") + "\n"


def row_element(row: Any, *, first: bool) -> str:
    """One element of a document's `rows` array, as `document` writes it (`first`: no comma)."""
    body = _encode(row, 2).decode("ascii").replace("\n", "\n    ")
    return ("\n    " if first else ",\n    ") + body


ROWS_OPEN = '{\n  "schema_version": 1,\n  "rows": ['
"""What `document` writes before the first element of a transcript's or an error's `rows`
(both documents start `schema_version`, `rows`): known before any row is read."""


def rows_close(doc: Any, count: int) -> str:
    """What `document(doc)` writes after `count` elements of `rows` (`doc`'s `rows` empty): with
    `ROWS_OPEN` and `row_element`, byte for byte `document` of the whole document."""
    text = document(doc)
    empty = ROWS_OPEN + "],\n"
    if not text.startswith(empty):
        raise ValueError(f"not a document whose rows come first: {type(doc).__name__}")
    return ("],\n" if count == 0 else "\n  ],\n") + text[len(empty) :]


DIALECT = "https://json-schema.org/draft/2020-12/schema"

DESCRIPTIONS = {  # each document: which command prints it
    "transcript": "`show --json` and `older --json`: one transcript document.",
    "events": "`follow --json` and `recover --watch --json`: each NDJSON line is one of these events; the last is `result`.",
    "tasks": "`recover --json`: the delegated tasks of a parent chat.",
    "parents": "`parents --json`: the newest chats that called delegate_task, proven.",
    "search": "`search --json`: each NDJSON line is one of these events; the last is `result`.",
    "error": "Any command with --json, on failure: the error and the rows already verified.",
    "config": "`config show --json`: effective settings and their sources; never a secret.",
}
NAMES: tuple[str, ...] = tuple(DESCRIPTIONS)


def _complete(node: Any, enums: dict[str, list[str]]) -> Any:
    """`node` with the promises kept: each enum (a `StrEnum` of `core/ui_strings.py`, which
    msgspec puts in `$defs`) written where it is used, as a `Literal`'s values are (no schema
    names a Python class); every property required, objects closed, `null` last in an `anyOf`,
    descriptions dedented (msgspec's versions, and Python's, differ in the last two)."""
    if isinstance(node, list):
        return [_complete(value, enums) for value in node]
    if not isinstance(node, dict):
        return node
    if node.get("$ref") in enums:
        node = {("enum" if k == "$ref" else k): enums[v] if k == "$ref" else v for k, v in node.items()}
    node = {key: _complete(value, enums) for key, value in node.items()}
    if isinstance(node.get("description"), str):
        node["description"] = inspect.cleandoc(node["description"])
    if node.get("type") == "object" and isinstance(node.get("properties"), dict):
        node["required"] = list(node["properties"])
        node["additionalProperties"] = False
    if isinstance(node.get("anyOf"), list):
        node["anyOf"].sort(key=lambda option: option == {"type": "null"})
    return node


def _inline_root(body: dict[str, Any]) -> dict[str, Any]:
    """`{"$ref": "#/$defs/X", "$defs": {...}}` as X's object at the root (X referenced by no
    other definition), the other definitions beside it."""
    ref = body.get("$ref")
    if not isinstance(ref, str):
        return body
    name = ref.removeprefix("#/$defs/")
    defs = dict(body.get("$defs", {}))
    root = defs.pop(name)
    if ref in json.dumps(defs):
        return body
    root.pop("title", None)
    root.pop("description", None)
    return {**({"$defs": defs} if defs else {}), **root}


def description(name: str) -> str:
    return DESCRIPTIONS[name]


def schema(name: str) -> dict[str, Any]:
    """The JSON Schema of document `name` (one of `NAMES`); KeyError for another name."""
    from hermes_task.core import documents, events  # lazy: every command's models (12 ms), for `schema`

    structs: dict[str, Any] = {
        "transcript": documents.TranscriptDoc,
        "events": events.FollowEvent,
        "tasks": documents.TasksDoc,
        "parents": documents.ParentsDoc,
        "search": events.SearchEvent,
        "error": documents.ErrorDoc,
        "config": documents.ConfigDoc,
    }
    body = msgspec.json.schema(structs[name])
    defs = body.get("$defs", {})
    enums = {f"#/$defs/{key}": defs.pop(key)["enum"] for key in [k for k, d in defs.items() if "enum" in d]}
    body = _inline_root(_complete(body, enums))
    if "anyOf" in body and "discriminator" in body:  # the events: exactly one kind per line
        body = {("oneOf" if key == "anyOf" else key): value for key, value in body.items()}
    return {
        "$schema": DIALECT,
        "$id": f"urn:hermes-task:schema:1:{name}",
        "title": f"hermes-task {name} (schema_version 1)",
        "description": DESCRIPTIONS[name],
        **body,
    }


def render(name: str) -> str:
    return json.dumps(schema(name), ensure_ascii=True, indent=2) + "\n"


def _file_state(path: Path) -> str:
    return f"set (from file {path})" if os.access(path, os.R_OK) else f"not readable (file {path})"


def explain(settings: Settings, env: Mapping[str, str]) -> list[tuple[str, str | float | None, Source]]:
    """(name, value, source) of every effective connection setting, for `config show`; secrets
    are described, never shown (docs/configuration.md)."""
    from hermes_task.settings import TOKEN_ENVS  # lazy: the settings module, only for `config show`

    src = settings.sources
    names = ("gateway", "url", "profile", "request_timeout", "username")
    rows: list[tuple[str, str | float | None, Source]] = [
        (name, getattr(settings, name), src.get(name, "default")) for name in names
    ]
    token_var = next((n for n in TOKEN_ENVS if env.get(n)), None)
    token: tuple[str, Source] = ("not set", "default")
    if settings.username:
        token = ("not used (password login)", "default")
    elif settings.token_file is not None:
        token = (_file_state(settings.token_file), src.get("token_file", "flag"))
    elif token_var is not None:
        token = (f"set (from env {token_var})", "env")
    elif settings.loopback:
        token = ("not set (discovered from the local dashboard when needed)", "default")
    password: tuple[str, Source] = ("not set", "default")
    if settings.password_file is not None:
        password = (_file_state(settings.password_file), src.get("password_file", "flag"))
    elif settings.password_env:
        password = ("set (from env HERMES_DASHBOARD_PASSWORD)", "env")
    return [*rows, ("token", *token), ("password", *password)]
