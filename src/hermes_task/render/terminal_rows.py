"""The terminal painter (docs/commands.md "Rows on a terminal"): the plain layout plus colour (SGR
codes opened and reset on every screen line: a pager shows any line alone), wrapping and rich's
Markdown on a terminal, and the cell measures. It writes only the model's sanitised text, the
palette's codes and rich's rendering of sanitised Markdown.
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
    Plain,
    RowView,
    Segments,
    View,
    expand_tabs,
    painted,
    transcript_chunks,
)

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions
    from rich.segment import Segment


def width_of(text: str) -> int:
    return len(text) if text.isascii() else cell_len(text)


def breaks(line: str, first: int, rest: int) -> list[tuple[int, int]]:
    """Where `line` (no newline) breaks: (start, end) character ranges, the first at most
    `first` cells wide, the others `rest`. A break goes after the last word that fits, the
    spaces at it dropped; a wider word is cut where the room ends (one character at least)."""
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
    """A template `Markdown`, one shared parser (as costly as a short row's parse) with raw HTML
    off (rich draws none: a `<b>` would vanish with its text), and a console of fixed size
    (else it asks the terminal on every render) rendering at `width`."""
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


def unpadded(line: list[Segment]) -> list[Segment]:
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
        ("call_id", "row_id", "status", "reasoning", "hidden", "quiet", "segment", "footer", "label"), "dim"
    ),
    **dict.fromkeys(("archived", "cut", "reasoning_label", "empty"), "dim italic"),
    **dict.fromkeys(("tool_name", "call", "arguments"), "yellow"),
    **{"role": "bold", "goal": "bold", "kind": "italic", "prose": "", "output": "", "steer": "cyan"},
    **{"call_id_in_call": "dim yellow", "no_arguments": "dim italic yellow"},
    **{"match": "bold red", "number": "green", "mark": "cyan", "heading": "bold"},  # search's
}


@cache
def sgr(style: str) -> tuple[str, str]:
    """What opens and what closes rich style `style` on a 16-colour terminal, as rich writes them."""
    from rich.color import ColorSystem  # lazy: rich's styles, only when colour is written
    from rich.style import Style  # lazy: as above

    opened, _, closed = Style.parse(style).render("\n", color_system=ColorSystem.STANDARD).partition("\n")
    return opened, closed


BODY, HANG, CALL_HANG = "  ", "  ", "    "
BATCH = 200  # rows painted between two writes


class Painter(Plain):
    """Rows and lines for one output: `color` SGR codes, `width` wrap (None: never), `markdown` by rich."""

    def __init__(self, *, color: bool, width: int | None, markdown: bool) -> None:
        self.color = color
        self.width = width
        self.markdown = markdown and width is not None

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
        """One line of pieces as screen lines: `indent` before the first, `hang` before the rest."""
        if any("\t" in text for text, _ in pieces):
            column, expanded = width_of(indent), []
            for text, what in pieces:
                text = expand_tabs(text, column) if "\t" in text else text
                column += width_of(text)
                expanded.append((text, what))
            pieces = expanded
        if self.width is None:
            return [indent + self.paint(pieces)]
        whole = "".join([t for t, _ in pieces])
        text = whole.rstrip(" ")  # no line ends in a space
        if not text:
            return [""]  # an empty line: no indent either
        spans = breaks(text, self.width - width_of(indent), self.width - width_of(hang))
        if len(spans) == 1 and len(text) == len(whole):
            return [indent + self.paint(pieces)]
        starts = [0, *accumulate(len(text) for text, _ in pieces)]  # each piece's first character
        cut = [
            [
                (t[max(s - at, 0) : e - at], what)
                for (t, what), at in zip(pieces, starts, strict=False)
                if at + len(t) > s and at < e
            ]
            for s, e in spans
        ]
        return [indent + self.paint(cut[0])] + [hang + self.paint(part) for part in cut[1:]]

    def line(self, text: str, what: str) -> str:
        return "\n".join(self.lines([(text, what)]))

    def row(self, view: RowView) -> str:
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
                lines: list[list[Piece]] = [[]]  # the block's pieces, split where their text breaks lines
                for piece, part in block:
                    first, *more = piece.split("\n")
                    lines[-1].append((first, part))
                    lines += [[(line, part)] for line in more]
                for line in lines:
                    out += self.lines(line, BODY, CALL_HANG if what == "call" else HANG)
        return "\n".join(out)

    def markdown_lines(self, text: str) -> list[str]:
        """Sanitised `text` as Markdown by rich (links not clickable) under the body's indent,
        without rich's padding and blank edges (the template `Markdown` copied, its parse set)."""
        from rich.color import ColorSystem  # lazy: as the console, only for Markdown prose

        assert self.width is not None
        template, parser, console, options = _markdown_kit(self.color, self.width - len(BODY))
        markdown = copy.copy(template)
        markdown.markup = text
        markdown.parsed = parser.parse(text)
        system = ColorSystem.STANDARD if self.color else None
        lines = [
            "".join(
                segment.style.render(segment.text, color_system=system)
                if segment.style is not None and system is not None
                else segment.text
                for segment in unpadded(line)
                if not segment.control
            )
            for line in console.render_lines(markdown, options, pad=False)
        ]
        while lines and not lines[-1]:
            lines.pop()
        start = next((i for i, line in enumerate(lines) if line), len(lines))
        return [BODY + line if line else "" for line in lines[start:]] or [""]


def transcript(target: Target, doc: TranscriptDoc, view: View, painter: Painter | None = None) -> None:
    """The transcript, written about every `BATCH` rows (a pager starts before the end)."""
    painter = painter or Painter(color=target.color, width=target.width, markdown=target.tty)
    for chunk in transcript_chunks(doc, view, target.columns, batch=BATCH, painter=painter):
        target.write(chunk)


def rows(
    target: Target, items: Iterable[Row], view: View, segments: Segments, painter: Plain | None = None
) -> None:
    painter = painter or Painter(color=target.color, width=target.width, markdown=target.tty)
    for chunk in painted(items, view, segments, painter, BATCH):
        target.write(chunk)
