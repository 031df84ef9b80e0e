"""What a reading command is called with: the `Common` options and the choice values of
`--color` and `--role`. `options.py` declares them as typer options and fills `Common`; a
command's work (`run_show.py`, the shell, the output) takes these values, not typer's.
"""

from __future__ import annotations

from enum import StrEnum

from msgspec import Struct

from hermes_task.cli.environment import Environment


class ColorMode(StrEnum):
    auto = "auto"
    always = "always"
    never = "never"


class RoleName(StrEnum):
    """The roles `--role` names (`core.rowfilter.ROLES`; a test keeps the two lists equal)."""

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
    pager: bool | None = None
    store: str | None = None
    no_store: bool = False
