"""`older --all` written as its pages are proven (`reading/stream.py` reads them).

Piped plain text: the goal line once the goal is known (the first page that states it: a
delegated child's goal is its first row, so normally the first page; the pages before it are
held meanwhile), each page's rows as soon as it is read, the footer, the windowed path's
"nothing older" note when the newest page held every row, and warnings at the end. `--json`: the document opens (`schema_version`,
`rows`) with the first page and each page's rows follow as elements as they are proven;
everything that depends on how the read ends (`kind`, the task with each segment's
`rows_shown`, coverage, warnings) comes after `rows` and is written last: byte for byte the
document the whole-window path writes, in memory of one page. A task of several segments is
read whole first (`reading/lineage_stream.py`, spooled), then written the same way, piped
too. A terminal (paged or painted) keeps the whole-window path.

A failure after rows were written (a page's error, Ctrl-C, SIGTERM, SIGHUP): piped rows
already written stay and the error goes to stderr; with `--json` the open document is ended
as the error document (`kind: "error"`), whose `rows` are those written. Either way the exit
status is the failure's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from itertools import chain
from typing import Any, NoReturn

from msgspec.structs import replace

from hermes_task.cli.common import Common, OutputFormat
from hermes_task.cli.endings import error_document, error_lines, failure_of, report_failure, stderr_line
from hermes_task.cli.output import emit_warnings
from hermes_task.cli.session import Session
from hermes_task.core.documents import Row, TranscriptDoc, WarningItem
from hermes_task.core.lineage import Cursor
from hermes_task.core.sanitize import clean_line
from hermes_task.failures import HermesError
from hermes_task.reading.reader import TaskReader
from hermes_task.reading.stream import (
    LineageRows,
    StreamStats,
    Unstreamable,
    finish,
    goal_of,
    lineage_streamable,
    stream_pages,
    streamable,
)
from hermes_task.render.jsontext import ROWS_OPEN, row_element, rows_close
from hermes_task.render.rows import Segments, View, footer_text, head_text, rows_text


def wanted(session: Session) -> bool:
    """Streaming applies to `--json` and piped plain text (a terminal and `--format markdown`
    keep the window)."""
    common = session.common
    if common.output_format is OutputFormat.markdown:
        return False
    return common.json or session.target.plain


class _JsonRows:
    """`--json` written as it is read: `ROWS_OPEN` with the first page, each page's rows as
    `rows` elements, then the rest of the document (`rows_close`), a transcript or an error."""

    def __init__(self, common: Common) -> None:
        self.common = common
        self.rows = 0
        self.opened = False

    def add(self, rows: list[Row]) -> None:
        text = "".join(row_element(row, first=self.rows + i == 0) for i, row in enumerate(rows))
        if not self.opened:
            text = ROWS_OPEN + text
            self.opened = True
        self.rows += len(rows)
        if text:
            self.common.env.write_stdout(text)

    def close(self, doc: Any) -> None:
        """End the document as `doc` (its `rows` empty: those written are its rows)."""
        self.add([])
        self.common.env.write_stdout(rows_close(doc, self.rows))


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
    """One segment: rows written (piped text or `--json`) as each page is proven."""
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
    held = [first]
    reader.goal = goal_of(first) if not reader.continues_parent else None
    if reader.goal is None and not reader.continues_parent and not common.json:
        held = _until_goal(common, reader, first, pages)  # the goal line comes before the rows
    doc = replace(reader.document(warnings), rows=[])  # the rows come page by page
    _write(session, reader, doc, stats, warnings, held, pages, debug, view)
    return True


def _until_goal(
    common: Common, reader: TaskReader, first: list[Row], pages: Iterator[list[Row]]
) -> list[list[Row]]:
    """The pages read (and held) until one states the goal, which `reader.goal` takes, or
    until the last; nothing is written yet, so a failure is reported as without streaming."""
    held = [first]
    while reader.goal is None:
        try:
            page = next(pages)
        except StopIteration:
            break
        except HermesError as exc:
            report_failure(common, exc, reader.rows())
            raise SystemExit(int(exc.exit_status)) from None
        held.append(page)
        reader.goal = goal_of(page)
    return held


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
    if not lineage.stats.pages or not common.json:
        report_failure(common, error, reader.rows())
        raise SystemExit(int(error.exit_status))
    out = _JsonRows(common)
    lineage.read_so_far()
    for rows in lineage.pages():
        out.add(rows)
    _fail(common, error, out)


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
    """The document `doc` (rows left out) with `first`, then `pages`, each page written as
    it comes: `--json` (`_json`) or piped text."""
    common = session.common
    if common.json:
        _json(common, reader, doc, stats, warnings, chain(first, pages), debug, cur)
        return
    painted = View(**view)
    shown = 0
    segments = Segments(doc.task)
    common.env.write_stdout(head_text(doc, session.target.columns))
    for rows in chain(first, pages):  # a failure: the rows written stay, the shell reports it
        shown += len(rows)
        common.env.write_stdout(rows_text(rows, painted, segments))
    _debug(debug, stats)
    final = finish(reader, doc, stats, warnings, cur)
    common.env.write_stdout(footer_text(final, painted, shown) + "\n")
    emit_warnings(common, final.warnings)
    if cur is None and stats.older == 0:  # as the windowed path: no older page added a row
        nothing_older(common, final.task.root_id)


def nothing_older(common: Common, root_id: str) -> None:
    """The note that no older page added a row (both paths of `older`, never with `--json`)."""
    text = f"note: nothing older: the newest page holds every row of task {clean_line(root_id)}"
    stderr_line(common, text, "dim")


def _json(
    common: Common,
    reader: TaskReader,
    doc: TranscriptDoc,
    stats: StreamStats,
    warnings: list[WarningItem],
    pages: Iterator[list[Row]],
    debug: Callable[[str], None] | None,
    cur: Cursor | None,
) -> None:
    """The JSON document, its rows written page by page. The goal is the first row stating
    one on any page (the task head comes after the rows), unless the caller settled it."""
    out = _JsonRows(common)
    seek_goal = reader.goal is None and cur is None and not reader.continues_parent
    try:
        for rows in pages:
            out.add(rows)
            if seek_goal and reader.goal is None:
                reader.goal = goal_of(rows)
    except (HermesError, KeyboardInterrupt) as exc:
        _fail(common, exc, out)
    _debug(debug, stats)
    out.close(finish(reader, doc, stats, warnings, cur))


def _debug(debug: Callable[[str], None] | None, stats: StreamStats) -> None:
    if debug is not None:
        debug(f"older streamed pages={stats.pages} unique={stats.unique} held_max={stats.held_max}")


def _fail(common: Common, exc: HermesError | KeyboardInterrupt, out: _JsonRows) -> NoReturn:
    """End the open document as the error document of `exc` (a page's failure, Ctrl-C or a
    stop signal), its rows those written, say it on stderr and exit with its status."""
    error, status = failure_of(exc)
    out.close(error_document(error))
    error_lines(common, error)
    raise SystemExit(status)
