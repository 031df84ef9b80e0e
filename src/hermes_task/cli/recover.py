"""`hermes-task recover`: the delegated tasks of a parent chat, once or (`--watch`) until every
task is terminal; and the parent loops `follow --parent` and `tui` share (`drive`,
`parent_loop`). The JUnit file: docs/commands.md "`--junit FILE`"."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Annotated, Any

import typer

from hermes_task.cli.options import Common, Header, OutputFormat, ParentId, command_app, seconds, with_common
from hermes_task.core.ui_strings import TaskStatus
from hermes_task.failures import Code, ExitStatus, HermesError, interrupt_status

if TYPE_CHECKING:
    from hermes_task.cli.session import Session
    from hermes_task.core.documents import TaskEntry, TasksDoc
    from hermes_task.core.projection import RowFilter
    from hermes_task.reading.api import SharedDetails
    from hermes_task.reading.family import Tagged
    from hermes_task.reading.polling import PollConfig
    from hermes_task.reading.reader import TaskReader, Transcript
    from hermes_task.reading.tasktree import Unread
    from hermes_task.reading.watcher import Watcher
    from hermes_task.render.rows import View

INTERVAL = 2.0
JITTER: Callable[[], float] = random.random  # the back-off's; tests replace it, as the Environment's clock
STOPPED = {129: "SIGHUP", 130: "Ctrl-C", 143: "SIGTERM"}
Reader = Callable[["TaskEntry", str], "Transcript | Unread"]  # a task's child as read, or why not


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
    header: Header = False,
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
        seconds(
            "--timeout",
            help="With --watch: stop after S seconds in all; exit 9 while a task still runs.",
            show_default=False,
        ),
    ] = None,
    start_timeout: Annotated[
        float | None,
        seconds(
            "--start-timeout",
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
    **shared: Any,
) -> None:
    """List the tasks a parent chat delegated: goal, status, result, child session and usage when known.

    Reads PARENT_ID's transcript (GET only) and recovers its delegate_task spawn calls, their results and the async completion rows. The backends persist no child session id in the transcript: each task's child is looked up in the local Hermes store (by goal and order) and printed only once the dashboard confirms it. Feed the child id to show, follow or older. Each task's usage and cost (tokens, API calls, cost) is summed over its child's proven segments, from their session details. A task whose child is proven ended while the parent has no result is never running: it takes the outcome Hermes holds for the parent in the store (marked "store"), else ended_unreported.

    # is CALL.TASK, both 1-based: the task's delegate_task call in the chat, then its place in that call. Piped, each task is one tab-separated line (docs/commands.md "Piped output").

    --format markdown writes a report for GitHub and CI summaries: the table, then each task's goal, final answer and transcript in a collapsible block. --junit FILE also writes the tasks as JUnit XML, a testcase each.
    """
    common = Common.of(shared)
    if watch:
        if recursive or pages is not None:
            raise typer.BadParameter("--watch reads the parent only: drop --recursive and --pages")
        limits = {"timeout": timeout, "exit_status": exit_status, "start_timeout": start_timeout}
        watch_parent(common, parent_id, limits, junit)
        return
    if (full or utc) and common.output_format is not OutputFormat.markdown:
        raise typer.BadParameter(
            "--full and --utc shape the Markdown report's transcripts: add --format markdown"
        )
    if timeout is not None:
        raise typer.BadParameter("--timeout bounds a --watch; the per-request timeout is --request-timeout")
    if start_timeout is not None:
        raise typer.BadParameter("--start-timeout bounds a --watch's wait for the parent: add --watch")
    from hermes_task.cli.session import Session, shell  # lazy: the work, off --help
    from hermes_task.core.sanitize import check_id  # lazy: as the session
    from hermes_task.core.verdict import exit_status as verdict_exit  # lazy: as the session
    from hermes_task.reading.api import SharedDetails  # lazy: as the session
    from hermes_task.reading.tasktree import read_parent_tasks  # lazy: as the session
    from hermes_task.render.rows import View  # lazy: as the session

    with shell(Session(common)) as session:
        parent = check_id(parent_id, what="PARENT_ID")
        junit_file = JunitFile(junit, parent)
        with session.reading() as (client, hints):
            details, debug = SharedDetails(client), session.debug  # one run, one answer per session
            try:
                got = read_parent_tasks(
                    client, hints, parent, shared=details, recursive=recursive, pages=pages, debug=debug
                )
            except (HermesError, KeyboardInterrupt) as exc:
                stop = HermesError(Code.INTERRUPTED, "stopped while the parent was read")
                junit_file.write([], failure=exc if isinstance(exc, HermesError) else stop)
                raise
            markdown = common.output_format is OutputFormat.markdown
            # The report reads each child as asked; the JUnit file the newest page of a task
            # that did not pass (the report's read when there is one).
            reader = child_reader(session, got.paths, pages=pages if markdown else 1, shared=details)
            output(session, got.doc, status or [], header, reader, View(full=full, utc=utc))
            signal = junit_file.write(got.doc.tasks, when="read", read=reader)
            if signal is not None:
                raise signal
        if exit_status and (code := int(verdict_exit(got.doc.tasks))):
            raise SystemExit(code)


def output(
    session: Session, doc: TasksDoc, status: list[TaskStatus], header: bool, read: Reader, view: View
) -> None:
    """The tasks as JSON, the Markdown report, a table or piped lines; `--status` filters them."""
    from msgspec.structs import replace  # lazy: the work, off --help

    from hermes_task.cli.session import emit_warnings  # lazy: as replace
    from hermes_task.core.verdict import only  # lazy: as replace
    from hermes_task.render.jsontext import document  # lazy: as replace
    from hermes_task.render.rows import no_tasks_text, task_lines  # lazy: as replace

    common = session.common
    env = common.env
    wanted = tuple(dict.fromkeys(s.value for s in status))  # as given, once each
    shown = replace(doc, tasks=only(doc.tasks, wanted)) if wanted else doc
    if common.json:
        env.write_stdout(document(shown))
    elif common.output_format is OutputFormat.markdown:
        from hermes_task.render.report import report  # lazy: only --format markdown

        for chunk in report(doc, shown.tasks, read, view, wanted):
            env.write_stdout(chunk)  # each task's block as soon as its child is read
    elif not env.isatty(env.stdout):
        env.write_stdout("".join(line + "\n" for line in task_lines(shown.tasks, header=header)))
        if not shown.tasks:  # nothing on stdout: a script reads zero lines; people read stderr
            from rich.text import Text  # lazy: rich, only to say on stderr that no task was found

            session.err_console().print(Text(no_tasks_text(shown, wanted), style="dim"))
    else:
        from hermes_task.render import terminal  # lazy: rich, only on a terminal

        terminal.tasks(session.console(), shown, wanted)
    emit_warnings(common, doc.warnings)  # none with --json


def child_reader(
    session: Session,
    paths: dict[str, tuple[str, ...]],
    *,
    pages: int | None,
    shared: SharedDetails | None = None,
) -> Reader:
    """Each task's child read once, owned by a segment of its conversation's proven lineage."""
    from hermes_task.core.ui_strings import RECOVER  # lazy: the work, off --help
    from hermes_task.reading.tasktree import ChildReads  # lazy: as RECOVER

    reads = ChildReads(
        session.client, session.hints, pages=pages, bound=RECOVER["report_bound"], shared=shared
    )

    def read(task: TaskEntry, conversation: str) -> Transcript | Unread:
        return reads.read(task, frozenset(paths.get(conversation, (conversation,))))

    return read


@dataclass
class JunitFile:
    """The `--junit FILE` of one run (`path` None: none), checked before any read, written once."""

    path: str | None
    parent_id: str
    written: bool = False

    def __post_init__(self) -> None:
        from hermes_task.cli.session import check_target  # lazy: the work, off --help

        if self.path is not None:
            check_target(self.path)

    def write(
        self,
        tasks: Sequence[TaskEntry],
        *,
        when: str = "",
        read: Reader | None = None,
        failure: HermesError | None = None,
    ) -> KeyboardInterrupt | None:
        """The report of `tasks`, each not passed with its child's last rows (`read`; None: not
        read), one still running saying `when`; a stop signal ends the reading and is returned."""
        from hermes_task.cli.session import write_atomic  # lazy: the work, off --help
        from hermes_task.reading.tasktree import Unread  # lazy: as write_atomic
        from hermes_task.render.report import document, failed_run, last_rows_text, suites_of  # lazy: as it

        if self.written or self.path is None:
            return None
        self.written = True
        stopped: list[KeyboardInterrupt] = []

        def last_rows(task: TaskEntry, conversation: str) -> str:
            if read is None:
                return last_rows_text(Unread("not_read", f"not read: {when}"))
            if not stopped:
                try:
                    return last_rows_text(read(task, conversation))
                except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM / SIGHUP as `Interrupted`
                    stopped.append(exc)
            return last_rows_text(Unread("not_read", "the command was stopped"))

        suites = suites_of(self.parent_id, tasks, f"still running when {when}", last_rows)
        if failure is not None:
            suites[0][1].append(failed_run(self.parent_id, failure.code.value, failure.message))
        write_atomic(self.path, document(suites), "--junit")
        return stopped[0] if stopped else None


def watch_parent(common: Common, parent_id: str, limits: dict[str, Any], junit: str | None) -> None:
    """`recover PARENT --watch`: until every task is terminal; exits with the outcome's status."""
    if common.output_format is OutputFormat.markdown:
        raise typer.BadParameter(
            "markdown is a report of one read: not with --watch", param_hint="'--format'"
        )
    from hermes_task.cli.session import Session  # lazy: the work, off --help
    from hermes_task.render.watchout import JsonEvents, LinesWatch, LiveWatch  # lazy: as the session

    env = common.env
    session = Session(common)
    reporter: JsonEvents | LinesWatch | LiveWatch
    if common.json:
        reporter = JsonEvents(env.write_stdout, env.write_stderr)
    elif env.isatty(env.stdout):
        reporter = LiveWatch(session.console(), session.err_console, parent_id, INTERVAL)
        if env.isatty(env.stderr):  # the same screen: a debug line goes above the table
            session.debug_above = partial(reporter.note, "debug: ", style="")
    else:
        reporter = LinesWatch(env.write_stdout, session.err_console, INTERVAL)
    try:
        drive(session, parent_id, reporter, limits, junit=junit)
    finally:  # every ending (a failure, Ctrl-C, an internal error) shows the cursor again
        if isinstance(reporter, LiveWatch):
            reporter.close()


