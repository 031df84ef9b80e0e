"""A rich `Text` as the characters `Console.print` writes for it, without rich's layout pass,
when no line of it needs one.

Invariant: `text_ansi(text, console)` is either None or exactly what
`console.print(text)` writes on that console, less the final newline (a terminal or not, colour or not). It
answers only when every line fits the console's width (nothing to wrap, crop or pad), holds
no tab (nothing to expand) and the `Text` asks for no justification or overflow of its own;
otherwise the caller prints through rich. The styles still come from rich (`Text.render`,
`Style.render`), so colours, bold and dim are rich's own codes; what is skipped is wrapping
and line splitting, most of the cost of a short row. `tests/unit/test_ansi.py` compares it
with `console.print` on the captured fixtures and on generated rows.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.console import COLOR_SYSTEMS, Console
from rich.text import Span, Text


def cropped_end(line: str, width: int) -> bool:
    """Whether rich crops trailing whitespace off `line` although it fits: `Text.rstrip_end`
    counts characters, not cells, so a line with zero-width characters that is longer than
    `width` in characters loses up to that excess of its trailing whitespace."""
    return len(line) > width and line[-1:].isspace()


def text_ansi(text: Text, console: Console) -> str | None:
    """What `console.print(text)` writes before its final newline, or None when a line needs
    rich's layout (or the `Text` ends other than with a newline)."""
    if text.justify is not None or text.overflow is not None or text.no_wrap is not None or text.end != "\n":
        return None
    if console.no_color and console.color_system is not None:
        return None  # rich strips colours from every segment: leave that to it
    plain = text.plain
    if "\t" in plain:
        return None
    if not console.soft_wrap:  # soft wrap (not a terminal): rich never wraps or crops
        width = console.width
        for line in plain.split("\n"):
            if 2 * len(line) > width and (cell_len(line) > width or cropped_end(line, width)):
                return None
    if text.style:  # rich joins the wrapped lines, which makes a base style the first span
        text = Text(plain, spans=[Span(0, len(plain), text.style), *text.spans])
    system = COLOR_SYSTEMS.get(console.color_system or "")
    out: list[str] = []
    append = out.append
    for segment in text.render(console, end=""):
        piece, style = segment.text, segment.style
        if not style or system is None:
            append(piece)
        elif "\n" in piece:  # rich splits the lines first: each styled on its own
            append("\n".join(style.render(part, color_system=system) for part in piece.split("\n")))
        else:
            append(style.render(piece, color_system=system))
    return "".join(out)
