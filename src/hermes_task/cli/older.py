"""`hermes-task older`: the newest page plus older pages of a delegated task's transcript.

One refresh (as `show`), then `--pages N` load-older batches (default 1), or `--all` to the
start with the largest pages the backend allows; `--min-text N` makes each batch read raw
pages until N text rows arrived. The batch logic is `hermes_task.reading.stream` (no typer, no
rich); the command's work is `run_older.py` (options, the stderr progress indicator, the output).
"""

from __future__ import annotations

from typing import Annotated

import typer

from hermes_task.cli.common import Common
from hermes_task.cli.options import ChildId, Full, NoHint, Reasoning, Tips, Utc, command_app, with_common

app = command_app()


@app.command()
@with_common(formats=True)
def older(
    child_id: ChildId,
    tip: Tips = None,
    pages: Annotated[
        int | None,
        typer.Option(
            "--pages",
            min=1,
            help="Load-older batches to read after the newest page (default 1).",
            show_default=False,
        ),
    ] = None,
    all_pages: Annotated[
        bool,
        typer.Option("--all", help="Read back to the task's start, 500 rows per request (not with --pages)."),
    ] = False,
    min_text: Annotated[
        int | None,
        typer.Option(
            "--min-text",
            min=1,
            help=(
                "Each batch reads raw pages until N text rows (user/assistant prose) arrived, "
                "at most 10 pages; tool and status rows are kept but don't count."
            ),
            show_default=False,
        ),
    ] = None,
    reasoning: Reasoning = False,
    full: Full = False,
    utc: Utc = False,
    no_hint: NoHint = False,
    *,
    common: Common,
) -> None:
    """The newest page of a delegated task's transcript, then older pages.

    Rows are unique by (session_id, id), in the server's order (copies of one
    row carried into later segments, one message_uid, are shown once); paging
    counts unique rows, so a task that keeps writing is read back without
    skipping or repeating a row. The output is the whole window, as with
    show; JSON coverage says whether older rows remain (has_older) and
    whether the task's first row is loaded (at_start).
    """
    from hermes_task.cli.run_older import run_older  # lazy: the command's work, kept off --help

    run_older(
        common,
        child_id=child_id,
        tip=tip,
        pages=pages,
        all_pages=all_pages,
        min_text=min_text,
        reasoning=reasoning,
        full=full,
        utc=utc,
        no_hint=no_hint,
    )
