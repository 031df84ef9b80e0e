"""The terminal painter: transcript rows (`render/rows.py` models) in our own colours, wrapped
to the terminal's width under their indent, prose with Markdown rendered by rich.

The layout is the plain painter's (`render/rows.py`: header, body indented by two
spaces, a blank line after each row), with what a terminal adds:
- colour, when the target allows it: SGR codes from `PALETTE`, opened and reset on every
  screen line (a pager shows any line alone);
- wrapping at the target's width (a terminal only): a header or quiet line continues two
  spaces in, a body line under its indent, a tool call under its `call`; the spaces at a
  break are dropped, and no line ends in a space;
- prose holding Markdown syntax (`core/readable.looks_like_markdown`) rendered by rich's
  Markdown (`render/terminal.py` `markdown_lines`, links not clickable) at the width less the
  indent (a terminal only).
Not a terminal but coloured (`--color always | less -R`): the plain layout in colour, never
wrapped. Invariant: every character written comes from the model (sanitised there), from
`PALETTE`, or from rich's rendering of sanitised Markdown.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from hermes_task.core.documents import Row, TranscriptDoc
from hermes_task.core.readable import looks_like_markdown
from hermes_task.render.cells import breaks, expand_tabs, width_of
from hermes_task.render.rows import (
    Piece,
    RowView,
    Segments,
    Target,
    View,
    footer_text,
    goal_text,
    row_items,
    usage_line,
)

# What a piece or line is -> its SGR parameters ("" none): the rows' parts (rows.PARTS), then
# whole lines.
PALETTE = {
    **{"user": "1;36", "assistant": "1;32", "tool": "1;33", "system": "1;35", "role": "1"},
    **{"kind": "3", "tool_name": "33", "call_id": "2", "row_id": "2", "archived": "2;3"},
    **{"prose": "", "output": "", "cut": "2;3", "status": "2", "steer": "36"},
    **{"reasoning_label": "2;3", "reasoning": "2", "hidden": "2"},
    **{"call": "33", "call_id_in_call": "2;33", "arguments": "33", "no_arguments": "2;3;33", "empty": "2;3"},
    **{"quiet": "2", "goal": "1", "segment": "2", "footer": "2"},
}
BODY, HANG, CALL_HANG = "  ", "  ", "    "
BATCH = 200  # rows painted between two writes


class Painter:
    """Paints rows and lines for one output: `color` (SGR codes or none), `width` (wrap, or
    None: never), `markdown` (Markdown prose through rich)."""

    def __init__(self, *, color: bool, width: int | None, markdown: bool) -> None:
        self.color = color
        self.width = width
        self.markdown = markdown and width is not None

    @classmethod
    def of(cls, target: Target) -> Painter:
        return cls(color=target.color, width=target.width, markdown=target.tty)

    def paint(self, pieces: Iterable[Piece]) -> str:
        """One screen line of pieces, each run of one colour opened and reset once."""
        if not self.color:
            return "".join([text for text, _ in pieces])
        out = []
        run, code = "", ""
        for text, what in pieces:
            if not text:
                continue
            this = PALETTE[what]
            if this != code:
                out.append(f"\x1b[{code}m{run}\x1b[0m" if code else run)
                run, code = "", this
            run += text
        out.append(f"\x1b[{code}m{run}\x1b[0m" if code else run)
        return "".join(out)

    def lines(self, pieces: Sequence[Piece], indent: str = "", hang: str = HANG) -> list[str]:
        """One line of pieces (no newline) as screen lines: `indent` before the first, `hang`
        before each continuation."""
        if any("\t" in text for text, _ in pieces):
            pieces = _expanded(pieces, width_of(indent))
        if self.width is None:
            return [indent + self.paint(pieces)]
        if pieces and pieces[-1][0].endswith(" "):
            pieces = _rstripped(pieces)
        text = "".join([t for t, _ in pieces])
        if not text:
            return [""]  # an empty line: no indent either (nothing ends in a space)
        spans = breaks(text, self.width - width_of(indent), self.width - width_of(hang))
        if len(spans) == 1:
            return [indent + self.paint(pieces)]
        cut = [_slice(pieces, start, end) for start, end in spans]
        return [indent + self.paint(cut[0])] + [hang + self.paint(part) for part in cut[1:]]

    def line(self, text: str, what: str) -> str:
        """A whole line (goal, segment, footer) as screen lines joined."""
        return "\n".join(self.lines([(text, what)]))

    def row(self, view: RowView) -> str:
        """One row, without its final newline."""
        if view.quiet is not None:
            return self.line(view.quiet, "quiet")
        out = self.lines(view.header)
        for block in view.body:
            text, what = block[0]
            if what == "prose" and self.markdown and looks_like_markdown(text):
                out += self.markdown_lines(text)
            elif len(block) == 1 and "\n" not in text:
                out += self.lines(block, BODY)
            else:
                hang = CALL_HANG if what == "call" else HANG
                for line in _split_lines(block):
                    out += self.lines(line, BODY, hang)
        return "\n".join(out)

    def markdown_lines(self, text: str) -> list[str]:
        from hermes_task.render.terminal import markdown_lines  # lazy: rich, only for Markdown

        assert self.width is not None
        lines = markdown_lines(text, self.width - len(BODY), color=self.color)
        while lines and not lines[-1]:
            lines.pop()
        start = next((i for i, line in enumerate(lines) if line), len(lines))
        return [BODY + line if line else "" for line in lines[start:]] or [""]


def _split_lines(block: Sequence[Piece]) -> list[list[Piece]]:
    """The pieces of a block, split where their text breaks lines."""
    out: list[list[Piece]] = [[]]
    for text, what in block:
        first, *more = text.split("\n")
        out[-1].append((first, what))
        out += [[(line, what)] for line in more]
    return out


def _expanded(pieces: Sequence[Piece], column: int) -> list[Piece]:
    out = []
    for text, what in pieces:
        if "\t" in text:
            text = expand_tabs(text, column)
        column += width_of(text)
        out.append((text, what))
    return out


def _rstripped(pieces: Sequence[Piece]) -> list[Piece]:
    out = list(pieces)
    while out and not out[-1][0].rstrip(" "):
        out.pop()
    if out:
        out[-1] = (out[-1][0].rstrip(" "), out[-1][1])
    return out


def _slice(pieces: Sequence[Piece], start: int, end: int) -> list[Piece]:
    """The pieces' characters from `start` to `end` of their joined text, each keeping its part."""
    out = []
    offset = 0
    for text, what in pieces:
        after = offset + len(text)
        if after > start and offset < end:
            out.append((text[max(start - offset, 0) : end - offset], what))
        offset = after
    return out


