"""The plain painter: transcript rows as text for a pipe (`show`, `older` and `follow` when
stdout is not a terminal and colour is off), the line format of docs/commands.md "Piped
output". Pure: `render/rows.py` models in, strings out; rich only measures the cells of a
line that holds a tab.

The format: the goal line (`goal: …`, cut to the width) and the usage line (`usage: …`), then
every row followed by one blank line, then the footer line. A row is one line when quiet; else
its header line and its body lines, each indented by two spaces. Lines are never wrapped, cut or
padded; a tab advances to the next multiple of 8 columns (counted in terminal cells). A row
starts at column 0 with `▌ `, `▸ ` or `· `, a segment line with `── segment `; nothing else but
the goal, the usage and the footer starts there. `tests/unit/test_plain_rows.py` holds the
format in snapshots.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from hermes_task.core.documents import Row, TranscriptDoc
from hermes_task.render import usagetext
from hermes_task.render.rows import RowView, Segments, View, footer_text, goal_text, row_view


def row_text(view: RowView) -> str:
    """One row without its final newline."""
    if view.quiet is not None:
        text = view.quiet
    else:
        head = "".join([text for text, _ in view.header])
        body = [block[0][0] if len(block) == 1 else "".join([t for t, _ in block]) for block in view.body]
        joined = "\n".join(body)
        if "\n" in joined:
            joined = joined.replace("\n", "\n  ")
        text = f"{head}\n  {joined}"
    if "\t" in text:  # rare: measure cells only then (render/cells.py imports rich's measure)
        from hermes_task.render.cells import expand_tabs  # lazy: rich's cell widths, only for a tab

        text = "\n".join(expand_tabs(line) if "\t" in line else line for line in text.split("\n"))
    return text


def rows_text(rows: Iterable[Row], view: View, segments: Segments) -> str:
    """Rows as printed (each followed by a blank line), with a segment line where the task
    moves to a newer segment; `segments` then knows the newest segment printed."""
    out: list[str] = []
    append = out.append
    for row in rows:
        line = segments.line(row)
        if line is not None:
            append(line + "\n\n")
        append(row_text(row_view(row, view)) + "\n\n")
    return "".join(out)


def head_text(doc: TranscriptDoc, width: int) -> str:
    """The lines before the rows: the goal, then the task's usage (empty: neither)."""
    head = [text for text in (goal_text(doc, width), usagetext.line(doc.task.usage)) if text]
    return "\n".join(head) + "\n\n" if head else ""


def transcript_chunks(doc: TranscriptDoc, view: View, width: int, *, batch: int = 500) -> Iterator[str]:
    """The whole transcript (goal, rows, footer) in chunks of about `batch` rows, so a pipe
    starts receiving before everything is formatted."""
    head = head_text(doc, width)
    if head:
        yield head
    segments = Segments(doc.task)
    rows = doc.rows
    for start in range(0, len(rows), batch):
        yield rows_text(rows[start : start + batch], view, segments)
    yield footer_text(doc, view) + "\n"
