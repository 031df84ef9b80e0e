"""`hermes-task older`: the newest page plus older pages of a delegated task's transcript.

One refresh (as `show`), then `--pages N` load-older batches (default 1), or `--all` to the
start with the largest pages the backend allows; `--min-text N` makes each batch read raw
pages until N text rows arrived. The batch logic is `hermes_task.reading.older` (no typer, no
rich); this module wires options, the stderr progress indicator and the output.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated

import typer

from hermes_task.cli.common import Common
from hermes_task.cli.options import ChildId, Full, NoHint, Reasoning, Tips, Utc, command_app, with_common
from hermes_task.cli.output import output_transcript
from hermes_task.cli.shell import (
    Known,
    color_enabled,
    connect,
    debug_writer,
    fail,
    guarded,
    resolve_settings,
    run,
    stderr_line,
)
from hermes_task.cli.store import store_hints

if TYPE_CHECKING:
    from hermes_task.reading.older import Progress


@contextmanager
def _progress(common: Common) -> Iterator[Callable[[Progress], None] | None]:
    """A transient "page N" status on stderr, only when stderr is a terminal."""
    if not common.env.isatty(common.env.stderr):
        yield None
        return
    from rich.console import Console

    # Not `console()`: with colour off it forces a non-terminal console, and a status
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

    def body(known: Known) -> None:
        from hermes_task.core.ids import check_id
        from hermes_task.core.limits import MAX_LIMIT, PAGE_LIMIT
        from hermes_task.failures import Code, HermesError
        from hermes_task.reading.older import Plan, combine_warnings, read_batches

        if pages is not None and all_pages:
            raise HermesError(Code.USAGE, "--pages and --all cannot be used together")
        if min_text is not None and all_pages:
            raise HermesError(Code.USAGE, "--min-text and --all cannot be used together")
        anchor = check_id(child_id, what="CHILD_ID")
        tips = [check_id(t, what="--tip") for t in tip or []]
        plan = (
            Plan(batches=None, limit=MAX_LIMIT)
            if all_pages
            else Plan(batches=pages or 1, min_text=min_text, limit=PAGE_LIMIT)
        )
        with connect(common) as client, store_hints(resolve_settings(common), debug_writer(common)) as hints:
            from hermes_task.reading.reader import TaskReader

            reader = TaskReader(client, anchor, tips=tips, hint=not no_hint, store=hints)
            known.rows = reader.rows
            snap = guarded(common, reader, reader.refresh)
            guarded(common, reader, reader.fill)
            if all_pages and snap.failure is None:
                from hermes_task.cli.older_stream import stream

                view = {"reasoning": reasoning, "full": full, "utc": utc, "more": ()}
                if stream(common, reader, combine_warnings(snap.warnings), **view):
                    return  # written as the pages were proven (cli/older_stream.py)
            with _progress(common) as on_page:
                outcome = guarded(common, reader, lambda: read_batches(reader, plan, on_page=on_page))
            guarded(common, reader, reader.read_goal)
            write = debug_writer(common)
            if write is not None:
                text = f" text={outcome.text_rows}" if min_text is not None and not all_pages else ""
                write(
                    f"older stop={outcome.stop} batches={outcome.batches} pages={outcome.pages} "
                    f"new={outcome.new_rows}{text} restarts={outcome.restarts} unique={len(reader.view().keys)}"
                )
            doc = reader.document(combine_warnings(snap.warnings, outcome.warnings))
            if snap.failure is not None and common.json:
                fail(common, snap.failure, doc.rows)
            more = () if all_pages else _more(pages or 1, min_text)
            output_transcript(common, doc, reasoning=reasoning, full=full, utc=utc, more=more)
            if not common.json and outcome.new_rows == 0 and not doc.coverage.has_older:
                from hermes_task.core.sanitize import clean_line

                sid = clean_line(doc.task.root_id)
                stderr_line(
                    common, f"note: nothing older: the newest page holds every row of task {sid}", "dim"
                )
            if snap.failure is not None:
                fail(common, snap.failure, doc.rows)

    run(common, body)
