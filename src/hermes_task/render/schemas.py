"""JSON Schemas of the output documents, generated from the Structs of `core/documents.py`
and `core/events.py` by `msgspec.json.schema`.

Pure: `schema(name)` is a function of the models only, so the committed copies in
`schemas/*.json` can be regenerated (`tools/regen.py`) and compared by a test. Schemas are
draft 2020-12. msgspec's output is completed here with what the documents promise:

- every property is `required`, because every field is always printed (`null` when it has
  no value): a script may rely on a key existing (msgspec requires only the fields without
  a default);
- every object with named properties is closed (`additionalProperties: false`): a new field
  is a new schema version or a documented extension that regenerates these files;
- an enum (a `StrEnum`) is written where it is used, as a `Literal`'s values are, not in
  `$defs`;
- a nullable value's `anyOf` ends with `null` and descriptions are dedented, whatever
  msgspec's (or Python's) version wrote;
- a document's root is its object itself, titled for the command (msgspec puts it in
  `$defs` behind a `$ref`); the events are `oneOf` their six kinds, discriminated on `type`.
"""

from __future__ import annotations

import inspect
import json
from typing import Any

import msgspec

from hermes_task.core.documents import ConfigDoc, ErrorDoc, ParentsDoc, TasksDoc, TranscriptDoc
from hermes_task.core.events import FollowEvent, SearchEvent

DIALECT = "https://json-schema.org/draft/2020-12/schema"

_TARGETS: dict[str, tuple[Any, str]] = {
    "transcript": (TranscriptDoc, "`show --json` and `older --json`: one transcript document."),
    "events": (
        FollowEvent,
        "`follow --json` and `recover --watch --json`: each NDJSON line is one of these events; the last is `result`.",
    ),
    "tasks": (TasksDoc, "`recover --json`: the delegated tasks of a parent chat."),
    "parents": (ParentsDoc, "`parents --json`: the newest chats that called delegate_task, proven."),
    "search": (
        SearchEvent,
        "`search --json`: each NDJSON line is one of these events; the last is `result`.",
    ),
    "error": (ErrorDoc, "Any command with --json, on failure: the error and the rows already verified."),
    "config": (ConfigDoc, "`config show --json`: effective settings and their sources; never a secret."),
}
NAMES: tuple[str, ...] = tuple(_TARGETS)


def _complete(node: Any) -> None:
    """Every object with named properties: all of them required, in order; nothing else.
    A nullable value lists `null` last, and a description from a docstring is dedented
    (`inspect.cleandoc`): msgspec's versions, and Python's, differ in both."""
    if isinstance(node, dict):
        if isinstance(node.get("description"), str):
            node["description"] = inspect.cleandoc(node["description"])
        if node.get("type") == "object" and isinstance(node.get("properties"), dict):
            node["required"] = list(node["properties"])
            node["additionalProperties"] = False
        if isinstance(node.get("anyOf"), list):
            node["anyOf"].sort(key=lambda option: option == {"type": "null"})
        for value in node.values():
            _complete(value)
    elif isinstance(node, list):
        for value in node:
            _complete(value)


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


def _inline_enums(node: Any, enums: dict[str, list[str]]) -> Any:
    """Each enum (the `StrEnum`s of `core/ui_strings.py`, which msgspec puts in `$defs`)
    written where it is used, as a `Literal`'s values are: no schema names a Python class."""
    if isinstance(node, dict):
        if node.get("$ref") in enums:
            return {("enum" if k == "$ref" else k): enums[v] if k == "$ref" else v for k, v in node.items()}
        return {key: _inline_enums(value, enums) for key, value in node.items()}
    return [_inline_enums(value, enums) for value in node] if isinstance(node, list) else node


def description(name: str) -> str:
    """One line saying which command prints document `name`."""
    return _TARGETS[name][1]


def schema(name: str) -> dict[str, Any]:
    """The JSON Schema of document `name` (one of `NAMES`); KeyError for another name."""
    target, text = _TARGETS[name]
    body = msgspec.json.schema(target)
    defs = body.get("$defs", {})
    enums = {f"#/$defs/{key}": defs.pop(key)["enum"] for key in [k for k, d in defs.items() if "enum" in d]}
    body = _inline_root(_inline_enums(body, enums))
    if "anyOf" in body and "discriminator" in body:  # the events: exactly one kind per line
        body = {("oneOf" if key == "anyOf" else key): value for key, value in body.items()}
    _complete(body)
    return {
        "$schema": DIALECT,
        "$id": f"urn:hermes-task:schema:1:{name}",
        "title": f"hermes-task {name} (schema_version 1)",
        "description": text,
        **body,
    }


def render(name: str) -> str:
    """`schema(name)` as stable, ASCII-only, indented JSON with a trailing newline."""
    return json.dumps(schema(name), ensure_ascii=True, indent=2) + "\n"
