"""Terminal rendering of transcripts and task lists (rich, no markup from data).

Every backend string is passed through `sanitize.clean` first and only ever wrapped in
`Text` (or `Markdown` with hyperlinks off), so transcript bytes cannot inject escape
sequences, markup or OSC 8 links; only rich's own SGR colour codes reach the terminal.
Prose is Markdown when `markdown` is set (a TTY), plain selectable text otherwise.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from hermes_task.core.documents import Row, TaskEntry, TaskInfo, TasksDoc, TranscriptDoc
from hermes_task.core.messages import RECOVER, STATUS_LABELS, UNAVAILABLE
from hermes_task.core.sanitize import clean_line
from hermes_task.core.verdict import flatten
from hermes_task.failures import Code, error_message
from hermes_task.render.ansi import text_ansi
from hermes_task.render.ansi_rows import Paint, row_ansi
from hermes_task.render.plain import RESULT_WIDTH, duration_text, number_of, result_line
from hermes_task.render.plain_rows import footer_text, goal_text, segment_text
from hermes_task.render.rows import Style, row_renderable
from hermes_task.render.unpadded import strip_text_line_ends

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


def goal_line(doc: TranscriptDoc, width: int) -> Text | None:
    """The task's goal on one line, cut to `width`."""
    goal = goal_text(doc, width)
    return None if goal is None else Text(goal, style="bold")


def segment_line(sid: str, previous: str | None, reason: str | None) -> Text:
    return Text(segment_text(sid, previous, reason), style="dim")


def transcript(
    console: Console,
    doc: TranscriptDoc,
    *,
    markdown: bool,
    reasoning: bool,
    full: bool = False,
    utc: bool = False,
    write: Callable[[str], None] | None = None,
) -> None:
    """The goal, the rows of a transcript document (one dim line where the task moves to a
    newer segment), then a one-line footer about coverage. With `write`, everything is
    rendered to text (`Batch`) and passed to it about every 200 rows, so a pager can start
    before the end is formatted; without it, each part is printed on `console`."""
    batch = Batch(console, write)
    goal = goal_line(doc, console.width)
    if goal is not None:
        batch.add(goal)
    style = Style(markdown=markdown, reasoning=reasoning, full=full, utc=utc)
    order = {sid: i for i, sid in enumerate(doc.task.lineage)}
    reasons = {s.id: s.end_reason for s in doc.task.segments}
    newest: str | None = None
    for row in doc.rows:
        if newest is not None and order.get(row.session_id, -1) > order.get(newest, -1):
            batch.add(segment_line(row.session_id, newest, reasons.get(newest)))
        if newest is None or order.get(row.session_id, -1) > order.get(newest, -1):
            newest = row.session_id
        batch.row(row, style)
    batch.add(footer(doc), blank=False)
    batch.flush()


class Batch:
    """Renderables each followed by a blank line, as `console.print` draws them one by one.
    Without `write` they are printed on the console; with it they are rendered to text and
    that text passed to `write` every `size` items and at `flush`: rows without Markdown by
    `render.ansi_rows`, a `Text` whose lines fit by `render.ansi`, anything else by rich into
    a capture (all three write the same characters)."""

    def __init__(self, console: Console, write: Callable[[str], None] | None = None, size: int = 200) -> None:
        self.console = console
        self.write = write
        self.size = size
        self.pending: list[str] = []
        self.paint = Paint.of(console) if write is not None else None
        self.width = None if console.soft_wrap else console.width
        # A console that strips rich's line-end padding (cli/shell.py, on a terminal) gets the
        # fast paths' text stripped the same way.
        self.unpadded = bool(getattr(console, "unpadded", False))

    def row(self, row: Row, style: Style) -> None:
        fast = None if self.paint is None else row_ansi(row, style, self.paint, self.width)
        if fast is None:
            self.add(row_renderable(row, style))
        else:
            self.pending.append(fast + "\n\n")
            if len(self.pending) >= self.size:
                self.flush()

    def add(self, item: RenderableType, *, blank: bool = True) -> None:
        if self.write is None:
            self.console.print(item)
            if blank:
                self.console.print()
            return
        fast = text_ansi(item, self.console) if isinstance(item, Text) else None
        if fast is None:
            with self.console.capture() as captured:
                self.console.print(item)
            fast = captured.get()
        else:
            fast += "\n"
        self.pending.append(fast + "\n" if blank else fast)
        if len(self.pending) >= self.size:
            self.flush()

    def flush(self) -> None:
        if self.write is not None and self.pending:
            text = "".join(self.pending)
            self.write(strip_text_line_ends(text) if self.unpadded else text)
            self.pending = []


def footer(doc: TranscriptDoc) -> Text:
    return Text(footer_text(doc), style="dim")


