"""Our table for a terminal, ids whole at any width (docs/commands.md "Narrow terminals"): `recover`'s
tasks and live table, `parents` and its piped lines; and the filter that keeps rich's line-end padding
off a terminal. Every backend string is `clean_line`d, then only ever wrapped in `Text`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Literal

from msgspec import Struct
from rich.console import Console, ConsoleOptions, Group, RenderableType
from rich.segment import Segment
from rich.text import Text

from hermes_task.core.documents import ParentEntry, TaskEntry, TasksDoc
from hermes_task.core.sanitize import clean_line, clip
from hermes_task.core.ui_strings import RECOVER
from hermes_task.render.rows import (
    RESULT_WIDTH,
    duration_text,
    gap_text,
    no_tasks_text,
    notes,
    number_of,
    plural,
    result_line,
    status_text,
    summary_line,
    usage_cell,
    usage_told,
    when,
)
from hermes_task.render.terminal_rows import breaks, unpadded, width_of

GAP = 2  # spaces between two columns
INDENT = 2  # how far a block's lines sit under its first line
Fit = Literal["whole", "wrap", "cut"]


class Column(Struct, frozen=True):
    header: str
    fit: Fit = "whole"
    cap: int | None = None  # the widest a `wrap` or `cut` column is drawn
    least: int = 0  # the narrowest a `wrap` or `cut` column is drawn
    drop: int = 0  # 0: never leaves the table; else leaves in this order (1 first)
    lead: bool = False  # in block form: on the block's first line
    blank: str | None = "-"  # in block form, a cell with this text is left out (None: never)


class Row(Struct, frozen=True):
    """A (text, style) cell per column; `note`: the row in block form (one wrapped line)."""

    cells: Sequence[tuple[str, str]]
    note: tuple[str, str] | None = None


class Table(Struct, frozen=True):
    columns: Sequence[Column]
    rows: Sequence[Row]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Text]:
        yield from lines(self, options.max_width)


def layout(columns: Sequence[Column], rows: Sequence[Row], width: int) -> list[int | None] | None:
    """Each column's drawn width (None: dropped), or None when no table fits (blocks): `wrap`
    columns shrink to their `least`, then `cut` ones; then the `drop` columns leave, rank 1
    first, and that is tried again."""
    natural = []
    for i, column in enumerate(columns):
        widest = max([width_of(column.header), *(width_of(row.cells[i][0]) for row in rows)])
        natural.append(widest if column.fit == "whole" or column.cap is None else min(widest, column.cap))
    kept = list(range(len(columns)))
    drops = sorted((i for i, c in enumerate(columns) if c.drop), key=lambda i: columns[i].drop)
    order = sorted(
        range(len(columns)), key=lambda i: (columns[i].fit == "cut", columns[i].drop == 0, columns[i].drop)
    )
    while True:
        out: list[int | None] = [natural[i] if i in kept else None for i in range(len(columns))]
        over = sum(natural[i] for i in kept) + GAP * (len(kept) - 1) - width
        for i in (i for i in order if i in kept and columns[i].fit != "whole"):
            if over <= 0:
                break
            give = min(over, natural[i] - min(columns[i].least, natural[i]))
            out[i] = natural[i] - give
            over -= give
        if over <= 0:
            return out
        if not drops:
            return None
        kept.remove(drops.pop(0))


def _cell_lines(text: str, fit: Fit, width: int) -> list[str]:
    if fit == "whole" or width_of(text) <= width:
        return [text]
    if fit == "wrap":
        return [text[start:end] for start, end in breaks(text, width, width)]
    kept = ""
    for character in text:
        if width_of(kept + character) > width - 1:
            break
        kept += character
    return [kept + "…"]


def _line(parts: Sequence[tuple[str, str]]) -> Text:
    line = Text(no_wrap=True, overflow="ignore")
    for text, style in parts:
        line.append(text, style=style or None)
    line.rstrip()
    return line


def table_lines(table: Table, widths: Sequence[int | None]) -> Iterator[Text]:
    kept = [i for i, w in enumerate(widths) if w is not None]
    last = kept[-1]

    def padded(i: int, text: str) -> str:
        room = widths[i] or 0
        return text if i == last else text + " " * (room - width_of(text) + GAP)

    header = [(padded(i, table.columns[i].header), "bold") for i in kept]
    yield _line(header)
    for row in table.rows:
        if not any(row.cells[i][0] for i in kept):
            continue  # a row of the columns that left (recover's `told` under a dropped usage)
        cells = {i: _cell_lines(row.cells[i][0], table.columns[i].fit, widths[i] or 0) for i in kept}
        for n in range(max(len(c) for c in cells.values())):
            yield _line(
                [(padded(i, cells[i][n] if n < len(cells[i]) else ""), row.cells[i][1]) for i in kept]
            )


def block_lines(table: Table, width: int) -> Iterator[Text]:
    """Each row as a block: its `lead` cells, then a labelled line per other cell."""
    columns = table.columns
    label_width = max((width_of(c.header) for c in columns if not c.lead), default=0)
    for row in table.rows:
        if row.note is not None:
            text, style = row.note
            for start, end in breaks(text, max(width - INDENT, 1), max(width - INDENT, 1)):
                yield _line([(" " * INDENT + text[start:end], style)])
            continue
        parts: list[tuple[str, str]] = []  # the lead cells two spaces apart, wrapped between cells
        for text, style in [cell for cell, c in zip(row.cells, columns, strict=True) if c.lead and cell[0]]:
            if parts and sum(width_of(part) for part, _ in parts) + GAP + width_of(text) > width:
                yield _line(parts)
                parts = []
            parts += [(" " * GAP, ""), (text, style)] if parts else [(text, style)]
        if parts:
            yield _line(parts)
        for (text, style), column in zip(row.cells, columns, strict=True):
            if column.lead or not text or text == column.blank:
                continue
            yield from _labelled(column, text, style, label_width, width)


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


def lines(table: Table, width: int) -> Iterator[Text]:
    widths = layout(table.columns, table.rows, width)
    return block_lines(table, width) if widths is None else table_lines(table, widths)


def strip_line_ends(segments: Iterable[Segment]) -> Iterator[Segment]:
    """`segments` (a rich render) with the spaces before every newline removed, control
    segments kept in order, an unfinished last line passed on (a later print may continue it)."""
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


# recover's columns (docs/commands.md "Narrow terminals").
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


def _task_rows(entries: Iterable[TaskEntry], depth: int) -> Iterator[Row]:
    for entry in entries:
        cells = [
            ("  " * depth + ("↳ " if depth else "") + number_of(entry), ""),
            (status_text(entry), entry.status.style),
            (duration_text(entry.duration_seconds) or "-", ""),
            (clip(clean_line(entry.goal or "(no goal recorded)"), 100), ""),
            (result_line(entry, RESULT_WIDTH) or "-", "" if entry.status == "completed" else "dim"),
            (usage_cell(entry.usage), ""),
            (clean_line(entry.child_session_id or "-"), ""),
            (clean_line(entry.delegation_id or "-"), ""),
            (clean_line(entry.subagent_id or "-"), ""),
        ]
        yield Row(cells)
        if told := usage_told(entry):  # what the result told the parent, under the proven sum
            yield _note_row(RECOVER["told"].format(told=told), {USAGE: told})
        if entry.gap:
            text = gap_text(entry)
            yield _note_row(text, {1: "gap", 3: text})
        yield from _task_rows(entry.children, depth + 1)


def _note_row(note: str, cells: dict[int, str]) -> Row:
    """A row of dim `cells` (by column) only; in block form, `note`."""
    dim = [(cells[i], "dim") if i in cells else ("", "") for i in range(len(TASK_COLUMNS))]
    return Row(dim, note=(note, "dim"))


def task_table(entries: Iterable[TaskEntry]) -> Table:
    return Table(TASK_COLUMNS, list(_task_rows(entries, 0)))


def tasks(console: Console, doc: TasksDoc, statuses: Sequence[str] = ()) -> None:
    """A parent chat's tasks; `statuses`: the `--status` filter that chose `doc.tasks`."""
    console.print(tasks_renderable(doc, statuses=statuses), crop=False)  # a wider line: an id, whole


