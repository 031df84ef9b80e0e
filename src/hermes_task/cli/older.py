"""`hermes-task older`: the newest page (read as `show` reads it), then `--pages N` load-older
batches or `--all` to the start, streamed where it can be (`reading/stream.py`; docs/commands.md
"`older`")."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from itertools import chain
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from hermes_task.cli.options import (
    ChildId,
    Common,
    Full,
    NoHint,
    OutputFormat,
    Reasoning,
    Tips,
    Utc,
    command_app,
    with_common,
)
from hermes_task.failures import Code, HermesError

if TYPE_CHECKING:
    from hermes_task.cli.session import Session
    from hermes_task.core.documents import Row, TranscriptDoc, WarningItem
    from hermes_task.core.lineage import Cursor
    from hermes_task.reading.reader import Snapshot, TaskReader
    from hermes_task.reading.stream import Progress, StreamStats

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
    **shared: Any,
) -> None:
    """The newest page of a delegated task's transcript, then older pages.

    Rows are unique by (session_id, id), in the server's order (copies of one
    row carried into later segments, one message_uid, are shown once); paging
    counts unique rows, so a task that keeps writing is read back without
    skipping or repeating a row. The output is the whole window, as with
    show; JSON coverage says whether older rows remain (has_older) and
    whether the task's first row is loaded (at_start).
    """
    common = Common.of(shared)
    from hermes_task.cli.session import (  # lazy: the work, off --help
        Session,
        finish,
        output_transcript,
        read_transcript,
        shell,
    )
    from hermes_task.core.wire import MAX_LIMIT, PAGE_LIMIT  # lazy: as the session
    from hermes_task.reading.reader import Snapshot  # lazy: as the session
    from hermes_task.reading.stream import PagingOutcome, Plan, combine_warnings, read_batches  # lazy: as it

    with shell(Session(common)) as session:
        for given, name in ((pages, "--pages"), (min_text, "--min-text")):
            if given is not None and all_pages:
                raise HermesError(Code.USAGE, f"{name} and --all cannot be used together")
        batched = Plan(batches=pages or 1, min_text=min_text, limit=PAGE_LIMIT)
        plan = Plan(batches=None, limit=MAX_LIMIT) if all_pages else batched
        paged = PagingOutcome()
        unique: list[int] = []  # the rows known after the batches, for --debug

        def batches(reader: TaskReader, snap: Snapshot) -> Snapshot | None:
            nonlocal paged
            if all_pages and snap.failure is None:
                view = {"reasoning": reasoning, "full": full, "utc": utc, "more": ()}
                if stream(session, reader, combine_warnings(snap.warnings), **view):
                    return None  # written as the pages were proven
            with _progress(common) as on_page:
                paged = read_batches(reader, plan, on_page=on_page)
            unique.append(len(reader.view().keys))
            return Snapshot(snap.new_keys, combine_warnings(snap.warnings, paged.warnings), snap.failure)

        def output(doc: TranscriptDoc) -> None:
            text = ("--min-text", str(min_text)) if min_text is not None else ()
            more = () if all_pages else ("--pages", str((pages or 1) + 1), *text)  # one batch more
            output_transcript(session, doc, reasoning=reasoning, full=full, utc=utc, more=more)
            if not common.json and paged.new_rows == 0 and not doc.coverage.has_older:
                nothing_older(common, doc.task.root_id)

        reading = read_transcript(session, child_id=child_id, tip=tip, no_hint=no_hint, step=batches)
        write = session.debug
        if write is not None and reading.doc is not None:
            text = f" text={paged.text_rows}" if min_text is not None and not all_pages else ""
            write(
                f"older stop={paged.stop} batches={paged.batches} pages={paged.pages} "
                f"new={paged.new_rows}{text} restarts={paged.restarts} unique={unique[-1]}"
            )
        session.ending = finish(common, reading, output)


@contextmanager
def _progress(common: Common) -> Iterator[Callable[[Progress], None] | None]:
    """A transient "page N" status on stderr, only on a terminal."""
    if not common.env.isatty(common.env.stderr):
        yield None
        return
    from rich.console import Console  # lazy: rich, only for a terminal's progress line

    from hermes_task.cli.session import color_enabled  # lazy: the work, off --help

    # Not `Session.err_console()`: a status line needs cursor movement even without colour.
    color = color_enabled(common, common.env.stderr)
    err = Console(file=common.env.stderr, no_color=not color, markup=False, highlight=False, emoji=False)
    with err.status("reading older rows", spinner="dots") as status:
        yield lambda progress: status.update(
            f"reading older rows: page {progress.page} ({progress.rows} rows known)"
        )


def nothing_older(common: Common, root_id: str) -> None:
    """The note that no older page added a row (never with `--json`)."""
    from hermes_task.cli.session import stderr_line  # lazy: the work, off --help

    stderr_line(common, f"note: nothing older: the newest page holds every row of task {root_id}", "dim")


@dataclass
class _JsonRows:
    """`--json` as it is read: `ROWS_OPEN`, each page's rows as elements, then the rest (`close`)."""

    common: Common
    rows: int = 0
    opened: bool = False

    def add(self, rows: list[Row]) -> None:
        from hermes_task.render.jsontext import ROWS_OPEN, row_element  # lazy: the command's work

        text = "".join(row_element(row, first=self.rows + i == 0) for i, row in enumerate(rows))
        if not self.opened:
            text = ROWS_OPEN + text
            self.opened = True
        self.rows += len(rows)
        if text:
            self.common.env.write_stdout(text)

    def close(self, doc: Any) -> None:
        from hermes_task.render.jsontext import rows_close  # lazy: the command's work

        self.add([])
        self.common.env.write_stdout(rows_close(doc, self.rows))

    def fail(self, exc: HermesError | KeyboardInterrupt) -> NoReturn:
        """End the document as the error document of `exc`, its rows those written."""
        from hermes_task.cli.session import error_document, error_lines, failure_of  # lazy: the work

        error, status = failure_of(exc)
        self.close(error_document(error))
        error_lines(self.common, error)
        raise SystemExit(status)


