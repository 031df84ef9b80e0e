"""What a terminal gets, through rich: the terminal painter of transcript rows, our table
(recover's tasks, `parents`), Markdown prose, and the segment filter that keeps rich's
line-end padding off a terminal.

The terminal painter lays rows out as the plain painter does (`render/rows.py`), adding
colour when the target allows it (`PALETTE`'s styles, as rich writes their SGR codes, opened and reset on every screen
line, so a pager shows any line alone) and, on a terminal, wrapping at its width: a header or
quiet line continues two spaces in, a body line under its indent, a tool call under its
`call`; the spaces at a break are dropped and no line ends in a space. Prose holding Markdown
(`core/readable.looks_like_markdown`) is rendered by rich's Markdown (links not clickable) at
the width less the indent. Not a terminal but coloured (`--color always | less -R`): the
plain layout in colour, never wrapped.

A table is columns and rows of sanitised one-line cells; `layout` decides, for a width, how
wide each column is drawn, in one documented order (docs/commands.md "Narrow terminals"):
1. every column at its natural width (its widest cell, a `wrap` or `cut` column at most its
   `cap`);
2. when that is too wide, a `wrap` column shrinks to its `least` width, its cells wrapped at
   word boundaries; then a `cut` column, to its `least`, its cells cut with `…`;
3. when even that is too wide, the columns with a `drop` rank leave, rank 1 first, and step 2
   is tried again without them;
4. when no column is left to drop, each row becomes a block: its `lead` cells on its first
   line and every other cell on a line of its own under it, after a label (`block_lines`).
A row with text only in columns that left is not drawn. A `whole` cell (an id, a number, a
status) is never cut, wrapped or dropped unless its column has a `drop` rank. `Table` lays
itself out at the width rich draws it at (so `recover --watch`'s live table follows the
terminal), and no line is ever folded by rich.

Invariants: every character written comes from the row model or the entries (sanitised
with `clean`/`clean_line` and only ever wrapped in `Text`, or `Markdown` with hyperlinks off),
from `PALETTE`, or from rich's own rendering; `breaks` covers every character of a line, in
order, but the spaces it drops, and never returns a line wider than its width unless one
character is.
"""

from __future__ import annotations

import copy
import io
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any, Literal

from msgspec import Struct
from rich.cells import cell_len, get_character_cell_size
from rich.color import ColorSystem
from rich.console import Console, ConsoleOptions, Group, RenderableType
from rich.segment import Segment
from rich.style import Style
from rich.text import Text

from hermes_task.core.documents import Row, TaskEntry, TasksDoc, TranscriptDoc
from hermes_task.core.readable import looks_like_markdown
from hermes_task.core.sanitize import clean_line
from hermes_task.core.ui_strings import RECOVER, STATUS_LABELS
from hermes_task.render.rows import (
    FALLBACK_WIDTH,
    RESULT_WIDTH,
    Piece,
    RowView,
    Segments,
    Target,
    View,
    duration_text,
    expand_tabs,
    footer_text,
    gap_text,
    goal_text,
    no_tasks_text,
    notes,
    number_of,
    plural,
    result_line,
    row_items,
    summary_line,
    usage_cell,
    usage_line,
    usage_told,
    when,
)


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
    position = list(range(count + 1)) if ascii_only else _positions(line)
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
            kept = space
            while line[kept - 1] == " ":
                kept -= 1
            out.append((start, kept))
            start = space + 1
        else:
            out.append((start, end))
            start = end
        while start < count and line[start] == " ":
            start += 1
        if start >= count:
            return out
        room = rest


def _positions(line: str) -> list[int]:
    """The cell where each character of `line` starts, then the line's width."""
    out = [0]
    total = 0
    for character in line:
        total += get_character_cell_size(character)
        out.append(total)
    return out


GAP = 2  # spaces between two columns
INDENT = 2  # how far a block's lines sit under its first line
Fit = Literal["whole", "wrap", "cut"]


