"""`recover`'s work without `--watch`: what `hermes-task recover PARENT` runs once typer has
parsed its arguments (`cli/recover.py` declares the command), callable with plain values.

It reads the parent (every page, or `--pages`), builds its tasks (nested with `--recursive`),
then writes them in the chosen format: JSON, the Markdown report (each shown task's child read
through `reading/taskread.py`), our table on a terminal, or tab-separated lines; then the JUnit
file (`--junit`), and exits by the verdict with `--exit-status`.
"""

from __future__ import annotations

from msgspec.structs import replace

from hermes_task.cli.common import Common, OutputFormat
from hermes_task.cli.output import emit_warnings
from hermes_task.cli.reports import JunitFile, Reader, check_target, child_reader
from hermes_task.cli.session import Session
from hermes_task.cli.shell import run
from hermes_task.core.documents import TasksDoc
from hermes_task.core.sanitize import check_id
from hermes_task.core.verdict import exit_status as verdict_exit
from hermes_task.core.verdict import only
from hermes_task.failures import Code, HermesError
from hermes_task.reading.api import SharedDetails
from hermes_task.reading.tasktree import read_parent_tasks
from hermes_task.render.jsontext import document
from hermes_task.render.rows import View, no_tasks_text, task_lines


def run_recover(
    common: Common,
    parent_id: str,
    *,
    recursive: bool = False,
    pages: int | None = None,
    wanted: tuple[str, ...] = (),
    header: bool = False,
    exit_status: bool = False,
    full: bool = False,
    utc: bool = False,
    junit: str | None = None,
) -> None:
    """The tasks of `parent_id`, once (`hermes-task recover --help`); `full` and `utc` shape
    the Markdown report's transcripts."""
    view = View(full=full, utc=utc)

    def body(session: Session) -> None:
        parent = check_id(parent_id, what="PARENT_ID")
        junit_file = None
        if junit is not None:
            check_target(junit)
            junit_file = JunitFile(junit, parent)
        with session.reading() as (client, hints):
            # One run, one answer per session (reading/parenttasks.py).
            shared = SharedDetails(client)
            try:
                got = read_parent_tasks(
                    client,
                    hints,
                    parent,
                    shared=shared,
                    recursive=recursive,
                    pages=pages,
                    debug=session.debug,
                )
            except (HermesError, KeyboardInterrupt) as exc:
                if junit_file is not None:
                    stop = HermesError(Code.INTERRUPTED, "stopped while the parent was read")
                    junit_file.write(
                        [], still="", read=None, failure=exc if isinstance(exc, HermesError) else stop
                    )
                raise
            doc, tasks, paths = got.doc, got.doc.tasks, got.paths
            markdown = common.output_format is OutputFormat.markdown
            # The report reads each child as asked (whole, or --pages); the JUnit file only
            # the newest page of the tasks that did not pass (the report's read when it has one).
            reader = child_reader(client, hints, paths, pages=pages if markdown else 1, shared=shared)
            output(session, doc, wanted, header=header, read=reader, view=view)
            if junit_file is not None:
                signal = junit_file.write(tasks, still="still running when read", read=reader)
                if signal is not None:
                    raise signal
        if exit_status:
            code = int(verdict_exit(tasks))
            if code:
                raise SystemExit(code)

    run(Session(common), body)


def output(
    session: Session,
    doc: TasksDoc,
    wanted: tuple[str, ...],
    *,
    header: bool,
    read: Reader | None = None,
    view: View | None = None,
) -> None:
    """The task list as JSON, the Markdown report (each shown task's child read through
    `read`, its rows as `view` asks), a table on a terminal, or tab-separated lines when
    piped; `wanted` statuses filter what is shown, never the summary."""
    common = session.common
    env = common.env
    shown = replace(doc, tasks=only(doc.tasks, wanted)) if wanted else doc
    if common.json:
        env.write_stdout(document(shown))
        return
    if common.output_format is OutputFormat.markdown and read is not None:
        from hermes_task.render.report import report  # lazy: only --format markdown

        for chunk in report(doc, shown.tasks, read, view or View(), wanted):
            env.write_stdout(chunk)  # each task's block as soon as its child is read
    elif not env.isatty(env.stdout):
        env.write_stdout("".join(line + "\n" for line in task_lines(shown.tasks, header=header)))
        if not shown.tasks:  # nothing on stdout: a script reads zero lines; people read stderr
            from rich.text import Text  # lazy: rich, only to say on stderr that no task was found

            session.err_console().print(Text(no_tasks_text(shown, wanted), style="dim"))
    else:
        from hermes_task.render import terminal  # lazy: rich, only on a terminal

        terminal.tasks(session.console(), shown, wanted)
    emit_warnings(common, doc.warnings)


__all__ = ["output", "run_recover"]
