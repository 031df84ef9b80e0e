"""`hermes-task parents`: the newest chats that called delegate_task, where a PARENT_ID comes from."""

from __future__ import annotations

from typing import Annotated

import typer

from hermes_task.cli.common import Common
from hermes_task.cli.options import Utc, command_app, with_common

app = command_app()


@app.command()
@with_common(pager=False)
def parents(
    limit: Annotated[
        int,
        typer.Option("--limit", metavar="N", min=1, max=100, help="List at most N chats (1-100)."),
    ] = 10,
    header: Annotated[
        bool, typer.Option("--header", help="Piped output: print the column names first.")
    ] = False,
    utc: Utc = False,
    *,
    common: Common,
) -> None:
    """List the newest chats that called delegate_task: the PARENT_ID recover and follow --parent take.

    The dashboard's local Hermes store proposes the parents of its newest delegated children
    (read-only; run on the dashboard's host, or pass --store PATH); each is printed only once
    the dashboard shows it and at least one child that names it as its delegation parent.
    Most recent delegation first: id, start, children proven, state, title (or its first user
    words). Piped, one tab-separated line per chat. Without a store: exit 12.
    """
    from hermes_task.cli.run_parents import run_parents  # lazy: the command's work, kept off --help

    run_parents(common, limit=limit, header=header, utc=utc)
