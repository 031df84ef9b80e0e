"""What `parents` prints on a terminal (our table, `render/table.py`: ids whole at any width)
and piped (one tab-separated line per chat, docs/commands.md "parents"). Every field is
sanitised text the dashboard showed (`core/documents.py`); pure: entries in, text out.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Group, RenderableType
from rich.text import Text

from hermes_task.core.documents import ParentEntry
from hermes_task.core.sanitize import clean_line
from hermes_task.render.rows import plural, when
from hermes_task.render.table import Column, Row, Table

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
        rows.append(Row(cells))
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


__all__ = ["OPEN_HINT", "PIPED_COLUMNS", "parent_line", "parent_lines", "parents_renderable", "parents_table"]