def drive(
    session: Session,
    parent_id: str,
    reporter: Any,
    limits: dict[str, Any],
    *,
    rows: RowFilter | None = None,
    junit: str | None = None,
    interval: float = INTERVAL,
) -> None:
    """Run `recover --watch`'s loop, or with `rows` `follow --parent`'s, to its outcome in the shell."""
    from hermes_task.cli.session import live_failure, shell, stderr_line  # lazy: off --help
    from hermes_task.core.sanitize import check_id  # lazy: as the session
    from hermes_task.reading.polling import PollConfig  # lazy: as the session

    common = session.common
    config = PollConfig(interval=interval, **{k: v for k, v in limits.items() if v is not None})
    files: list[JunitFile] = []  # the JUnit file, once the parent id is valid and FILE writable

    def report(error: HermesError, status: int) -> None:
        """An ending before the tasks were known: the JUnit file says so (not a usage error's)."""
        stop = f"stopped by {STOPPED.get(status, 'a signal')} before the tasks were read"
        failure = HermesError(Code.INTERRUPTED, stop) if error.code is Code.INTERRUPTED else error
        if files and error.exit_status is not ExitStatus.USAGE:
            try:
                files[0].write([], failure=failure)
            except HermesError as unwritten:  # the command's own failure still ends it
                stderr_line(common, f"error: {unwritten.message}", "bold red")
        live_failure(common, reporter, error, status, [])

    with shell(session, report=report):
        parent = check_id(parent_id, what="PARENT_ID")
        files.append(JunitFile(junit, parent))
        with session.reading():
            watcher = parent_loop(session, parent, reporter, config, family=rows is not None, rows=rows)
            outcome = watcher.run()
            when = {
                "timeout": "--timeout ran out",
                "interrupted": f"the watch was stopped ({STOPPED.get(outcome.exit_code, 'a signal')})",
                "failed": f"the watch failed: {outcome.failure.message}" if outcome.failure else None,
            }.get(outcome.ending) or "the watch ended"
            quiet = outcome.ending in ("interrupted", "failed")  # then no last rows are read
            read = None if quiet else child_reader(session, {parent: watcher.reader.path}, pages=1)
            stop = files[0].write(watcher.entries, when=when, read=read, failure=outcome.failure)
            if stop is not None:  # the watch's `result` is written: end as the signal says
                raise SystemExit(interrupt_status(stop))
        if outcome.exit_code:
            raise SystemExit(outcome.exit_code)


