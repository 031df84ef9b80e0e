"""JSON Schemas of the output documents, generated from the dataclasses in `model.py`.

Pure: `schema(name)` is a function of the models only, so the committed copies in
`schemas/*.json` can be regenerated (`tools/regen.py`) and compared by a test. Schemas are
draft 2020-12 in serialization mode, and every property is `required`, because every field
is always present in the output (`null` when it has no value): a script may rely on a key
existing. Objects forbid unknown properties; a new field is a new schema version or a
documented extension that regenerates these files.

pydantic is imported here only: it reads the stdlib dataclasses (a field's
`metadata["description"]` becomes its description), and no other command path loads it.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from pydantic import Field, TypeAdapter
from pydantic.json_schema import GenerateJsonSchema
from pydantic_core import core_schema

from hermes_task.core.configdoc import ConfigDoc
from hermes_task.core.delegators import ParentsDoc
from hermes_task.core.documents import ErrorDoc, TasksDoc, TranscriptDoc
from hermes_task.core.events import FollowEvent
from hermes_task.core.search_events import SearchEvent

DIALECT = "https://json-schema.org/draft/2020-12/schema"

_TARGETS: dict[str, tuple[Any, str]] = {
    "transcript": (TranscriptDoc, "`show --json` and `older --json`: one transcript document."),
    "events": (
        Annotated[FollowEvent, Field(discriminator="type")],
        "`follow --json` and `recover --watch --json`: each NDJSON line is one of these events; the last is `result`.",
    ),
    "tasks": (TasksDoc, "`recover --json`: the delegated tasks of a parent chat."),
    "parents": (ParentsDoc, "`parents --json`: the newest chats that called delegate_task, proven."),
    "search": (
        Annotated[SearchEvent, Field(discriminator="type")],
        "`search --json`: each NDJSON line is one of these events; the last is `result`.",
    ),
    "error": (ErrorDoc, "Any command with --json, on failure: the error and the rows already verified."),
    "config": (ConfigDoc, "`config show --json`: effective settings and their sources; never a secret."),
}
NAMES: tuple[str, ...] = tuple(_TARGETS)


class _AlwaysPresent(GenerateJsonSchema):
    """Serialization-mode schemas where a field with a default is still required, and no
    object takes properties it does not name."""

    def field_is_required(
        self,
        field: core_schema.ModelField | core_schema.DataclassField | core_schema.TypedDictField,
        total: bool,
    ) -> bool:
        return not field.get("serialization_exclude")

    def default_schema(self, schema: core_schema.WithDefaultSchema) -> dict[str, Any]:
        """A `default_factory` (the dataclasses' `[]` and `Candidate()`) shows its value as
        the `default`, as a literal default would."""
        factory = schema.get("default_factory")
        if factory is not None and not schema.get("default_factory_takes_data"):
            literal = {k: v for k, v in schema.items() if k != "default_factory"}
            literal["default"] = factory()  # type: ignore[call-arg]
            return super().default_schema(literal)  # type: ignore[arg-type]
        return super().default_schema(schema)

    def dataclass_args_schema(self, schema: core_schema.DataclassArgsSchema) -> dict[str, Any]:
        """Closed objects: the documents are frozen dataclasses with no extra keys."""
        body = super().dataclass_args_schema(schema)
        body["additionalProperties"] = False
        return body


def description(name: str) -> str:
    """One line saying which command prints document `name`."""
    return _TARGETS[name][1]


def schema(name: str) -> dict[str, Any]:
    """The JSON Schema of document `name` (one of `NAMES`); KeyError for another name."""
    target, description = _TARGETS[name]
    body = TypeAdapter(target).json_schema(mode="serialization", schema_generator=_AlwaysPresent)
    body.pop("description", None)
    return {
        "$schema": DIALECT,
        "$id": f"urn:hermes-task:schema:1:{name}",
        "title": f"hermes-task {name} (schema_version 1)",
        "description": description,
        **body,
    }


def render(name: str) -> str:
    """`schema(name)` as stable, ASCII-only, indented JSON with a trailing newline."""
    return json.dumps(schema(name), ensure_ascii=True, indent=2) + "\n"
