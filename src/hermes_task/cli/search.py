"""`hermes-task search`: a pattern looked for in every task's whole transcript of a parent chat.

The command's work is `run_search.py`: the reading is `hermes_task.reading.task_search` (the
tasks as `recover` finds them, each child read as `older --all` reads it); the output
`render/searchout.py`: NDJSON events with `--json`, tab-separated lines when piped, readable
groups on a terminal. The exit status is grep's in this tool's numbers
(`core/search.search_status`): 0 a line matched, 10 none did in a search that read
everything, 11 none did but something was not read; failures to read the parent keep their
usual codes. With `--json` a failure is an `error` event, then `result`.
"""

from __future__ import annotations

from typing import Annotated

import typer

from hermes_task.cli.common import Common
from hermes_task.cli.options import Utc, command_app, with_common

app = command_app()


@app.command()
@with_common(pager=False, events="search")
def search(
    pattern: Annotated[
        str,
        typer.Argument(
            metavar="PATTERN",
            help="The text to find (a fixed string; with --regex a Python regular expression).",
            show_default=False,
        ),
    ],
    parent_id: Annotated[
        str,
        typer.Argument(
            help="The parent chat's session id (exactly as shown).", metavar="PARENT_ID", show_default=False
        ),
    ],
    regex: Annotated[
        bool, typer.Option("--regex", help="PATTERN is a Python regular expression, matched in each line.")
    ] = False,
    ignore_case: Annotated[bool, typer.Option("--ignore-case", "-i", help="Ignore case.")] = False,
    context: Annotated[
        int,
        typer.Option(
            "--context",
            "-C",
            metavar="N",
            min=0,
            help="Print N lines before and after each matching line (from the same block of the row).",
        ),
    ] = 0,
    reasoning: Annotated[
        bool, typer.Option("--reasoning", help="Search the rows' reasoning too (show hides it unless asked).")
    ] = False,
    utc: Utc = False,
    *,
    common: Common,
) -> None:
    """Find PATTERN in every task a parent chat delegated: each task's whole transcript.

    Reads the parent's tasks as recover does (their child sessions proposed by the local store and proven over HTTP), then each child as older --all reads it: every proven segment, every row, tool output and tool call arguments included. Prints each matching line with its task number, child session, row id, role and time. Exit 0 when a line matched, 10 when none did and every transcript was searched whole, 11 when none did but not everything could be read (a task without a known child, an unreadable child, a bound).
    """
    from hermes_task.cli.run_search import run_search  # lazy: the command's work, kept off --help

    run_search(
        common,
        pattern,
        parent_id,
        regex=regex,
        ignore_case=ignore_case,
        context=context,
        reasoning=reasoning,
        utc=utc,
    )