class Column(Struct, frozen=True):
    """One column: how its cells give way when the width is short (module docstring)."""

    header: str
    fit: Fit = "whole"
    cap: int | None = None  # the widest a `wrap` or `cut` column is drawn
    least: int = 0  # the narrowest a `wrap` or `cut` column is drawn
    drop: int = 0  # 0: never leaves the table; else leaves in this order (1 first)
    lead: bool = False  # in block form: on the block's first line
    blank: str | None = "-"  # in block form, a cell with this text is left out (None: never)


class TableRow(Struct, frozen=True):
    """One row: a (text, style) cell per column; `note`, when set, is what the row is in
    block form (one wrapped line under the block before it, e.g. why a child was not read)."""

    cells: Sequence[tuple[str, str]]
    note: tuple[str, str] | None = None


class Table(Struct, frozen=True):
    """A table drawn at the width rich gives it: columns, or blocks when they cannot fit."""

    columns: Sequence[Column]
    rows: Sequence[TableRow]
    header_style: str = "bold"

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Text]:
        yield from fitted_lines(self, options.max_width)


def _natural(columns: Sequence[Column], rows: Sequence[TableRow]) -> list[int]:
    out = []
    for i, column in enumerate(columns):
        widest = max([width_of(column.header), *(width_of(row.cells[i][0]) for row in rows)])
        out.append(widest if column.fit == "whole" or column.cap is None else min(widest, column.cap))
    return out


def _shrink_order(columns: Sequence[Column], kept: Sequence[int]) -> list[int]:
    """Flexible columns in the order they give way: `wrap` columns first (wrapping loses
    nothing), then `cut` columns; at the same fit, the one that drops earlier first."""
    flexible = [i for i in kept if columns[i].fit != "whole"]
    return sorted(flexible, key=lambda i: (columns[i].fit == "cut", columns[i].drop == 0, columns[i].drop))


def layout(columns: Sequence[Column], rows: Sequence[TableRow], width: int) -> list[int | None] | None:
    """Each column's drawn width (None: dropped) for a table at most `width` cells wide, or
    None when no table fits (blocks). The order of the module docstring."""
    natural = _natural(columns, rows)
    kept = list(range(len(columns)))
    drops = sorted((i for i, c in enumerate(columns) if c.drop), key=lambda i: columns[i].drop)
    while True:
        fitted = _fit(columns, natural, kept, width)
        if fitted is not None:
            return fitted
        if not drops:
            return None
        kept.remove(drops.pop(0))


def _fit(
    columns: Sequence[Column], natural: list[int], kept: list[int], width: int
) -> list[int | None] | None:
    out: list[int | None] = [natural[i] if i in kept else None for i in range(len(columns))]
    over = sum(natural[i] for i in kept) + GAP * (len(kept) - 1) - width
    for i in _shrink_order(columns, kept):
        if over <= 0:
            break
        least = min(columns[i].least, natural[i])
        give = min(over, natural[i] - least)
        out[i] = natural[i] - give
        over -= give
    return out if over <= 0 else None


def _cell_lines(text: str, fit: Fit, width: int) -> list[str]:
    """A cell's screen lines at `width`: wrapped, cut with `…`, or whole."""
    if fit == "whole" or width_of(text) <= width:
        return [text]
    if fit == "cut":
        return [_cut(text, width)]
    return [text[start:end] for start, end in breaks(text, width, width)]


def _cut(text: str, width: int) -> str:
    kept = ""
    for character in text:
        if width_of(kept + character) > width - 1:
            break
        kept += character
    return kept + "…"


def _line(parts: Sequence[tuple[str, str]]) -> Text:
    line = Text(no_wrap=True, overflow="ignore")
    for text, style in parts:
        line.append(text, style=style or None)
    line.rstrip()
    return line


