"""One transcript row for the terminal, readable first (rich, no markup from data).

Invariants: every backend string passes `sanitize.clean`/`clean_line` and is only wrapped in
`Text` (or `Markdown` with hyperlinks off); with `full` every byte of the row's text is
drawn, and without it only tool output is cut (`core/readable.py`: 12 lines, ~2,000
characters, with a count of what was left out) and compaction boilerplate and status
notices shrink to one dim line; user and assistant prose is never cut.
"""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.text import Text

from hermes_task.core.documents import Row
from hermes_task.core.readable import BOILERPLATE_KINDS, STATUS_KINDS, looks_like_markdown
from hermes_task.core.sanitize import clean, clean_line
from hermes_task.render.plain_rows import BOILERPLATE_LABELS, Style, tool_parts, when

__all__ = ["Style", "quiet_line", "row_renderable", "when"]

ROLE_STYLES = {
    "user": "bold cyan",
    "assistant": "bold green",
    "agent": "bold green",
    "tool": "bold yellow",
    "system": "bold magenta",
}
# The styles of a tool result's parts (plain_rows.tool_parts): a steer in the user's colour.
PART_STYLES = {"text": "", "note": "dim italic", "status": "dim", "steer": "cyan"}


def _prose(text: str, markdown: bool) -> RenderableType:
    safe = clean(text)
    if markdown and looks_like_markdown(safe):
        return parsed_markdown(safe)
    return Text(safe)


@cache
def _markdown_kit() -> tuple[Any, Any]:
    from markdown_it import MarkdownIt
    from rich.markdown import Markdown

    return Markdown("", hyperlinks=False), MarkdownIt().enable("strikethrough").enable("table")


def parsed_markdown(text: str) -> RenderableType:
    """`rich.markdown.Markdown(text, hyperlinks=False)`, parsed by one shared markdown-it
    parser (the parser rich builds for it) instead of a new one per row: building the parser
    costs more than parsing a short row. A copy of one `Markdown` keeps every other attribute
    as rich sets it; `tests/unit/test_ansi.py` renders both and compares."""
    template, parser = _markdown_kit()
    made = copy.copy(template)
    made.markup = text
    made.parsed = parser.parse(text)
    return made  # type: ignore[no-any-return]


def _header(row: Row, style: Style) -> Text:
    role = "assistant" if row.role == "agent" else row.role
    header = Text()
    header.append("▌ ", style=ROLE_STYLES.get(role, "bold"))
    header.append(clean_line(role), style=ROLE_STYLES.get(role, "bold"))
    if row.kind:
        header.append(f" [{clean_line(row.kind)}]", style="italic")
    if row.role == "tool" and row.tool_name:
        header.append(f" {clean_line(row.tool_name)}", style="yellow")
    if row.tool_call_id:
        header.append(f" ({clean_line(row.tool_call_id)})", style="dim")
    header.append(f"  #{row.id}", style="dim")
    stamp = when(row.timestamp, utc=style.utc)
    if stamp:
        header.append(f"  {stamp}", style="dim")
    if row.archived:
        header.append("  archived", style="dim italic")
    return header


def quiet_line(row: Row, style: Style) -> Text | None:
    """Boilerplate and status rows as one dim line (None: draw the row in full)."""
    if style.full or not (row.kind in BOILERPLATE_KINDS or row.kind in STATUS_KINDS):
        return None
    line = Text(style="dim")
    stamp = when(row.timestamp, utc=style.utc)
    size = len(row.text or "")
    if row.kind in BOILERPLATE_KINDS:
        line.append(f"▸ {BOILERPLATE_LABELS[row.kind or '']}, {size:,} chars (--full shows it)")
    else:
        first = clean_line((row.text or "").strip().split("\n", 1)[0])
        if len(first) > 100:
            first = first[:99] + "…"
        line.append(f"· {clean_line(row.kind or '')}: {first}")
    line.append(f"  #{row.id}")
    if stamp:
        line.append(f"  {stamp}")
    return line


def _tool_body(text: str, style: Style) -> list[Text]:
    return [Text(part, style=PART_STYLES[kind]) for part, kind in tool_parts(text, style)]


def row_renderable(row: Row, style: Style) -> RenderableType:
    """One row: a header line (role, kind, tool, id, time) and its indented body."""
    quiet = quiet_line(row, style)
    if quiet is not None:
        return quiet
    header = _header(row, style)
    body: list[RenderableType] = []
    if row.reasoning:
        if style.reasoning:
            body.append(Text("reasoning:", style="dim italic"))
            body.append(Text(clean(row.reasoning), style="dim"))
        else:
            body.append(
                Text(f"▸ reasoning hidden ({len(row.reasoning)} chars; --reasoning shows it)", style="dim")
            )
    for note in row.commentary:
        body.append(_prose(note, style.markdown))
    if row.text and row.role == "tool":
        body.extend(_tool_body(row.text, style))
    elif row.text:
        body.append(_prose(row.text, style.markdown))
    for call in row.tool_calls:
        line = Text("→ ", style="yellow")
        line.append(f"call {clean_line(call.name or '(unnamed tool)')}", style="yellow")
        if call.id:
            line.append(f" ({clean_line(call.id)})", style="dim")
        line.append(" ")
        if call.arguments is None:
            line.append("(no arguments recorded)", style="dim italic")
        else:
            line.append(clean(call.arguments))
        body.append(line)
    if not body:
        body.append(Text("(empty)", style="dim italic"))
    if style.markdown and not all(isinstance(part, Text) for part in body):
        return Group(header, Padding(Group(*body), (0, 0, 0, 2)))
    # Plain output: whole lines, indented, never cropped or padded (greppable, selectable).
    plain = header.copy()
    for part in body:
        assert isinstance(part, Text)
        for line in part.split("\n", allow_blank=True):
            plain.append("\n  ")
            plain.append_text(line)
    return plain
