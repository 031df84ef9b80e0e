"""`hermes-task recover`: the delegated tasks of a parent chat, optionally as a nested tree."""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import typer

from hermes_task.cli.common import Common
from hermes_task.cli.options import ParentId, command_app, with_common
from hermes_task.cli.output import emit_warnings
from hermes_task.cli.shell import Known, connect, console, debug_writer, resolve_settings, run
from hermes_task.cli.store import store_hints

if TYPE_CHECKING:
    from hermes_task.core.documents import TasksDoc


class TaskStatus(StrEnum):
    running = "running"
    completed = "completed"
    failed = "failed"
    error = "error"
    interrupted = "interrupted"
    cancelled = "cancelled"
    timeout = "timeout"
    unknown = "unknown"
    ended_unreported = "ended_unreported"


app = command_app()


@app.command()
@with_common(pager=False)
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
            help="Read at most N pages of each transcript (the newest 50 rows, then 500 per page), "
            "then warn that the list may be incomplete (default: every page).",
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
    *,
    common: Common,
) -> None:
    """List the tasks a parent chat delegated: goal, status, result and child session when known.

    Reads PARENT_ID's transcript (GET only) and recovers its delegate_task spawn calls, their results and the async completion rows. The backends persist no child session id in the transcript: each task's child is looked up in the local Hermes store (by goal and order) and printed only once the dashboard confirms it. Feed the child id to show, follow or older. A task whose child is proven ended while the parent has no result is never running: it takes the outcome Hermes holds for the parent in the store (marked "store"), else ended_unreported.

    # is CALL.TASK, both 1-based: the task's delegate_task call in the chat, then its place in that call. Piped, each task is one tab-separated line (docs/commands.md "Piped output").
    """
    wanted = tuple(dict.fromkeys(s.value for s in status or []))  # as given, once each
    if watch:
        from hermes_task.cli.watch import watch_parent

        if recursive or pages is not None:
            raise typer.BadParameter("--watch reads the parent only: drop --recursive and --pages")
        watch_parent(common, parent_id, timeout=timeout, exit_status=exit_status, start_timeout=start_timeout)
        return
    if timeout is not None:
        raise typer.BadParameter("--timeout bounds a --watch; the per-request timeout is --request-timeout")
    if start_timeout is not None:
        raise typer.BadParameter("--start-timeout bounds a --watch's wait for the parent: add --watch")

    def body(_known: Known) -> None:
        from hermes_task.core.ids import check_id

        parent = check_id(parent_id, what="PARENT_ID")
        with connect(common) as client, store_hints(resolve_settings(common), debug_writer(common)) as hints:
            from hermes_task.core.documents import TasksDoc
            from hermes_task.core.verdict import summarize
            from hermes_task.reading.details import SharedDetails
            from hermes_task.reading.storehints import find_children
            from hermes_task.reading.tasktree import build, read_conversation
            from hermes_task.reading.unreported import Unreported

            # One run, one answer per session: a detail read by one proof serves every later
            # reader (docs/identity.md "Reads side by side").
            shared = SharedDetails(client)
            debug = debug_writer(common)
            settle = Unreported(client, hints, debug=debug, shared=shared)
            conversation = read_conversation(client, parent, hint=False, pages=pages, shared=shared)
            tasks, warnings = build(
                conversation,
                lambda sid: read_conversation(
                    client, sid, hint=True, pages=pages, store=hints, shared=shared
                ),
                recursive=recursive,
                resolve=lambda conv, found: settle(
                    conv.messages, find_children(client, hints, conv.messages, found, shared)
                ),
                read_detail=shared,
                debug=debug,
            )
            warnings += hints.warnings()
        doc = TasksDoc(parent_id=parent, tasks=tasks, summary=summarize(tasks), warnings=warnings)
        output(common, doc, wanted, header=header)
        if exit_status:
            from hermes_task.core.verdict import exit_status as verdict_exit

            code = int(verdict_exit(tasks))
            if code:
                raise SystemExit(code)

    run(common, body)


def output(common: Common, doc: TasksDoc, wanted: tuple[str, ...], *, header: bool) -> None:
    """The task list as JSON, a table on a terminal, or tab-separated lines when piped;
    `wanted` statuses filter what is shown, never the summary."""
    from msgspec.structs import replace

    from hermes_task.core.verdict import only

    env = common.env
    shown = replace(doc, tasks=only(doc.tasks, wanted)) if wanted else doc
    if common.json:
        from hermes_task.render.jsontext import document

        env.write_stdout(document(shown))
        return
    if not env.isatty(env.stdout):
        from hermes_task.render.plain import task_lines

        env.write_stdout("".join(line + "\n" for line in task_lines(shown.tasks, header=header)))
        if not shown.tasks:  # nothing on stdout: a script reads zero lines; people read stderr
            from rich.text import Text

            from hermes_task.render.terminal import no_tasks_text

            console(common, stderr=True).print(Text(no_tasks_text(shown, wanted), style="dim"))
    else:
        from hermes_task.render import terminal

        terminal.tasks(console(common), shown, wanted)
    emit_warnings(common, doc.warnings)
