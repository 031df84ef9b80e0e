"""`hermes-task follow`: print each new row of a delegated task once, until the task ends.

The command's work is `run_follow.py` (one task) and `watch.py` (`--parent`: every task of a
parent chat); this module declares the command and checks how its options combine.
"""

from __future__ import annotations

from typing import Annotated

import typer

from hermes_task.cli.common import Common
from hermes_task.cli.idcompletion import complete_parent_id, complete_task_id
from hermes_task.cli.options import Full, NoHint, Reasoning, Tips, Utc, command_app, with_common
from hermes_task.cli.selection import Roles, Tail

app = command_app()


@app.command()
@with_common(pager=False, events="events")
def follow(
    child_id: Annotated[
        str | None,
        typer.Argument(
            metavar="[CHILD_ID]",
            help="The task's root session id (its first durable reference; `recover PARENT` prints it); or give --parent.",
            show_default=False,
            autocompletion=complete_task_id,
        ),
    ] = None,
    parent: Annotated[
        str | None,
        typer.Option(
            "--parent",
            metavar="PARENT_ID",
            help="Follow every task PARENT_ID delegated: rows prefixed with the task's number, "
            "tasks joining as they start, until every task ended (--exit-status: by the parent's verdicts).",
            show_default=False,
            autocompletion=complete_parent_id,
        ),
    ] = None,
    tip: Tips = None,
    no_hint: NoHint = False,
    interval: Annotated[
        float, typer.Option("--interval", metavar="S", min=0.5, help="Seconds between reads (at least 0.5).")
    ] = 2.0,
    exit_status: Annotated[
        bool,
        typer.Option(
            "--exit-status",
            help="Exit 8 when the task did not close itself (agent_close).",
        ),
    ] = False,
    timeout: Annotated[
        float | None,
        typer.Option(
            "--timeout",
            metavar="S",
            min=0.0,
            help="Stop after S seconds in all; exit 9 when the task is known to be still running.",
            show_default=False,
        ),
    ] = None,
    start_timeout: Annotated[
        float,
        typer.Option(
            "--start-timeout",
            metavar="S",
            min=0.0,
            help="Give up after S seconds of 'not found' (an unflushed child, or a typo): exit 4; or after S "
            "seconds in which no read succeeded yet (a dashboard that is down): that failure's code.",
        ),
    ] = 60.0,
    reasoning: Reasoning = False,
    full: Full = False,
    utc: Utc = False,
    tail: Tail = None,
    role: Roles = None,
    *,
    common: Common,
) -> None:
    """Print each new row of a delegated task once, as it arrives, until the task ends.

    Every --interval seconds: the task's detail, its newest page and a fresh detail. When the task ends, one final read, then exit.

    A newer segment (--tip, the dashboard's latest-descendant hint, or a continuation in the local store) is followed only after its lineage is proven back to CHILD_ID.
    """
    if (child_id is None) == (parent is None):
        raise typer.BadParameter("give either CHILD_ID or --parent PARENT_ID")
    if parent is not None:
        if tip:
            raise typer.BadParameter("--tip names a segment of one task: not with --parent")
        from hermes_task.cli.watch import follow_parent  # lazy: the command's work, kept off --help

        follow_parent(
            common,
            parent,
            timeout=timeout,
            exit_status=exit_status,
            start_timeout=start_timeout,
            role=role,
            tail=tail,
            interval=interval,
        )
        return
    assert child_id is not None
    from hermes_task.cli.run_follow import run_follow  # lazy: the command's work, kept off --help

    run_follow(
        common,
        child_id=child_id,
        tip=tip,
        no_hint=no_hint,
        interval=interval,
        exit_status=exit_status,
        timeout=timeout,
        start_timeout=start_timeout,
        reasoning=reasoning,
        full=full,
        utc=utc,
        tail=tail,
        role=role,
    )
