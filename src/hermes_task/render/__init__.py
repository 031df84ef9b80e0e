"""Renderers: documents to terminal text, plain lines or JSON, written to the stream they are
given (they read nothing and decide nothing).

`Target` is the output a run's session builds once (`cli/session.py` `output_target()`).
Invariants: `columns` is always sane (`MIN_WIDTH`..`MAX_WIDTH`); `width` is None exactly when
lines must never wrap (not a terminal), else `columns`; `plain` (no terminal, no colour)
means the plain painter's format, byte for byte.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field, replace

MIN_WIDTH = 20
MAX_WIDTH = 10_000
FALLBACK_WIDTH = 80


def sane_width(value: object) -> int | None:
    """`value` (an int or the text of one, as COLUMNS holds it) as a terminal width, or None
    when it is not one: missing, not a number, below 20 or above 10,000 columns."""
    text = str(value).strip() if value is not None else ""
    if not text.isdigit():
        return None
    width = int(text)
    return width if MIN_WIDTH <= width <= MAX_WIDTH else None


@dataclass(eq=False, slots=True)
class Target:
    """An output: `tty` a terminal (Markdown is rendered, lines wrap at `width`), `color` SGR
    codes allowed; an insane `columns` becomes 80; `height` is for the pager's decision."""

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
