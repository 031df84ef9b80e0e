"""`older`'s work: what `hermes-task older` runs once typer has parsed its arguments
(`cli/older.py` declares the command), callable with plain values.

One refresh (as `show`), then `--pages N` load-older batches (default 1), or `--all` to the
start (streamed where the output allows it: `older_stream.py`); the batch logic is
`reading/older_batches.py`; this module adds the stderr progress indicator, the `--debug`
line and the output.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from hermes_task.cli.common import Common
from hermes_task.cli.consoles import color_enabled
from hermes_task.cli.endings import Ending
from hermes_task.cli.older_stream import nothing_older, stream
from hermes_task.cli.output import output_transcript
from hermes_task.cli.read_transcript import finish, read_transcript
from hermes_task.cli.session import Session
from hermes_task.cli.shell import run
from hermes_task.core.documents import TranscriptDoc
from hermes_task.core.wire import MAX_LIMIT, PAGE_LIMIT
from hermes_task.failures import Code, HermesError
from hermes_task.reading.reader import Snapshot, TaskReader
from hermes_task.reading.stream import PagingOutcome, Plan, Progress, combine_warnings, read_batches


@contextmanager
def _progress(common: Common) -> Iterator[Callable[[Progress], None] | None]:
    """A transient "page N" status on stderr, only when stderr is a terminal."""
    if not common.env.isatty(common.env.stderr):
        yield None
        return
    from rich.console import Console  # lazy: rich, only for a terminal's progress line

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


def run_older(
    common: Common,
    *,
    child_id: str,
    tip: Sequence[str] | None = None,
    pages: int | None = None,
    all_pages: bool = False,
    min_text: int | None = None,
    reasoning: bool = False,
    full: bool = False,
    utc: bool = False,
    no_hint: bool = False,
) -> None:
    """The newest page of the task `child_id`, then older pages (`hermes-task older --help`)."""

    def body(session: Session) -> Ending | None:
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
                nothing_older(common, doc.task.root_id)

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