def stream(session: Session, reader: TaskReader, warnings: list[WarningItem], **view: Any) -> bool:
    """Write `older --all` streamed, False (nothing written) if it cannot: one segment's pages each
    as it is proven (piped: from the one stating the goal), or `_lineage`'s."""
    from hermes_task.reading.reader import goal_of  # lazy: the command's work
    from hermes_task.reading.stream import (  # lazy: the command's work
        StreamStats,
        Unstreamable,
        lineage_streamable,
        stream_pages,
        streamable,
    )

    common = session.common
    if common.output_format is OutputFormat.markdown or not (common.json or session.target.plain):
        return False  # a terminal and --format markdown keep the window
    if not streamable(reader):
        return lineage_streamable(reader) and _lineage(session, reader, warnings, view)
    stats = StreamStats()
    pages = stream_pages(reader, stats)
    try:
        held = [next(pages)]
        reader.goal = goal_of(held[0]) if not reader.continues_parent else None
        seek = reader.goal is None and not reader.continues_parent and not common.json
        while seek and reader.goal is None and (page := next(pages, None)) is not None:
            held.append(page)
            reader.goal = goal_of(page)
    except Unstreamable:
        return False
    except HermesError as exc:
        _unwritten(common, exc, reader)
    _write(session, reader, stats, warnings, held, pages, view)
    return True


def _unwritten(common: Common, error: HermesError, reader: TaskReader) -> NoReturn:
    """A failure before anything was written: reported as without streaming."""
    from hermes_task.cli.session import report_failure  # lazy: the command's work

    report_failure(common, error, reader.rows())
    raise SystemExit(int(error.exit_status)) from None


def _lineage(session: Session, reader: TaskReader, warnings: list[WarningItem], view: dict[str, Any]) -> bool:
    """Several segments: every window read and spooled, then written in display order."""
    from hermes_task.reading.stream import LineageRows, StreamStats, Unstreamable  # lazy: the work

    common = session.common
    stats = StreamStats()
    with closing(LineageRows(reader, stats)) as lineage:
        try:
            plan = lineage.read()
            lineage.count()
            if plan.blocked is None and not reader.continues_parent:
                reader.goal = lineage.goal
            reader.read_goal()  # the root's first row, when the windows showed no goal
        except Unstreamable:
            return False
        except HermesError as exc:
            if not stats.pages or not common.json:
                _unwritten(common, exc, reader)
            out = _JsonRows(common)  # the rows read so far, then the error
            lineage.read_so_far()
            for rows in lineage.pages():
                out.add(rows)
            out.fail(exc)
        _write(session, reader, stats, warnings, [], lineage.pages(), view, lineage.cursor())
        return True


def _write(
    session: Session,
    reader: TaskReader,
    stats: StreamStats,
    warnings: list[WarningItem],
    first: list[list[Row]],
    pages: Iterator[list[Row]],
    view: dict[str, Any],
    cur: Cursor | None = None,
) -> None:
    """The document with `first`, then `pages`, each page written as it comes; `--json`'s goal
    is the first row stating one on any page (the task head comes after the rows)."""
    from msgspec.structs import replace  # lazy: the command's work

    from hermes_task.cli.session import emit_warnings  # lazy: the command's work
    from hermes_task.reading.reader import goal_of  # lazy: the command's work
    from hermes_task.reading.stream import finish  # lazy: the command's work
    from hermes_task.render.rows import Segments, View, footer_text, head_text, rows_text  # lazy: the work

    doc = replace(reader.document(warnings), rows=[])
    common = session.common
    out, painted, segments, shown = _JsonRows(common), View(**view), Segments(doc.task), 0
    if common.json:
        seek_goal = reader.goal is None and cur is None and not reader.continues_parent
        try:
            for rows in chain(first, pages):
                out.add(rows)
                if seek_goal and reader.goal is None:
                    reader.goal = goal_of(rows)
        except (HermesError, KeyboardInterrupt) as exc:
            out.fail(exc)
    else:
        common.env.write_stdout(head_text(doc, session.target.columns))
        for rows in chain(first, pages):  # a failure: the rows written stay, the shell reports it
            shown += len(rows)
            common.env.write_stdout(rows_text(rows, painted, segments))
    if session.debug is not None:
        session.debug(f"older streamed pages={stats.pages} unique={stats.unique} held_max={stats.held_max}")
    final = finish(reader, doc, stats, warnings, cur)
    if common.json:
        out.close(final)
        return
    common.env.write_stdout(footer_text(final, painted, shown) + "\n")
    emit_warnings(common, final.warnings)
    if cur is None and stats.older == 0:  # as the windowed path: no older page added a row
        nothing_older(common, final.task.root_id)