def tasks_renderable(
    doc: TasksDoc, *, note: str | None = None, statuses: Sequence[str] = ()
) -> RenderableType:
    """The table, the summary line and notes (`recover --watch` redraws it), `note` last."""
    table = [task_table(doc.tasks)] if doc.tasks else []
    texts = [summary_line(doc), *notes(doc)] if doc.tasks else [no_tasks_text(doc, statuses)]
    return Group(*table, *(Text(text, style="dim") for text in [*texts, note] if text))


PIPED_COLUMNS = ("parent_session", "started", "children", "state", "end_reason", "delegated_by", "title")
OPEN_HINT = "list a chat's tasks: hermes-task recover PARENT_SESSION"


def _text(entry: ParentEntry) -> tuple[str, str]:
    """The title, else the first user words (dim: not a title), else `-`."""
    return (entry.title, "") if entry.title else (entry.first_words or "-", "dim")


def parents_renderable(entries: Sequence[ParentEntry], *, utc: bool = False) -> RenderableType:
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
        state = f"ended ({entry.end_reason})" if entry.state == "ended" and entry.end_reason else entry.state
        cells = [
            (clean_line(entry.id), "bold"),
            (when(entry.started_at, utc=utc) or "-", ""),
            (children, ""),
            (clean_line(state), "green" if entry.state == "open" else "dim"),
            *([(clean_line(entry.delegated_by or "-"), "")] if nested else []),
            _text(entry),
        ]
        rows.append(Row(cells))
    count = plural(len(entries), "chat") + " that delegated, most recent delegation first"
    return Group(Table(columns, rows), Text(count, style="dim"), Text(OPEN_HINT, style="dim"))


def parent_lines(entries: Sequence[ParentEntry], *, header: bool = False, utc: bool = False) -> list[str]:
    out = ["\t".join(PIPED_COLUMNS)] if header else []
    for entry in entries:
        title = _text(entry)[0]
        fields = (
            entry.id,
            when(entry.started_at, utc=utc),
            str(entry.delegated_children),
            entry.state,
            entry.end_reason or "",
            entry.delegated_by or "",
            "" if title == "-" else title,
        )
        out.append("\t".join(clean_line(field) for field in fields))
    return out


class QuietConsole(Console):
    """The commands' rich console: a closed pipe calls `on_broken_pipe` (rich's own exits 1);
    with `trim` (a terminal) no line keeps rich's padding (copied lines stay clean)."""

    def __init__(self, *, on_broken_pipe: Callable[[], None], trim: bool, **options: Any) -> None:
        super().__init__(**options)
        self.quiet_exit = on_broken_pipe
        self.trim = trim

    def on_broken_pipe(self) -> None:
        self.quiet_exit()

    def render(self, renderable: Any, options: Any = None) -> Iterable[Segment]:
        rendered = super().render(renderable, options)
        return strip_line_ends(rendered) if self.trim else rendered
