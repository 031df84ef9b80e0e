"""The terminal painter: transcript rows (`render/rows.py` models) in our colours, wrapped to
the terminal's width, Markdown prose rendered by rich; and the cell measures a terminal needs.

The plain painter's layout plus: colour when allowed (SGR codes opened and reset on every
screen line: a pager shows any line alone); on a terminal, wrapping (a header or quiet line
continues two spaces in, a body line under its indent, a tool call under its `call`) and
prose that `looks_like_markdown` rendered by rich. Coloured but not a terminal (`--color
always | less -R`): the plain layout in colour.

Invariants: every character written comes from the model (sanitised there), the palette's
codes, or rich's rendering of sanitised Markdown; `breaks` covers every character of a line
in order but the spaces it drops, and no line is wider than its width unless one character is.
"""

from __future__ import annotations

import copy
import io
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from functools import cache
from itertools import accumulate, groupby
from typing import TYPE_CHECKING, Any

from rich.cells import cell_len, get_character_cell_size

from hermes_task.core.documents import Row, TranscriptDoc
from hermes_task.core.projection import looks_like_markdown
from hermes_task.render import FALLBACK_WIDTH, Target
from hermes_task.render.rows import (
    Piece,
    RowView,
    Segments,
    View,
    expand_tabs,
    footer_text,
    goal_text,
    row_view,
    usage_line,
)

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions
    from rich.segment import Segment


def width_of(text: str) -> int:
    """How many cells `text` takes on a terminal."""
    return len(text) if text.isascii() else cell_len(text)


def breaks(line: str, first: int, rest: int) -> list[tuple[int, int]]:
    """Where `line` (no newline) breaks to fit: (start, end) character ranges, the first at
    most `first` cells wide and the others at most `rest`. A break goes after the last word
    that fits, the spaces at the break dropped; a word wider than the room is cut where the
    room ends (at least one character per line)."""
    count = len(line)
    ascii_only = line.isascii()
    if (count if ascii_only else cell_len(line)) <= first:
        return [(0, count)]
    # the cell where each character starts, then the line's width
    position = (
        list(range(count + 1)) if ascii_only else [*accumulate(map(get_character_cell_size, line), initial=0)]
    )
    out: list[tuple[int, int]] = []
    start, room = 0, first
    while True:
        if position[count] - position[start] <= room:
            out.append((start, count))
            return out
        end = bisect_right(position, position[start] + room, start, count + 1) - 1
        end = max(end, start + 1)
        space = line.rfind(" ", start, end + 1)
        if space > start and line[start:space].strip(" "):
            out.append((start, start + len(line[start:space].rstrip(" "))))
            start = space + 1
        else:
            out.append((start, end))
            start = end
        while start < count and line[start] == " ":
            start += 1
        if start >= count:
            return out
        room = rest


@cache
def _markdown_kit(color: bool, width: int) -> tuple[Any, Any, Console, ConsoleOptions]:
    """A template `Markdown`, one shared markdown-it parser (building one costs about as much
    as parsing a short row), and a console that renders (never prints) at `width`, its size
    fixed (a console without one asks the terminal on every render). The parser is rich's
    (CommonMark, tables, strike-through) with raw HTML off: rich draws no HTML, so a `<div>`
    block or a `<b>` tag would vanish with the text inside; here it stays text."""
    from markdown_it import MarkdownIt  # lazy: rich's Markdown and console, only for Markdown prose
    from rich.console import Console  # lazy: as above
    from rich.markdown import Markdown  # lazy: as above

    parser = MarkdownIt("commonmark", {"html": False}).enable("strikethrough").enable("table")
    console = Console(
        file=io.StringIO(),
        force_terminal=True,
        no_color=not color,
        color_system="standard" if color else None,
        markup=False,
        highlight=False,
        emoji=False,
        width=FALLBACK_WIDTH,
        height=25,
    )
    return Markdown("", hyperlinks=False), parser, console, console.options.update_width(width)


