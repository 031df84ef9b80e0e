"""`older --all` written as its pages are proven (`reading/stream.py` reads them).

Piped plain text: the goal line after the first page, each page's rows as soon as it is
read, the footer and warnings at the end. `--json`: the document keeps its exact bytes, but
the task head (`segments[].rows_shown`) comes before `rows` and counts them, so the rows are
encoded as they arrive into an unlinked temporary file and the document is written head,
rows, tail once the last page is read: bounded memory, output at the end. A task of several
segments is read whole first (`reading/lineage_stream.py`, spooled), then written the same
way, piped too. A terminal (paged or painted) keeps today's whole-window path.

A failure after rows were read: piped rows already written stay and the error goes to
stderr; with `--json` the error document (`kind: "error"`) carries every row read so far,
streamed from the same file. Either way the exit status is the error's.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator
from itertools import chain
from typing import IO, Any, NoReturn

from msgspec.structs import replace

from hermes_task.cli.common import Common, OutputFormat
from hermes_task.cli.endings import error_document, error_lines, report_failure
from hermes_task.cli.output import emit_warnings
from hermes_task.cli.session import Session
from hermes_task.core.documents import Row, TranscriptDoc, WarningItem
from hermes_task.core.lineage_window import Cursor
from hermes_task.failures import HermesError
from hermes_task.reading.lineage_stream import LineageRows, lineage_streamable
from hermes_task.reading.reader import TaskReader
from hermes_task.reading.stream import StreamStats, Unstreamable, finish, goal_of, stream_pages, streamable
from hermes_task.render.jsontext import RowsDocument, row_element
from hermes_task.render.plain_rows import head_text, rows_text
from hermes_task.render.rows import Segments, View, footer_text


def wanted(session: Session) -> bool:
    """Streaming applies to `--json` and piped plain text (a terminal and `--format markdown`
    keep the window)."""
    common = session.common
    if common.output_format is OutputFormat.markdown:
        return False
    return common.json or session.target.plain


class _JsonSpool:
    """Rows encoded as document elements, into an unlinked temporary file."""

    def __init__(self) -> None:
        self.file: IO[str] = tempfile.TemporaryFile("w+", encoding="ascii")  # noqa: SIM115 (closed in `write`)
        self.rows = 0

    def add(self, rows: list[Row]) -> None:
        for row in rows:
            self.file.write(row_element(row, first=self.rows == 0))
            self.rows += 1

    def write(self, common: Common, doc: Any) -> None:
        out = RowsDocument(doc)
        spool = self.file
        try:
            spool.seek(0)
            common.env.write_stdout(out.open_text())
            while chunk := spool.read(1 << 16):
                common.env.write_stdout(chunk)
            common.env.write_stdout(out.close_text(self.rows))
        finally:
            spool.close()


def stream(
    session: Session,
    reader: TaskReader,
    warnings: list[WarningItem],
    *,
    debug: Callable[[str], None] | None,
    **view: Any,
) -> bool:
    """Write `older --all` streamed; False (nothing written) when it cannot stream. `debug`
    is the run's `--debug` writer (`Session.debug`)."""
    if not wanted(session):
        return False
    if streamable(reader):
        return _segment(session, reader, warnings, debug, view)
    if lineage_streamable(reader):
        return _lineage(session, reader, warnings, debug, view)
    return False


def _segment(
    session: Session,
    reader: TaskReader,
    warnings: list[WarningItem],
    debug: Callable[[str], None] | None,
    view: dict[str, Any],
) -> bool:
    """One segment: rows written (piped) or spooled (`--json`) as each page is proven."""
    common = session.common
    stats = StreamStats()
    pages = stream_pages(reader, stats)
    try:
        first = next(pages)
    except Unstreamable:
        return False
    except HermesError as exc:
        report_failure(common, exc, reader.rows())  # nothing written yet: as without streaming
        raise SystemExit(int(exc.exit_status)) from None
    reader.goal = goal_of(first) if not reader.continues_parent else None
    doc = replace(reader.document(warnings), rows=[])  # the rows come page by page
    _write(session, reader, doc, stats, warnings, [first], pages, debug, view)
    return True


def _lineage(
    session: Session,
    reader: TaskReader,
    warnings: list[WarningItem],
    debug: Callable[[str], None] | None,
    view: dict[str, Any],
) -> bool:
    """Several segments: every window read and spooled, then written in display order
    (`reading/lineage_stream.py`); nothing is written before the last page is read."""
    common = session.common
    stats = StreamStats()
    lineage = LineageRows(reader, stats)
    try:
        try:
            plan = lineage.read()
        except Unstreamable:
            return False
        except HermesError as exc:
            _fail_read(common, exc, reader, lineage)
        lineage.count()
        if plan.blocked is None and not reader.continues_parent:
            reader.goal = lineage.goal
        try:
            reader.read_goal()  # the root's first row, when the windows showed no goal
        except HermesError as exc:
            _fail_read(common, exc, reader, lineage)
        doc = replace(reader.document(warnings), rows=[])
        _write(session, reader, doc, stats, warnings, [], lineage.pages(), debug, view, lineage.cursor())
        return True
    finally:
        lineage.close()


def _fail_read(common: Common, error: HermesError, reader: TaskReader, lineage: LineageRows) -> None:
    """A failure before anything was written: the rows read so far (`--json`), then exit."""
    if not lineage.stats.pages:
        report_failure(common, error, reader.rows())
        raise SystemExit(int(error.exit_status))
    spool = None
    if common.json:
        spool = _JsonSpool()
        lineage.read_so_far()
        for rows in lineage.pages():
            spool.add(rows)
    _fail(common, error, spool)


def _write(
    session: Session,
    reader: TaskReader,
    doc: TranscriptDoc,
    stats: StreamStats,
    warnings: list[WarningItem],
    first: list[list[Row]],
    pages: Iterator[list[Row]],
    debug: Callable[[str], None] | None,
    view: dict[str, Any],
    cur: Cursor | None = None,
) -> None:
    """The document `doc` (rows left out) with `first`, then `pages`: piped text written
    page by page, `--json` spooled and written at the end."""
    common = session.common
    spool = _JsonSpool() if common.json else None
    painted = View(**view)
    shown = 0
    try:
        if spool is not None:
            for rows in chain(first, pages):
                spool.add(rows)
        else:
            out = session.target
            segments = Segments(doc.task)
            common.env.write_stdout(head_text(doc, out.columns))
            for rows in chain(first, pages):
                shown += len(rows)
                common.env.write_stdout(rows_text(rows, painted, segments))
    except HermesError as exc:
        _fail(common, exc, spool)
    if debug is not None:
        debug(f"older streamed pages={stats.pages} unique={stats.unique} held_max={stats.held_max}")
    final = finish(reader, doc, stats, warnings, cur)
    if spool is not None:
        spool.write(common, final)
        return
    common.env.write_stdout(footer_text(final, painted, shown) + "\n")
    emit_warnings(common, final.warnings)


def _fail(common: Common, error: HermesError, spool: _JsonSpool | None) -> NoReturn:
    """Report `error` after rows were streamed, then exit with its status."""
    if spool is not None:
        spool.write(common, error_document(error))  # its rows: those spooled
        error_lines(common, error)
    else:
        report_failure(common, error)
    raise SystemExit(int(error.exit_status))
