"""`hermes-task older`: the newest page plus older pages of a delegated task's transcript.

One refresh (as `show`), then `--pages N` load-older batches (default 1), or `--all` to the
start with the largest pages the backend allows; `--min-text N` makes each batch read raw
pages until N text rows arrived. The batch logic is `hermes_task.reading.older` (no typer, no
rich); this module wires options, the stderr progress indicator and the output.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated

import typer

from hermes_task.cli import (
    ChildId,
    Color,
    ColorMode,
    Debug,
    Gateway,
    Json,
    NoHint,
    Options,
    Pager,
    PasswordFile,
    Profile,
    RequestTimeout,
    Timeout,
    Tips,
    TokenFile,
    Url,
    Username,
    _color,
    _debug_writer,
    _env,
    _isatty,
    app,
    connect,
    fail,
    guarded,
    options_from,
    output_transcript,
    run,
)

if TYPE_CHECKING:
    from hermes_task.reading.older import Progress


@contextmanager
def _progress(opts: Options) -> Iterator[Callable[[Progress], None] | None]:
    """A transient "page N" status on stderr, only when stderr is a terminal."""
    if not _isatty(sys.stderr):
        yield None
        return
    from rich.console import Console

    # Not `console()`: with colour off it forces a non-terminal console, and a status
    # line needs cursor movement even in monochrome.
    color = _color(opts.color, sys.stderr, _env())
    err = Console(file=sys.stderr, no_color=not color, markup=False, highlight=False, emoji=False)
    with err.status("reading older rows", spinner="dots") as status:

        def update(progress: Progress) -> None:
            status.update(f"reading older rows: page {progress.page} ({progress.rows} rows known)")

        yield update


@app.command()
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
    reasoning: Annotated[
        bool, typer.Option("--reasoning", help="Show reasoning expanded (JSON always carries it).")
    ] = False,
    no_hint: NoHint = False,
    json_out: Json = False,
    pager: Pager = None,
    url: Url = None,
    gateway: Gateway = None,
    profile: Profile = None,
    token_file: TokenFile = None,
    username: Username = None,
    password_file: PasswordFile = None,
    request_timeout: RequestTimeout = None,
    timeout: Timeout = None,
    color: Color = ColorMode.auto,
    debug: Debug = False,
) -> None:
    """The newest page of a delegated task's transcript, then older pages.

    Rows are unique by (session_id, id), in the server's order; paging
    counts unique rows, so a task that keeps writing is read back without
    skipping or repeating a row. The output is the whole window, as with
    show; JSON coverage says whether older rows remain (has_older) and
    whether the task's first row is loaded (at_start).
    """
    opts = options_from(locals())

    def body() -> None:
        from hermes_task.core.ids import check_id
        from hermes_task.dashboard.client import MAX_LIMIT, PAGE_LIMIT
        from hermes_task.failures import Code, HermesError
        from hermes_task.reading.older import Plan, combine_warnings, read_batches

        if pages is not None and all_pages:
            raise HermesError(Code.USAGE, "--pages and --all cannot be used together")
        anchor = check_id(child_id, what="CHILD_ID")
        tips = [check_id(t, what="--tip") for t in tip or []]
        plan = (
            Plan(batches=None, limit=MAX_LIMIT)
            if all_pages
            else Plan(batches=pages or 1, min_text=min_text, limit=PAGE_LIMIT)
        )
        with connect(opts) as client:
            from hermes_task.reading.reader import TaskReader

            reader = TaskReader(client, anchor, tips=tips, hint=not no_hint)
            snap = guarded(opts, reader, reader.refresh)
            with _progress(opts) as on_page:
                outcome = guarded(opts, reader, lambda: read_batches(reader, plan, on_page=on_page))
            write = _debug_writer(opts)
            if write is not None:
                text = f" text={outcome.text_rows}" if min_text is not None and not all_pages else ""
                write(
                    f"older stop={outcome.stop} batches={outcome.batches} pages={outcome.pages} "
                    f"new={outcome.new_rows}{text} restarts={outcome.restarts} unique={len(reader.window.keys)}"
                )
            doc = reader.document(combine_warnings(snap.warnings, outcome.warnings))
            if snap.failure is not None and opts.json:
                fail(opts, snap.failure, doc.rows)
            output_transcript(opts, doc, reasoning=reasoning)
            if snap.failure is not None:
                fail(opts, snap.failure, doc.rows)

    run(opts, body)
