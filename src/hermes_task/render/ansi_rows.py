"""Transcript rows for a terminal as text with rich's own colour codes, without building rich
`Text` objects: the fast path of `render/terminal.py` for rows that hold no Markdown.

Invariant: `row_ansi(row, style, paint, width)` is either None or exactly what
`console.print(rows.row_renderable(row, style))` writes without its final newline, on a
console whose colours `paint` was made from (`Paint.of(console)`). It answers None (draw it
through rich) for a row with Markdown prose to parse, a tab to expand, or a line wider than
`width` (rich would wrap it; `width` None: the console never wraps). Every piece here is a
piece `rows.py` appends as its own span, so rich writes each with its own codes, in the same
order; the codes come from rich's `Style.render`. Every backend string passes
`sanitize.clean`/`clean_line` first. `tests/unit/test_ansi.py` compares both on the captured
fixtures and on generated hostile rows.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.console import COLOR_SYSTEMS, Console
from rich.style import Style as RichStyle

from hermes_task.core.documents import Row
from hermes_task.core.readable import BOILERPLATE_KINDS, STATUS_KINDS, looks_like_markdown
from hermes_task.core.sanitize import clean, clean_line
from hermes_task.render.ansi import cropped_end
from hermes_task.render.plain_rows import Style, quiet_text, tool_parts, when
from hermes_task.render.rows import PART_STYLES, ROLE_STYLES

Piece = tuple[str, str]  # text, rich style ("" none; "a+b": b over a, as nested spans)
Line = list[Piece]


class Paint:
    """Text in a rich style as rich writes it on one console: `\\x1b[CODESm` text `\\x1b[0m`,
    or the bare text without a colour system; codes worked out by rich once per style."""

    def __init__(self, color_system: str | None) -> None:
        self.system = COLOR_SYSTEMS.get(color_system or "")
        self.codes: dict[str, tuple[str, str]] = {"": ("", "")}

    @classmethod
    def of(cls, console: Console) -> Paint | None:
        """The paint of `console`, or None when rich would strip colours itself (no_color
        with a colour system)."""
        if console.no_color and console.color_system is not None:
            return None
        return cls(console.color_system)

    def wrap(self, style: str) -> tuple[str, str]:
        found = self.codes.get(style)
        if found is None:
            combined = RichStyle()
            for part in style.split("+"):
                combined += RichStyle.parse(part)
            rendered = combined.render("\0", color_system=self.system)
            found = self.codes[style] = tuple(rendered.split("\0"))  # type: ignore[assignment]
        return found  # type: ignore[return-value]

    def line(self, pieces: Line) -> str:
        out = []
        for text, style in pieces:
            if text:
                before, after = self.wrap(style)
                out.append(f"{before}{text}{after}")
        return "".join(out)


def header(row: Row, style: Style) -> Line:
    role = "assistant" if row.role == "agent" else row.role
    marker = ROLE_STYLES.get(role, "bold")
    line: Line = [("▌ ", marker), (clean_line(role), marker)]
    if row.kind:
        line.append((f" [{clean_line(row.kind)}]", "italic"))
    if row.role == "tool" and row.tool_name:
        line.append((f" {clean_line(row.tool_name)}", "yellow"))
    if row.tool_call_id:
        line.append((f" ({clean_line(row.tool_call_id)})", "dim"))
    line.append((f"  #{row.id}", "dim"))
    stamp = when(row.timestamp, utc=style.utc)
    if stamp:
        line.append((f"  {stamp}", "dim"))
    if row.archived:
        line.append(("  archived", "dim italic"))
    return line


def body(row: Row, style: Style) -> list[tuple[str, str]] | None:
    """The body's parts before the tool calls as (sanitised text, style); None when a part
    is Markdown to parse."""
    parts: list[tuple[str, str]] = []
    if row.reasoning:
        if style.reasoning:
            parts += [("reasoning:", "dim italic"), (clean(row.reasoning), "dim")]
        else:
            parts.append((f"▸ reasoning hidden ({len(row.reasoning)} chars; --reasoning shows it)", "dim"))
    for note in row.commentary:
        if (safe := _prose(note, style)) is None:
            return None
        parts.append((safe, ""))
    if row.text and row.role == "tool":
        parts += [(text, PART_STYLES[kind]) for text, kind in tool_parts(row.text, style)]
    elif row.text:
        if (safe := _prose(row.text, style)) is None:
            return None
        parts.append((safe, ""))
    return parts


def _prose(text: str, style: Style) -> str | None:
    safe = clean(text)
    return None if style.markdown and looks_like_markdown(safe) else safe


def call_lines(name: str | None, call_id: str | None, arguments: str | None) -> list[Line]:
    """A tool call: a yellow `Text` ("→ ", "call NAME", dim " (ID)") with the arguments
    appended unstyled, so they are yellow too; one line per argument line."""
    first: Line = [("→ ", "yellow"), (f"call {clean_line(name or '(unnamed tool)')}", "yellow")]
    if call_id:
        first.append((f" ({clean_line(call_id)})", "yellow+dim"))
    if arguments is None:
        first += [(" ", "yellow"), ("(no arguments recorded)", "yellow+dim italic")]
        return [first]
    lines = clean(arguments).split("\n")
    first.append((" " + lines[0], "yellow"))
    return [first, *([(text, "yellow")] for text in lines[1:])]


def row_ansi(row: Row, style: Style, paint: Paint, width: int | None) -> str | None:
    """The row as rich writes it (without the final newline), or None: draw it with rich."""
    if row.kind and not style.full and (row.kind in BOILERPLATE_KINDS or row.kind in STATUS_KINDS):
        lines: list[Line] = [[(quiet_text(row, style) or "", "dim")]]
    else:
        parts = body(row, style)
        if parts is None:
            return None
        lines = [header(row, style)]
        for text, kind in parts:
            lines += ([("  ", ""), (line, kind)] for line in text.split("\n"))
        for call in row.tool_calls:
            lines += ([("  ", ""), *line] for line in call_lines(call.name, call.id, call.arguments))
        if not parts and not row.tool_calls:
            lines.append([("  ", ""), ("(empty)", "dim italic")])
    out = []
    for line in lines:
        plain = "".join(text for text, _ in line)
        if "\t" in plain:
            return None
        if (
            width is not None
            and 2 * len(plain) > width
            and (cell_len(plain) > width or cropped_end(plain, width))
        ):
            return None
        out.append(paint.line(line))
    return "\n".join(out)