def parent_loop(
    session: Session,
    parent: str,
    reporter: Any,
    config: PollConfig,
    sleep: Callable[[float], None] | None = None,
    *,
    family: bool = True,
    rows: RowFilter | None = None,
    depth: int = 0,
) -> Watcher:
    """A parent's loop: `recover --watch`'s, or (`family`) also each proven child's rows, read as
    `follow CHILD` reads them (no usage reads with `rows`); `depth` levels of nested tasks. Each
    finds the store's children and settles those ended unreported; `--quiet` drops setup warnings."""
    from hermes_task.cli.session import QuietNotes, idle_sleep  # lazy: the work, off --help
    from hermes_task.core.projection import RowFilter  # lazy: as the session
    from hermes_task.reading.api import SharedDetails  # lazy: as the session
    from hermes_task.reading.family import FamilyFollower  # lazy: as the session
    from hermes_task.reading.hints import admit, find_children  # lazy: as the session
    from hermes_task.reading.reader import TaskReader  # lazy: as the session
    from hermes_task.reading.tasktree import MAX_CHECKS_PER_CYCLE, Unreported  # lazy: as the session
    from hermes_task.reading.watcher import Watcher  # lazy: as the session

    client, hints, env, debug = session.client, session.hints, session.env, session.debug
    shared = SharedDetails(client)  # one cycle's details: the loop clears it each cycle
    if session.common.quiet and not session.common.json:
        reporter = QuietNotes(reporter)

    def timing(warns: Any, usage: bool = True) -> dict[str, Any]:
        settle = Unreported(
            client,
            hints,
            per_cycle=MAX_CHECKS_PER_CYCLE,
            usage=usage,
            debug=debug,
            warn=warns.warning,
            shared=shared,
        )

        def resolve(messages: Any, tasks: Any) -> Any:
            return settle(messages, find_children(client, hints, messages, tasks, shared))

        return {
            "clock": env.clock,
            "sleep": sleep or env.sleep or idle_sleep(env.stdout),
            "jitter": JITTER,
            "debug": debug,
            "resolve": resolve,
            "shared": shared,
            "notes": hints.warnings,  # store_unavailable, once per run, in every live command
            "recheck": settle,
        }

    reader = TaskReader(client, parent, hint=False)
    if not family:
        return Watcher(reader, reporter, config, **timing(reporter))

    def open_child(child_id: str, parents: frozenset[str]) -> TaskReader:
        gate = admit(parents, client.detail)
        return TaskReader(client, child_id, hint=True, store=hints, admit=gate, shared=shared)

    def nest(child: TaskReader, tagged: Tagged) -> Watcher:
        return Watcher(child, tagged, config, **timing(tagged))

    timed = timing(reporter, usage=rows is None)
    return FamilyFollower(
        reader, reporter, config, open_child, rows=rows or RowFilter(), nest=nest, depth=depth, **timed
    )