def markdown_lines(text: str, width: int, *, color: bool) -> list[str]:
    """Sanitised `text` rendered as Markdown by rich at `width` (links not clickable): screen
    lines with rich's standard colour codes (or none), without the spaces rich pads a line
    with. The `Markdown` is a copy of the template with the text and its parse set."""
    template, parser, console, options = _markdown_kit(color, width)
    markdown = copy.copy(template)
    markdown.markup = text
    markdown.parsed = parser.parse(text)
    lines = console.render_lines(markdown, options, pad=False)
    from rich.color import ColorSystem  # lazy: as the console above, only for Markdown prose

    system = ColorSystem.STANDARD if color else None
    return [
        "".join(
            segment.style.render(segment.text, color_system=system)
            if segment.style is not None and system is not None
            else segment.text
            for segment in unpadded(line)
            if not segment.control
        )
        for line in lines
    ]


def unpadded(line: list[Segment]) -> list[Segment]:
    """One line of segments without the spaces at its end (rich pads Markdown paragraphs,
    tables and `Padding` to the full width); control segments are kept."""
    kept: list[Segment] = []
    stripping = True
    for segment in reversed(line):
        if stripping and not segment.control:
            text = segment.text.rstrip(" ")
            if not text:
                continue
            if text != segment.text:
                segment = type(segment)(text, segment.style)  # rich.segment loaded only with a segment
            stripping = False
        kept.append(segment)
    kept.reverse()
    return kept


# What a piece or line is -> its rich style ("" none): the rows' parts, then whole lines.
PALETTE = {
    **{"user": "bold cyan", "assistant": "bold green", "tool": "bold yellow", "system": "bold magenta"},
    **dict.fromkeys(
        ("call_id", "row_id", "status", "reasoning", "hidden", "quiet", "segment", "footer"), "dim"
    ),
    **dict.fromkeys(("archived", "cut", "reasoning_label", "empty"), "dim italic"),
    **dict.fromkeys(("tool_name", "call", "arguments"), "yellow"),
    **{"role": "bold", "goal": "bold", "kind": "italic", "prose": "", "output": "", "steer": "cyan"},
    **{"call_id_in_call": "dim yellow", "no_arguments": "dim italic yellow"},
}


@cache
def sgr(style: str) -> tuple[str, str]:
    """What opens and what closes rich style `style` on a 16-colour terminal, as rich writes
    them (`("", "")` for no style): painters that build lines as strings wrap text in these."""
    from rich.color import ColorSystem  # lazy: rich's styles, only when colour is written
    from rich.style import Style  # lazy: as above

    opened, _, closed = Style.parse(style).render("\n", color_system=ColorSystem.STANDARD).partition("\n")
    return opened, closed


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
        for style, run in groupby(
            (piece for piece in pieces if piece[0]), key=lambda piece: PALETTE[piece[1]]
        ):
            opened, closed = sgr(style)
            out.append(opened + "".join([text for text, _ in run]) + closed)
        return "".join(out)

    def lines(self, pieces: Sequence[Piece], indent: str = "", hang: str = HANG) -> list[str]:
        """One line of pieces (no newline) as screen lines: `indent` before the first, `hang`
        before each continuation."""
        if any("\t" in text for text, _ in pieces):
            pieces = _expanded(pieces, width_of(indent))
        if self.width is None:
            return [indent + self.paint(pieces)]
        whole = "".join([t for t, _ in pieces])
        text = whole.rstrip(" ")  # no line ends in a space
        if not text:
            return [""]  # an empty line: no indent either
        spans = breaks(text, self.width - width_of(indent), self.width - width_of(hang))
        if len(spans) == 1 and len(text) == len(whole):
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
    """The goal and usage, the rows and the footer, written about every `BATCH` rows (a pager
    starts before the end is painted)."""
    painter = painter or Painter.of(target)
    goal = goal_text(doc, target.columns)
    usage = usage_line(doc.task.usage)
    head = ([painter.line(goal, "goal")] if goal else []) + ([painter.line(usage, "footer")] if usage else [])
    if head:
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
    for row in items:
        line = segments.line(row)
        if line is not None:
            pending.append(painter.line(line, "segment") + "\n\n")
        pending.append(painter.row(row_view(row, view)) + "\n\n")
        if len(pending) >= BATCH:
            target.write("".join(pending))
            pending = []
    if pending:
        target.write("".join(pending))
