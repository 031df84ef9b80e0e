"""`hermes-task tui [PARENT_ID]`: every task of a parent live on one screen (Textual, an extra).

The screen (`render/tui.py`) is one more reporter of the watch loop `recover --watch` and
`follow --parent` run (`cli/watch.py` `screen_follower`): the loop runs in a thread of its own
at `--interval`, its reports turned into `core/events.py` events posted to the screen. `q`
stops the loop at its next wait (its `sleep` raises) and exits 0, or with `--exit-status` as
`recover --watch --exit-status` would for the verdict at that moment (0 when no parent was
opened). `--recursive` nests each task's own delegated tasks. Without PARENT_ID the
screen opens on `hermes-task parents`' list. Without the `tui` extra (Textual) the command
says how to install it in one line and exits 2; nothing of Textual is imported by any other
command or by `--help`.
"""

from __future__ import annotations

import importlib.util
from typing import Annotated

import typer

from hermes_task.cli.common import Common
from hermes_task.cli.idcompletion import complete_parent_id
from hermes_task.cli.options import command_app, with_common

INSTALL = "error: hermes-task tui needs Textual: pip install 'hermes-task[tui]'"

app = command_app()


@app.command()
@with_common(pager=False, json=False)
def tui(
    parent_id: Annotated[
        str | None,
        typer.Argument(
            metavar="[PARENT_ID]",
            help="The parent chat's session id; without it the screen opens on `hermes-task parents`' list.",
            show_default=False,
            autocompletion=complete_parent_id,
        ),
    ] = None,
    interval: Annotated[
        float, typer.Option("--interval", metavar="S", min=0.5, help="Seconds between reads (at least 0.5).")
    ] = 2.0,
    exit_status: Annotated[
        bool,
        typer.Option(
            "--exit-status",
            help="On q, exit as recover --watch --exit-status would for the verdict at that moment: "
            "0 every task completed, 8 one failed or ended unreported, 9 one still runs.",
        ),
    ] = False,
    recursive: Annotated[
        bool,
        typer.Option(
            "--recursive",
            help="Nest the tasks each task delegated in turn (depth <= 8), as recover does: "
            "numbered under their task (1.2/1.1), live like the others.",
        ),
    ] = False,
    *,
    common: Common,
) -> None:
    """Every task of a parent chat live on one screen: the task table, the selected task's transcript.

    The screen is driven by the watch loop of recover --watch and follow --parent (the same statuses, proofs and warnings), every --interval seconds. Keys: j/k select, Enter the transcript, f follow, w wrap, r reasoning, o older rows, / search, e only what went wrong, s status filter, y copy the child id, c the CLI command, ? help, q quit. Needs the tui extra: pip install 'hermes-task[tui]'.
    """
    if importlib.util.find_spec("textual") is None:
        common.env.stderr.write(INSTALL + "\n")
        raise typer.Exit(2)
    from hermes_task.cli.run_tui import run_tui  # lazy: the command's work (and Textual), kept off --help

    run_tui(common, parent_id, interval=interval, exit_status=exit_status, recursive=recursive)
