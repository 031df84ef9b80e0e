"""`hermes-task older`: the newest page plus older pages of a delegated task's transcript.

One refresh (as `show`), then `--pages N` load-older batches (default 1), or `--all` to the
start with the largest pages the backend allows; `--min-text N` makes each batch read raw
pages until N text rows arrived. The batch logic is `hermes_task.reading.older_batches` (no typer, no
rich); this module wires options, the stderr progress indicator and the output.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated

import typer

from hermes_task.cli.common import Common
from hermes_task.cli.consoles import color_enabled
from hermes_task.cli.endings import Ending, stderr_line
from hermes_task.cli.options import ChildId, Full, NoHint, Reasoning, Tips, Utc, command_app, with_common
from hermes_task.cli.output import output_transcript
from hermes_task.cli.read_transcript import finish, read_transcript
from hermes_task.cli.session import Session
from hermes_task.cli.shell import run

if TYPE_CHECKING:
    from hermes_task.core.documents import TranscriptDoc
    from hermes_task.reading.older_batches import Progress
    from hermes_task.reading.reader import TaskReader


@contextmanager
def _progress(common: Common) -> Iterator[Callable[[Progress], None] | None]:
    """A transient "page N" status on stderr, only when stderr is a terminal."""
    if not common.env.isatty(common.env.stderr):
        yield None
        return
    from rich.console import Console

    # Not `Session.err_console()`: with colour off it forces a non-terminal console, and a status
    # line needs cursor movement even in monochrome.
    color = color_enabled(common, common.env.stderr)
    err = Console(file=common.env.stderr, no_color=not color, markup=False, highlight=False, emoji=False)
    with err.status("reading older rows", spinner="dots") as status:

        def update(progress: Progress) -> None:
            status.update(f"reading older rows: page {progress.page} ({progress.rows} rows known)")

        yield update


def _more(pages: int, min_text: int | None) -> tuple[str, ...]:
    """`older`'s options that read one batch more than these did (the footer's suggestion)."""
    text = ("--min-text", str(min_text)) if min_text is not None else ()
    return ("--pages", str(pages + 1), *text)


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

    def body(session: Session) -> Ending | None:
        from hermes_task.core.limits import MAX_LIMIT, PAGE_LIMIT
        from hermes_task.failures import Code, HermesError
        from hermes_task.reading.older_batches import PagingOutcome, Plan, combine_warnings, read_batches
        from hermes_task.reading.snapshot import Snapshot

        if pages is not None and all_pages:
            raise HermesError(Code.USAGE, "--pages and --all cannot be used together")
        if min_text is not None and all_pages:
            raise HermesError(Code.USAGE, "--min-text and --all cannot be used together")
        plan = (
            Plan(batches=None, limit=MAX_LIMIT)
            if all_pages
            else Plan(batches=pages or 1, min_text=min_text, limit=PAGE_LIMIT)
        )
        paged = PagingOutcome()
        unique: list[int] = []  # the rows known after the batches, for --debug

        def batches(reader: TaskReader, snap: Snapshot) -> Snapshot | None:
            nonlocal paged
            if all_pages and snap.failure is None:
                from hermes_task.cli.older_stream import stream

                view = {"reasoning": reasoning, "full": full, "utc": utc, "more": ()}
                if stream(session, reader, combine_warnings(snap.warnings), debug=session.debug, **view):
                    return None  # written as the pages were proven (cli/older_stream.py)
            with _progress(common) as on_page:
                paged = read_batches(reader, plan, on_page=on_page)
            unique.append(len(reader.view().keys))
            return Snapshot(snap.new_keys, combine_warnings(snap.warnings, paged.warnings), snap.failure)

        def output(doc: TranscriptDoc) -> None:
            more = () if all_pages else _more(pages or 1, min_text)
            output_transcript(session, doc, reasoning=reasoning, full=full, utc=utc, more=more)
            if not common.json and paged.new_rows == 0 and not doc.coverage.has_older:
                from hermes_task.core.sanitize import clean_line

                sid = clean_line(doc.task.root_id)
                stderr_line(
                    common, f"note: nothing older: the newest page holds every row of task {sid}", "dim"
                )

        reading = read_transcript(session, child_id=child_id, tip=tip, no_hint=no_hint, step=batches)
        write = session.debug
        if write is not None and reading.doc is not None:
            text = f" text={paged.text_rows}" if min_text is not None and not all_pages else ""
            write(
                f"older stop={paged.stop} batches={paged.batches} pages={paged.pages} "
                f"new={paged.new_rows}{text} restarts={paged.restarts} unique={unique[-1]}"
            )
        return finish(common, reading, output)

    run(Session(common), body)