def table_lines(table: Table, widths: Sequence[int | None]) -> Iterator[Text]:
    """The table: a header line, then each row on as many lines as its tallest cell."""
    kept = [i for i, w in enumerate(widths) if w is not None]
    last = kept[-1]

    def padded(i: int, text: str) -> str:
        room = widths[i] or 0
        return text if i == last else text + " " * (room - width_of(text) + GAP)

    header = [(padded(i, table.columns[i].header), table.header_style) for i in kept]
    yield _line(header)
    for row in table.rows:
        if not any(row.cells[i][0] for i in kept):
            continue  # a row of the columns that left (recover's `told` under a dropped usage)
        cells = {i: _cell_lines(row.cells[i][0], table.columns[i].fit, widths[i] or 0) for i in kept}
        for n in range(max(len(c) for c in cells.values())):
            parts = []
            for i in kept:
                text = cells[i][n] if n < len(cells[i]) else ""
                parts.append((padded(i, text), row.cells[i][1]))
            yield _line(parts)


def block_lines(table: Table, width: int) -> Iterator[Text]:
    """Each row as a block: its `lead` cells on one line, then one labelled line per other
    cell (a whole cell that does not fit beside its label on a line of its own)."""
    columns = table.columns
    labels = [c.header for c in columns if not c.lead]
    label_width = max((width_of(label) for label in labels), default=0)
    for row in table.rows:
        if row.note is not None:
            text, style = row.note
            for start, end in breaks(text, max(width - INDENT, 1), max(width - INDENT, 1)):
                yield _line([(" " * INDENT + text[start:end], style)])
            continue
        lead = [(text, style) for (text, style), c in zip(row.cells, columns, strict=True) if c.lead and text]
        yield from _lead_lines(lead, width)
        for (text, style), column in zip(row.cells, columns, strict=True):
            if column.lead or not text or text == column.blank:
                continue
            yield from _labelled(column, text, style, label_width, width)


def _lead_lines(cells: Sequence[tuple[str, str]], width: int) -> Iterator[Text]:
    """The lead cells, two spaces apart, a cell that would pass the width on a new line."""
    parts: list[tuple[str, str]] = []
    used = 0
    for text, style in cells:
        if parts and used + GAP + width_of(text) > width:
            yield _line(parts)
            parts, used = [], 0
        if parts:
            parts.append((" " * GAP, ""))
            used += GAP
        parts.append((text, style))
        used += width_of(text)
    if parts:
        yield _line(parts)


def _labelled(column: Column, text: str, style: str, label_width: int, width: int) -> Iterator[Text]:
    label = " " * INDENT + column.header.ljust(label_width) + "  "
    room = width - width_of(label)
    if column.fit == "whole":
        if width_of(text) <= room:
            yield _line([(label, "dim"), (text, style)])
        else:  # never cut: the id on a line of its own, from the indent if it fits there
            yield _line([(label.rstrip(), "dim")])
            fits = INDENT + width_of(text) <= width
            yield _line([((" " * INDENT if fits else "") + text, style)])
        return
    if room < 10:
        yield _line([(label.rstrip(), "dim")])
        label, room = " " * INDENT, max(width - INDENT, 1)
    for n, piece in enumerate(_cell_lines(text, "wrap", room)):  # a block has the room to wrap
        yield _line([(label if n == 0 else " " * width_of(label), "dim"), (piece, style)])


def fitted_lines(table: Table, width: int) -> Iterator[Text]:
    """The table at `width`: columns when they fit (`layout`), else blocks."""
    widths = layout(table.columns, table.rows, width)
    if widths is None:
        yield from block_lines(table, width)
    else:
        yield from table_lines(table, widths)


if TYPE_CHECKING:  # `parents`' entries: only named in annotations, so the painter loads no delegation rules
    from hermes_task.core.delegators import ParentEntry