def rows(
    console: Console,
    items: Iterable[Row],
    *,
    markdown: bool,
    reasoning: bool,
    full: bool = False,
    utc: bool = False,
    task: TaskInfo | None = None,
    newest: str | None = None,
    write: Callable[[str], None] | None = None,
) -> str | None:
    """Rows appended to an ongoing output (follow): printed once each, no redraw; with the
    task, one dim line where it moves to a newer segment than `newest` (the segment of the
    newest row printed before). Returns that segment after these rows. `write` as in
    `transcript`."""
    style = Style(markdown=markdown, reasoning=reasoning, full=full, utc=utc)
    order = {sid: i for i, sid in enumerate(task.lineage if task else ())}
    reasons = {s.id: s.end_reason for s in task.segments} if task else {}
    batch = Batch(console, write)
    for row in items:
        if newest is None or order.get(row.session_id, -1) > order.get(newest, -1):
            if newest is not None and task is not None:
                batch.add(segment_line(row.session_id, newest, reasons.get(newest)))
            newest = row.session_id
        batch.row(row, style)
    batch.flush()
    return newest


def _gap_text(entry: TaskEntry) -> str:
    gap = entry.gap or ""
    reason = RECOVER.get(f"gap_{gap}")
    if reason is None:
        reason = error_message(Code(gap)) if gap in {c.value for c in Code} else gap
    return RECOVER["gap"].format(reason=clean_line(reason))


def _task_rows(table: Table, entries: Iterable[TaskEntry], depth: int) -> None:
    """One row per task (numbered `CALL.TASK`, both 1-based, within its conversation), then
    its gap and its nested tasks, indented."""
    for entry in entries:
        label = STATUS_LABELS.get(entry.status, entry.status)
        mark = STORE_MARK if entry.result_source == "store" else ""
        status = Text(label + mark, style=STATUS_STYLES.get(entry.status, ""))
        goal = clean_line(entry.goal or "(no goal recorded)")
        if len(goal) > 100:
            goal = goal[:99] + "…"
        ref = clean_line(entry.child_session_id) if entry.child_session_id else "-"
        table.add_row(
            "  " * depth + ("↳ " if depth else "") + number_of(entry),
            status,
            Text(duration_text(entry.duration_seconds) or "-"),
            Text(goal),
            Text(result_line(entry, RESULT_WIDTH) or "-", style="" if entry.status == "completed" else "dim"),
            Text(ref),
            Text(clean_line(entry.delegation_id or "-")),
            Text(clean_line(entry.subagent_id or "-")),
        )
        if entry.gap:
            table.add_row(
                "", Text("gap", style="dim"), "", Text(_gap_text(entry), style="dim"), "", "", "", ""
            )
        _task_rows(table, entry.children, depth + 1)


def tasks(console: Console, doc: TasksDoc) -> None:
    """The delegated tasks of a parent chat: a table (statuses readable without colour),
    a summary line with the count of each status, then where missing child ids can be found."""
    console.print(tasks_renderable(doc))


def tasks_renderable(doc: TasksDoc, *, note: str | None = None) -> RenderableType:
    """What `tasks` prints, as one renderable (`recover --watch` redraws it in place), with an
    optional dim last line (the watch's state)."""
    parts: list[RenderableType] = []
    if not doc.tasks:
        parts.append(Text(RECOVER["no_tasks"].format(sid=clean_line(doc.parent_id)), style="dim"))
    else:
        parts.extend(_table_parts(doc))
    if note:
        parts.append(Text(note, style="dim"))
    return Group(*parts)


def _table_parts(doc: TasksDoc) -> list[RenderableType]:
    parts: list[RenderableType] = []
    table = Table(show_edge=False, pad_edge=False, box=None, header_style="bold")
    table.add_column("#", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("time", no_wrap=True)
    table.add_column("goal", overflow="fold", max_width=48)
    table.add_column("result", no_wrap=True, overflow="ellipsis", max_width=40)
    for heading in ("child session", "delegation", "subagent"):
        table.add_column(heading, no_wrap=True, overflow="ignore")  # ids are copied: never cut
    _task_rows(table, doc.tasks, 0)
    parts.append(table)
    every = flatten(doc.tasks)
    summary = doc.summary
    counts: Counter[str] = Counter(e.status for e in every)
    line = Text(style="dim")
    line.append(
        RECOVER["summary"].format(total=summary.total, terminal=summary.terminal, state=summary.state)
    )
    line.append(" (" + ", ".join(f"{counts[s]} {s}" for s in STATUS_LABELS if counts[s]) + ")")
    parts.append(line)
    if any(e.result_source == "store" for e in every):
        parts.append(Text(RECOVER["store_note"], style="dim"))
    for reason in dict.fromkeys(e.unavailable_reason for e in every if e.unavailable_reason):
        if reason in UNAVAILABLE:
            parts.append(Text(RECOVER["unavailable"].format(reason=UNAVAILABLE[reason]), style="dim"))
    if any(e.child_session_id for e in every):
        parts.append(Text(RECOVER["open"], style="dim"))
    return parts