def transcript(target: Target, doc: TranscriptDoc, view: View, painter: Painter | None = None) -> None:
    """The goal, the rows (a segment line where the task moves to a newer segment) and the
    footer, written about every `BATCH` rows, so a pager starts before the end is painted;
    `painter` (default: the target's own) paints them."""
    painter = painter or Painter.of(target)
    goal = goal_text(doc, target.columns)
    usage = usage_line(doc.task.usage)
    head = ([painter.line(goal, "goal")] if goal else []) + ([painter.line(usage, "footer")] if usage else [])
    if head:  # the goal, then the task's usage (dim)
        target.write("\n".join(head) + "\n\n")
    rows(target, doc.rows, view, Segments(doc.task), painter)
    target.write(painter.line(footer_text(doc, view), "footer") + "\n")


def rows(
    target: Target, items: Iterable[Row], view: View, segments: Segments, painter: Painter | None = None
) -> None:
    """Rows appended to the output (each followed by a blank line), with their segment lines;
    `segments` then knows the newest segment written (`follow` continues from it)."""
    painter = painter or Painter.of(target)
    pending: list[str] = []
    for _what, item in row_items(items, view, segments):
        if isinstance(item, RowView):
            pending.append(painter.row(item) + "\n\n")
            if len(pending) >= BATCH:
                target.write("".join(pending))
                pending = []
        else:
            pending.append(painter.line(item, "segment") + "\n\n")
    if pending:
        target.write("".join(pending))