STATUS_STYLES = {
    "completed": "green",
    "failed": "red",
    "error": "red",
    "interrupted": "yellow",
    "cancelled": "yellow",
    "timeout": "red",
    "running": "cyan",
    "unknown": "dim",
    "ended_unreported": "magenta",
}
STORE_MARK = " (store)"


@cache
def _markdown_kit() -> tuple[Any, Any]:
    from markdown_it import MarkdownIt  # lazy: only for a row that reads as Markdown
    from rich.markdown import Markdown  # lazy: rich's Markdown, only for such a row

    parser = MarkdownIt("commonmark", {"html": False}).enable("strikethrough").enable("table")
    return Markdown("", hyperlinks=False), parser


def parsed_markdown(text: str) -> RenderableType:
    """`rich.markdown.Markdown(text, hyperlinks=False)` parsed by one shared markdown-it
    parser instead of a new one per row (building the parser costs about as much as parsing
    a short row): a copy of one `Markdown` with the text and its parse set. The parser is
    rich's (CommonMark, tables, strike-through) with raw HTML off: rich draws no HTML, so a
    `<div>` block or a `<b>` tag would vanish with the text inside; here it stays text."""
    template, parser = _markdown_kit()
    made = copy.copy(template)
    made.markup = text
    made.parsed = parser.parse(text)
    return made  # type: ignore[no-any-return]


@cache
def _markdown_options(color: bool, width: int) -> tuple[Console, ConsoleOptions]:
    """A console that renders (never prints) Markdown, and its options at `width`: built once,
    with its size fixed (a console without one asks the terminal on every render)."""
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
    return console, console.options.update_width(width)


def markdown_lines(text: str, width: int, *, color: bool) -> list[str]:
    """Sanitised `text` rendered as Markdown by rich at `width`: screen lines with rich's
    standard colour codes (or none), without the spaces rich pads a line with."""
    console, options = _markdown_options(color, width)
    lines = console.render_lines(parsed_markdown(text), options, pad=False)
    system = ColorSystem.STANDARD if color else None
    out = []
    for line in lines:
        out.append(
            "".join(
                segment.style.render(segment.text, color_system=system)
                if segment.style is not None and system is not None
                else segment.text
                for segment in unpadded(line)
                if not segment.control
            )
        )
    return out


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
                segment = Segment(text, segment.style)
            stripping = False
        kept.append(segment)
    kept.reverse()
    return kept


def strip_line_ends(segments: Iterable[Segment]) -> Iterator[Segment]:
    """`segments` (a rich render) with the spaces before every newline removed, control
    segments (a live display's cursor moves) kept in order, and an unfinished last line passed
    on unchanged (a later print may continue it): how the shell's terminal console prints
    tables and live displays."""
    line: list[Segment] = []
    for segment in segments:
        if segment.control or "\n" not in segment.text:
            line.append(segment)
            continue
        parts = segment.text.split("\n")
        for part in parts[:-1]:
            if part:
                line.append(Segment(part, segment.style))
            yield from unpadded(line)
            yield Segment("\n", segment.style)
            line = []
        if parts[-1]:
            line.append(Segment(parts[-1], segment.style))
    yield from line


# recover's columns (docs/commands.md "Narrow terminals"): the goal wraps (down to 24
# cells), then the result is cut (down to 16), then the usage, the result and then the time
# leave; the number, the status and the ids never give way: below that, each task is a block.
TASK_COLUMNS = (
    Column("#", lead=True),
    Column("status", lead=True),
    Column("time", drop=3, lead=True),
    Column("goal", fit="wrap", cap=48, least=24, blank=None),
    Column("result", fit="cut", cap=40, least=16, drop=2),
    Column("usage", drop=1),
    Column("child session", blank=None),
    Column("delegation"),
    Column("subagent"),
)
USAGE = [c.header for c in TASK_COLUMNS].index("usage")


