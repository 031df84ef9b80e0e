"""What a reading command is called with: the `Common` options and the choice values of
`--color`, `--format` and `--role`. `options.py` declares them as typer options and fills `Common`; a
command's work (`run_show.py`, the shell, the output) takes these values, not typer's.
"""

from __future__ import annotations

from enum import StrEnum

import typer
from msgspec import Struct

from hermes_task.cli.environment import Environment


class ColorMode(StrEnum):
    auto = "auto"
    always = "always"
    never = "never"


class OutputFormat(StrEnum):
    """What `--format` names: text (a table or rows, the default), json (`--json`), markdown."""

    text = "text"
    json = "json"
    markdown = "markdown"


def output_format(json_out: bool, chosen: OutputFormat | None) -> OutputFormat:
    """The format of `--json` and `--format` together: `--json` is `--format json`, and
    the two disagreeing is a usage error (exit 2)."""
    if chosen is None:
        return OutputFormat.json if json_out else OutputFormat.text
    if json_out and chosen is not OutputFormat.json:
        raise typer.BadParameter(
            f"{chosen.value} disagrees with --json (--json is --format json)", param_hint="'--format'"
        )
    return chosen


class RoleName(StrEnum):
    """The roles `--role` names (`core.projection.ROLES`; a test keeps the two lists equal)."""

    user = "user"
    assistant = "assistant"
    tool = "tool"
    system = "system"


class Common(Struct, frozen=True):
    """What every reading command shares: connection, output, and the environment it runs in."""

    env: Environment
    url: str | None = None
    gateway: str | None = None
    profile: str | None = None
    token_file: str | None = None
    username: str | None = None
    password_file: str | None = None
    request_timeout: float | None = None
    color: ColorMode = ColorMode.auto
    quiet: bool = False
    debug: bool = False
    json: bool = False
    output_format: OutputFormat = OutputFormat.text  # `json` is `output_format is json`
    pager: bool | None = None
    store: str | None = None
    no_store: bool = False
