"""Renderers: documents to terminal text, plain lines or JSON, written to the stream they are
given (they read nothing and decide nothing). `Target`: the output a run's session builds once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field, replace

MIN_WIDTH = 20
MAX_WIDTH = 10_000
FALLBACK_WIDTH = 80


def sane_width(value: object) -> int | None:
    """`value` (an int or the text of one, as COLUMNS holds it) as a terminal width, or None."""
    text = "" if value is None else str(value).strip()
    width = int(text) if text.isdigit() else 0
    return width if MIN_WIDTH <= width <= MAX_WIDTH else None


@dataclass(eq=False, slots=True)
class Target:
    """An output: `tty` a terminal (Markdown is rendered, lines wrap at `width`, else `width` is
    None: lines never wrap), `color` SGR codes allowed; `columns` always sane (80 if it was not);
    `plain`: the plain painter's format, byte for byte; `height` is for the pager's decision."""

    write: Callable[[str], object] = field(repr=False)
    _: KW_ONLY
    tty: bool = False
    color: bool = False
    columns: int = FALLBACK_WIDTH
    height: int = 25
    width: int | None = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.columns = sane_width(self.columns) or FALLBACK_WIDTH
        self.width = self.columns if self.tty else None

    @property
    def plain(self) -> bool:
        return not self.tty and not self.color

    def to(self, write: Callable[[str], object]) -> Target:
        """The same output look, written through `write` (a pager's input)."""
        return replace(self, write=write)
