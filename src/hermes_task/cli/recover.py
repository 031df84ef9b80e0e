"""`hermes-task recover`: the delegated tasks of a parent chat, optionally as a nested tree."""

from __future__ import annotations

from typing import Annotated

import typer

from hermes_task.cli.common import Common, OutputFormat
from hermes_task.cli.options import ParentId, command_app, with_common
from hermes_task.core.ui_strings import TaskStatus

app = command_app()


@app.command()
@with_common(pager=False, formats=True)
def recover(
    parent_id: ParentId,
    recursive: Annotated[
        bool,
        typer.Option(
            "--recursive",
            help="Also read each task's child (when its id is known) and nest its own delegated tasks (depth <= 8).",
        ),
    ] = False,
    pages: Annotated[
        int | None,
        typer.Option(
            "--pages",
            min=1,
            help="Read at most N pages of each transcript (the newest 50 rows, then 500 per page; the "
            "parent's, nested ones, the Markdown report's), then warn that the list may be incomplete "
            "(default: every page).",
            show_default=False,
        ),
    ] = None,
    status: Annotated[
        list[TaskStatus] | None,
        typer.Option(
            "--status",
            metavar="STATUS",
            help="Show only tasks with this status (repeatable; a nested match keeps its parents). "
            "The summary, --exit-status and --watch still count every task.",
            case_sensitive=False,
            show_default=False,
        ),
    ] = None,
    header: Annotated[
        bool, typer.Option("--header", help="Piped output: print the column names first.")
    ] = False,
    exit_status: Annotated[
        bool,
        typer.Option(
            "--exit-status",
            help="Exit 0 when every task completed, 8 when any failed, errored, timed out, was "
            "interrupted or cancelled, or ended with no outcome reported (ended_unreported), 9 while any still runs.",
        ),
    ] = False,
    watch: Annotated[
        bool,
        typer.Option(
            "--watch",
            help="Keep reading the parent every 2 s (new rows only) until every task is terminal; "
            "tasks delegated meanwhile join, and a known child's end is checked each cycle. A terminal "
            "redraws the table; piped, one line per status change; --json, NDJSON events.",
        ),
    ] = False,
    timeout: Annotated[
        float | None,
        typer.Option(
            "--timeout",
            metavar="S",
            min=0.0,
            help="With --watch: stop after S seconds in all; exit 9 while a task still runs.",
            show_default=False,
        ),
    ] = None,
    start_timeout: Annotated[
        float | None,
        typer.Option(
            "--start-timeout",
            metavar="S",
            min=0.0,
            help="With --watch: give up after S seconds in which no read of the parent succeeded, or of "
            "'not found' (a typo, a dashboard that is down): exit with that failure's code, 4 not found, "
            "7 network [default: 60].",
            show_default=False,
        ),
    ] = None,
    full: Annotated[
        bool,
        typer.Option(
            "--full",
            help="With --format markdown: each transcript's rows in full (compaction summaries and status "
            "rows, uncut tool output).",
        ),
    ] = False,
    utc: Annotated[
        bool,
        typer.Option(
            "--utc", help="With --format markdown: the transcripts' times in UTC (default: local time)."
        ),
    ] = False,
    junit: Annotated[
        str | None,
        typer.Option(
            "--junit",
            metavar="FILE",
            help="Also write the tasks as a JUnit XML report to FILE (atomically; with --watch when the "
            "watch ends, also by a signal): a testcase per task, failure for a task that did not complete, "
            "error for one still running.",
            show_default=False,
        ),
    ] = None,
    *,
    common: Common,
) -> None:
    """List the tasks a parent chat delegated: goal, status, result, child session and usage when known.

    Reads PARENT_ID's transcript (GET only) and recovers its delegate_task spawn calls, their results and the async completion rows. The backends persist no child session id in the transcript: each task's child is looked up in the local Hermes store (by goal and order) and printed only once the dashboard confirms it. Feed the child id to show, follow or older. Each task's usage and cost (tokens, API calls, cost) is summed over its child's proven segments, from their session details. A task whose child is proven ended while the parent has no result is never running: it takes the outcome Hermes holds for the parent in the store (marked "store"), else ended_unreported.

    # is CALL.TASK, both 1-based: the task's delegate_task call in the chat, then its place in that call. Piped, each task is one tab-separated line (docs/commands.md "Piped output").

    --format markdown writes a report for GitHub and CI summaries: the table, then each task's goal, final answer and transcript in a collapsible block. --junit FILE also writes the tasks as JUnit XML, a testcase each.
    """
    wanted = tuple(dict.fromkeys(s.value for s in status or []))  # as given, once each
    if watch:
        if recursive or pages is not None:
            raise typer.BadParameter("--watch reads the parent only: drop --recursive and --pages")
        if common.output_format is OutputFormat.markdown:
            raise typer.BadParameter(
                "markdown is a report of one read: not with --watch", param_hint="'--format'"
            )
        from hermes_task.cli.watch import watch_parent  # lazy: the command's work, kept off --help

        watch_parent(
            common,
            parent_id,
            timeout=timeout,
            exit_status=exit_status,
            start_timeout=start_timeout,
            junit=junit,
        )
        return
    if (full or utc) and common.output_format is not OutputFormat.markdown:
        raise typer.BadParameter(
            "--full and --utc shape the Markdown report's transcripts: add --format markdown"
        )
    if timeout is not None:
        raise typer.BadParameter("--timeout bounds a --watch; the per-request timeout is --request-timeout")
    if start_timeout is not None:
        raise typer.BadParameter("--start-timeout bounds a --watch's wait for the parent: add --watch")
    from hermes_task.cli.run_recover import run_recover  # lazy: the command's work, kept off --help

    run_recover(
        common,
        parent_id,
        recursive=recursive,
        pages=pages,
        wanted=wanted,
        header=header,
        exit_status=exit_status,
        full=full,
        utc=utc,
        junit=junit,
    )
