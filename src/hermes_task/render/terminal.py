"""What rich draws for the terminal: the task table of `recover` (and `recover --watch`),
Markdown prose for the terminal painter (`render/terminal_rows.py`), and the segment filter
that keeps rich's line-end padding off a terminal.

Every backend string is passed through `sanitize.clean`/`clean_line` first and only ever
wrapped in `Text` (or `Markdown` with hyperlinks off), so backend bytes cannot inject escape
sequences, markup or OSC 8 links; only rich's own SGR colour codes reach the terminal.
"""

from __future__ import annotations

import copy
import io
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import cache
from typing import Any

from rich.color import ColorSystem
from rich.console import Console, ConsoleOptions, Group, RenderableType
from rich.segment import Segment
from rich.text import Text

from hermes_task.core.documents import TaskEntry, TasksDoc
from hermes_task.core.sanitize import clean_line
from hermes_task.core.ui_strings import RECOVER, STATUS_LABELS
from hermes_task.render import usagetext
from hermes_task.render.plain import (
    RESULT_WIDTH,
    duration_text,
    gap_text,
    no_tasks_text,
    notes,
    number_of,
    result_line,
    summary_line,
)
from hermes_task.render.table import Column, Row, Table
from hermes_task.render.target import FALLBACK_WIDTH

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


def _task_rows(rows: list[Row], entries: Iterable[TaskEntry], depth: int) -> None:
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
            (usagetext.cell(entry.usage), ""),
            (ref, ""),
            (clean_line(entry.delegation_id or "-"), ""),
            (clean_line(entry.subagent_id or "-"), ""),
        ]
        rows.append(Row(cells))
        told = usagetext.told(entry)
        if told:  # what the result told the parent, under the proven sum (block form: a note)
            cells = [("", "")] * len(TASK_COLUMNS)
            cells[USAGE] = (told, "dim")
            rows.append(Row(cells, note=(RECOVER["told"].format(told=told), "dim")))
        if entry.gap:
            text = gap_text(entry)
            gap = [("", ""), ("gap", "dim"), ("", ""), (text, "dim")] + [("", "")] * (len(TASK_COLUMNS) - 4)
            rows.append(Row(gap, note=(text, "dim")))
        _task_rows(rows, entry.children, depth + 1)


def task_table(entries: Iterable[TaskEntry]) -> Table:
    """The tasks as our table (`render/table.py`): laid out at the width it is drawn at."""
    rows: list[Row] = []
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


class QuietConsole(Console):
    """The rich console the commands draw with (tables, live displays, a styled stderr line):
    rich's `Console` whose closed pipe calls `on_broken_pipe` (the CLI's quiet exit; rich's own
    handler exits 1), and, with `trim` (a terminal), no line keeps rich's trailing padding
    (copied lines stay clean). Piped output is never padded, and keeps every byte of the text."""

    def __init__(self, *, on_broken_pipe: Callable[[], None], trim: bool, **options: Any) -> None:
        super().__init__(**options)
        self.quiet_exit = on_broken_pipe
        self.trim = trim

    def on_broken_pipe(self) -> None:
        self.quiet_exit()

    def render(self, renderable: Any, options: Any = None) -> Iterable[Segment]:
        rendered = super().render(renderable, options)
        return strip_line_ends(rendered) if self.trim else rendered