def _task_rows(rows: list[TableRow], entries: Iterable[TaskEntry], depth: int) -> None:
    """One row per task (numbered `CALL.TASK`, both 1-based, within its conversation), then
    its gap and its nested tasks, indented."""
    for entry in entries:
        label = STATUS_LABELS.get(entry.status, entry.status)
        mark = STORE_MARK if entry.result_source == "store" else ""
        goal = clean_line(entry.goal or "(no goal recorded)")
        if len(goal) > 100:
            goal = goal[:99] + "…"
        ref = clean_line(entry.child_session_id) if entry.child_session_id else "-"
        cells = [
            ("  " * depth + ("↳ " if depth else "") + number_of(entry), ""),
            (label + mark, STATUS_STYLES.get(entry.status, "")),
            (duration_text(entry.duration_seconds) or "-", ""),
            (goal, ""),
            (result_line(entry, RESULT_WIDTH) or "-", "" if entry.status == "completed" else "dim"),
            (usage_cell(entry.usage), ""),
            (ref, ""),
            (clean_line(entry.delegation_id or "-"), ""),
            (clean_line(entry.subagent_id or "-"), ""),
        ]
        rows.append(TableRow(cells))
        told = usage_told(entry)
        if told:  # what the result told the parent, under the proven sum (block form: a note)
            cells = [("", "")] * len(TASK_COLUMNS)
            cells[USAGE] = (told, "dim")
            rows.append(TableRow(cells, note=(RECOVER["told"].format(told=told), "dim")))
        if entry.gap:
            text = gap_text(entry)
            gap = [("", ""), ("gap", "dim"), ("", ""), (text, "dim")] + [("", "")] * (len(TASK_COLUMNS) - 4)
            rows.append(TableRow(gap, note=(text, "dim")))
        _task_rows(rows, entry.children, depth + 1)


def task_table(entries: Iterable[TaskEntry]) -> Table:
    """The tasks as our table (`Table`): laid out at the width it is drawn at."""
    rows: list[TableRow] = []
    _task_rows(rows, entries, 0)
    return Table(TASK_COLUMNS, rows)


def tasks(console: Console, doc: TasksDoc, statuses: Sequence[str] = ()) -> None:
    """The delegated tasks of a parent chat: a table (statuses readable without colour),
    a summary line with the count of each status, then where missing child ids can be found.
    `statuses`: the `--status` filter that chose `doc.tasks` (its summary counts every task)."""
    renderable = tasks_renderable(doc, statuses=statuses)
    console.print(renderable, crop=False)  # a line wider than the screen: an id, whole


def tasks_renderable(
    doc: TasksDoc, *, note: str | None = None, statuses: Sequence[str] = ()
) -> RenderableType:
    """What `tasks` prints, as one renderable (`recover --watch` redraws it in place), with an
    optional dim last line (the watch's state)."""
    parts: list[RenderableType] = []
    if not doc.tasks:
        parts.append(Text(no_tasks_text(doc, statuses), style="dim"))
    else:
        parts.extend(_table_parts(doc))
    if note:
        parts.append(Text(note, style="dim"))
    return Group(*parts)


def _table_parts(doc: TasksDoc) -> list[RenderableType]:
    parts: list[RenderableType] = [task_table(doc.tasks), Text(summary_line(doc), style="dim")]
    parts.extend(Text(note, style="dim") for note in notes(doc))
    return parts


# What a piece or line is -> its rich style ("" none): the rows' parts (rows.PARTS), then
# whole lines.
PALETTE = {
    **{"user": "bold cyan", "assistant": "bold green", "tool": "bold yellow", "system": "bold magenta"},
    **{"role": "bold", "kind": "italic", "tool_name": "yellow", "call_id": "dim", "row_id": "dim"},
    **{
        "archived": "dim italic",
        "prose": "",
        "output": "",
        "cut": "dim italic",
        "status": "dim",
        "steer": "cyan",
    },
    **{"reasoning_label": "dim italic", "reasoning": "dim", "hidden": "dim"},
    **{
        "call": "yellow",
        "call_id_in_call": "dim yellow",
        "arguments": "yellow",
        "no_arguments": "dim italic yellow",
    },
    **{"empty": "dim italic", "quiet": "dim", "goal": "bold", "segment": "dim", "footer": "dim"},
}


