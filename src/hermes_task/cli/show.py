"""`hermes-task show`: one verified snapshot of a delegated task's transcript."""

from __future__ import annotations

from typing import Annotated

import typer

from hermes_task.cli.common import Common
from hermes_task.cli.options import ChildId, Full, NoHint, Reasoning, Tips, Utc, command_app, with_common
from hermes_task.cli.selection import Roles, Tail

app = command_app()


@app.command()
@with_common(formats=True)
def show(
    child_id: ChildId,
    tip: Tips = None,
    around: Annotated[
        list[int] | None,
        typer.Option(
            "--around",
            metavar="ROW_ID",
            help="Show the window around this row id (current backends; repeatable).",
            show_default=False,
        ),
    ] = None,
    reasoning: Reasoning = False,
    full: Full = False,
    utc: Utc = False,
    no_hint: NoHint = False,
    tail: Tail = None,
    role: Roles = None,
    *,
    common: Common,
) -> None:
    """One verified snapshot of a delegated task's transcript.

    Reads the task root's detail, its newest messages page and a fresh detail; a newer
    segment (--tip, the dashboard's latest-descendant hint, or a continuation in the local
    store) is shown only after its lineage is proven back to CHILD_ID.
    """
    from hermes_task.cli.run_show import run_show  # lazy: the command's work, kept off --help

    run_show(
        common,
        child_id=child_id,
        tip=tip,
        around=around,
        reasoning=reasoning,
        full=full,
        utc=utc,
        no_hint=no_hint,
        tail=tail,
        role=role,
    )
