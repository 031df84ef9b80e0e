"""`hermes-task search`: a pattern in every task's whole transcript of a parent chat (read by
`reading/task_search.py`, written by `render/searchout.py`); the exit status grep's in this
tool's numbers (docs/exit-codes.md). With `--json` a failure is an `error` event, then `result`.
"""

from __future__ import annotations

from functools import partial
from typing import Annotated, Any

import typer

from hermes_task.cli.options import Common, Utc, argument, command_app, with_common
from hermes_task.failures import Code, HermesError

app = command_app()


@app.command()
@with_common(pager=False, events="search")
def search(
    pattern: Annotated[
        str,
        argument("PATTERN", "The text to find (a fixed string; with --regex a Python regular expression)."),
    ],
    parent_id: Annotated[str, argument("PARENT_ID", "The parent chat's session id (exactly as shown).")],
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
    **shared: Any,
) -> None:
    """Find PATTERN in every task a parent chat delegated: each task's whole transcript.

    Reads the parent's tasks as recover does (their child sessions proposed by the local store and proven over HTTP), then each child as older --all reads it: every proven segment, every row, tool output and tool call arguments included. Prints each matching line with its task number, child session, row id, role and time. Exit 0 when a line matched, 10 when none did and every transcript was searched whole, 11 when none did but not everything could be read (a task without a known child, an unreadable child, a bound).
    """
    common = Common.of(shared)
    from hermes_task.cli.session import Session, dropped, error_lines, shell, stderr_line  # lazy: the work
    from hermes_task.core.projection import PatternError, compile_pattern, search_status  # lazy: off --help
    from hermes_task.core.sanitize import check_id  # lazy: as the session
    from hermes_task.core.ui_strings import RECOVER  # lazy: as the session
    from hermes_task.reading.task_search import Query, Tally, search_parent  # lazy: as the session
    from hermes_task.render.searchout import JsonSearch, LinesSearch, TerminalSearch  # lazy: as the session

    session = Session(common)
    reporter: JsonSearch | LinesSearch | TerminalSearch
    if common.json:
        reporter = JsonSearch(common.env.write_stdout)
    else:  # readable groups on a terminal, tab-separated lines off one
        kind = TerminalSearch if session.target.tty else LinesSearch
        notes = partial(stderr_line, common)
        reporter = kind(session.target, notes, lambda code: not dropped(common.quiet, code), utc=utc)
    tally = Tally()

    def report(error: HermesError, status: int) -> None:  # with --json: `result`, what was found so far
        if error.code is not Code.INTERRUPTED:
            if isinstance(reporter, JsonSearch):
                reporter.error(error)
            error_lines(common, error)
        if isinstance(reporter, JsonSearch):
            reporter.result(tally, status)

    with shell(session, report=report):
        try:
            compiled = compile_pattern(pattern, regex=regex, ignore_case=ignore_case)
        except PatternError as exc:
            raise HermesError(Code.USAGE, f"PATTERN {exc}") from None
        parent = check_id(parent_id, what="PARENT_ID")
        query = Query(pattern=compiled, context=context, reasoning=reasoning)
        with session.reading() as (client, hints):
            search_parent(client, parent, hints, query, reporter, tally)
        status = int(search_status(tally.matches, complete=tally.complete))
        if tally.tasks == 0 and not common.json:
            stderr_line(common, RECOVER["no_tasks"].format(sid=parent), "dim")
        reporter.result(tally, status)
        if status:
            raise SystemExit(status)