def sgr(style: str) -> tuple[str, str]:
    """What opens and what closes rich style `style` on a 16-colour terminal, as rich writes
    them (`("", "")` for no style): painters that build lines as strings wrap text in these."""
    opened, _, closed = Style.parse(style).render("\n", color_system=ColorSystem.STANDARD).partition("\n")
    return opened, closed


CODES = {style: sgr(style) for style in set(PALETTE.values())}
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
        run, style = "", ""
        for text, what in pieces:
            if not text:
                continue
            this = PALETTE[what]
            if this != style:
                opened, closed = CODES[style]
                out.append(opened + run + closed)
                run, style = "", this
            run += text
        opened, closed = CODES[style]
        out.append(opened + run + closed)
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


PIPED_COLUMNS = ("parent_session", "started", "children", "state", "end_reason", "delegated_by", "title")
OPEN_HINT = "list a chat's tasks: hermes-task recover PARENT_SESSION"


def _state(entry: ParentEntry) -> str:
    return f"ended ({entry.end_reason})" if entry.state == "ended" and entry.end_reason else entry.state


def _text(entry: ParentEntry) -> tuple[str, str]:
    """The title, else the first user words (dim: not a title), else `-`."""
    if entry.title:
        return entry.title, ""
    if entry.first_words:
        return entry.first_words, "dim"
    return "-", "dim"


def parents_table(entries: Sequence[ParentEntry], *, utc: bool = False) -> Table:
    """The chats as our table: the state leaves first, then the start time; the title wraps;
    the ids never give way (blocks below that). `delegated by` appears when a chat is itself
    a delegated child."""
    nested = any(e.delegated_by for e in entries)
    columns = [
        Column("parent session", lead=True),
        Column("started", drop=2),
        Column("children"),
        Column("state", drop=1),
        *([Column("delegated by")] if nested else []),
        Column("title", fit="wrap", cap=60, least=20, blank=None),
    ]
    rows = []
    for entry in entries:
        children = f"{entry.delegated_children}{'+' if entry.more_children else ''}"
        cells = [
            (clean_line(entry.id), "bold"),
            (when(entry.started_at, utc=utc) or "-", ""),
            (children, ""),
            (clean_line(_state(entry)), "green" if entry.state == "open" else "dim"),
            *([(clean_line(entry.delegated_by or "-"), "")] if nested else []),
            _text(entry),
        ]
        rows.append(TableRow(cells))
    return Table(columns, rows)


def parents_renderable(entries: Sequence[ParentEntry], *, utc: bool = False) -> RenderableType:
    """The table, a count line and how to open one."""
    count = plural(len(entries), "chat") + " that delegated, most recent delegation first"
    return Group(parents_table(entries, utc=utc), Text(count, style="dim"), Text(OPEN_HINT, style="dim"))


def parent_line(entry: ParentEntry, *, utc: bool = False) -> str:
    """One chat as a tab-separated line (`PIPED_COLUMNS`), without a newline."""
    title, _style = _text(entry)
    fields = (
        entry.id,
        when(entry.started_at, utc=utc),
        str(entry.delegated_children),
        entry.state,
        entry.end_reason or "",
        entry.delegated_by or "",
        "" if title == "-" else title,
    )
    return "\t".join(clean_line(field) for field in fields)


def parent_lines(entries: Sequence[ParentEntry], *, header: bool = False, utc: bool = False) -> list[str]:
    out = ["\t".join(PIPED_COLUMNS)] if header else []
    return out + [parent_line(entry, utc=utc) for entry in entries]
