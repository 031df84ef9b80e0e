"""The row-selection options of `show` and `follow`: `--role` and `--tail`.

They choose which rows are printed (`core/projection.py`), never which are read or proven.
Invariant: a bad value is a usage error (exit 2) before any request.
"""

from __future__ import annotations

from typing import Annotated

import typer

from hermes_task.cli.common import RoleName


def _not_negative(value: int | None) -> int | None:
    if value is not None and value < 0:
        raise typer.BadParameter(f"{value} is below 0 (0 prints no row)")
    return value


Tail = Annotated[
    int | None,
    typer.Option(
        "--tail",
        metavar="N",
        callback=lambda value: _not_negative(value),
        help="Print only the last N rows (follow: of those already there, per task with --parent; 0: only new ones).",
        show_default=False,
    ),
]
Roles = Annotated[
    list[RoleName] | None,
    typer.Option(
        "--role",
        metavar="ROLE",
        help="Print only rows of ROLE: user, assistant, tool or system (repeatable).",
        show_default=False,
        case_sensitive=False,
    ),
]
