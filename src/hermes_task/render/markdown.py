"""The Markdown painter: transcripts (`show` and `older --format markdown`, and each task's
transcript in `recover --format markdown`) as GitHub-flavoured Markdown. Pure: `render/rows.py`
models in, strings out; no rich (Markdown is written, not rendered).

A transcript is its header (a heading naming the task, the footer's facts, the goal), a table
of its proven segments, its warnings as quotes, then its rows. A row is its header line (the
marker and role in bold, then kind, tool, call id, row id and time) and its body blocks, each a
paragraph of its own: prose, reasoning and steers as escaped paragraphs, tool output and a
call's arguments in fenced blocks (tool output cut as the terminal cuts it unless `--full`: the
row model's cut), notes as escaped lines. Boilerplate and status rows are one line, a
segment line where the task moves to a newer segment. Invariant: every backend string reaches
the output only through `render/mdtext.py` (escaped, a code span, a fence, HTML-escaped).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from hermes_task.core.documents import Row, TranscriptDoc, WarningItem
from hermes_task.render.mdtext import cell, code, escaped, fence, inline, paragraphs, table
from hermes_task.render.rows import Block, RowView, Segments, View, footer_text, row_view, usage_line, when

BATCH = 200  # rows formatted between two writes


def header_line(pieces: Block) -> str:
    """The row's header: the marker and role in bold, the rest as it reads. (No space may
    end the bold text: its closing `**` would not close it.)"""
    (first, _what), *rest = pieces
    return f"**{escaped(first.rstrip())}**" + escaped("".join(text for text, _ in rest), starts=False)


def block_markdown(block: Block) -> str:
    """One body block: tool output fenced; a call's line, then its arguments fenced; any
    other block as paragraphs (empty when it holds only whitespace)."""
    what = block[0][1]
    if what == "output":
        return fence(block[0][0])
    if what == "call":
        line = escaped("".join(text for text, part in block if part != "arguments"))
        arguments = [text[1:] for text, part in block if part == "arguments"]  # " " + arguments
        return "\n\n".join([line, *(fence(text) for text in arguments)])
    return paragraphs("".join(text for text, _ in block))


def row_markdown(view: RowView) -> str:
    """One row as Markdown blocks (without a trailing blank line)."""
    if view.quiet is not None:
        return escaped(view.quiet)
    blocks = [block_markdown(block) for block in view.body]
    return "\n\n".join([header_line(view.header), *(block for block in blocks if block)])


def rows_markdown(rows: Iterable[Row], view: View, segments: Segments) -> Iterator[str]:
    """Rows as Markdown, each followed by a blank line, in chunks of about `BATCH` rows, a
    segment line where the task moves to a newer segment."""
    pending: list[str] = []
    for row in rows:
        line = segments.line(row)
        if line is not None:
            pending.append(f"{escaped(line)}\n\n")
        pending.append(row_markdown(row_view(row, view)) + "\n\n")
        if len(pending) >= BATCH:
            yield "".join(pending)
            pending = []
    if pending:
        yield "".join(pending)


def warnings_markdown(warnings: Sequence[WarningItem]) -> str:
    """Warnings as one quote, a line each (empty when there are none)."""
    lines = [f"> **warning:** {inline(item.message)}" for item in warnings]
    return "\\\n".join(lines) + "\n\n" if lines else ""


def segments_table(doc: TranscriptDoc, view: View) -> str:
    """The task's proven segments, oldest first: id, start, end, end reason, rows shown."""
    rows = [
        [
            code(seg.id, cell=True),
            cell(when(seg.started_at, utc=view.utc)),
            cell(when(seg.ended_at, utc=view.utc)),
            cell(seg.end_reason or ""),
            str(seg.rows_shown),
        ]
        for seg in doc.task.segments
    ]
    return table(["segment", "started", "ended", "end reason", "rows shown"], rows)


def transcript_markdown(doc: TranscriptDoc, view: View, *, level: int = 2) -> Iterator[str]:
    """A whole transcript document (module docstring), its heading at `level`."""
    task = doc.task
    yield f"{'#' * level} Task {code(task.root_id)}\n\n{inline(footer_text(doc))}\n\n"
    goal = paragraphs(task.goal or "")
    if goal:
        yield f"**Goal:**\n\n{goal}\n\n"
    usage = usage_line(task.usage)
    if usage:
        yield inline(usage) + "\n\n"
    if task.segments:
        yield segments_table(doc, view) + "\n\n"
    yield warnings_markdown(doc.warnings)
    yield from rows_markdown(doc.rows, view, Segments(task))


__all__ = ["row_markdown", "rows_markdown", "transcript_markdown", "warnings_markdown"]
