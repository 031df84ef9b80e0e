"""`hermes-task config show --json`: the config document (schema_version 1).

A document like those of `documents.py` (a frozen Struct, every key always present, a
field's `Meta(description=...)` its schema description), for the settings instead of a task.
"""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import Meta, Struct
from msgspec.structs import force_setattr


class ConfigValue(Struct, frozen=True, kw_only=True):
    """One effective setting. For a secret, `value` only says whether and where it is set."""

    value: str | float | None
    source: Literal["flag", "env", "config", "default"]

    def __post_init__(self) -> None:
        if type(self.value) is int:  # a float setting: 10 is 10.0 in the document
            force_setattr(self, "value", float(self.value))


class ConfigDoc(Struct, frozen=True, kw_only=True):
    """`hermes-task config show --json`: the effective settings and where each came from."""

    schema_version: Literal[1] = 1
    kind: Literal["config"] = "config"
    path: str
    exists: bool
    gateways: list[str]
    settings: dict[str, ConfigValue]
    error: Annotated[
        str | None,
        Meta(description="Why the config file is invalid (file:line)."),
    ] = None


__all__ = ["ConfigDoc", "ConfigValue"]
