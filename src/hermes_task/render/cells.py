"""Text on a screen, in terminal cells (rich measures a character's cells): tab stops and
where a line breaks to fit a width. Pure: strings in, numbers and strings out.

Invariants: `expand_tabs` changes nothing but tabs; `breaks` covers every character of a
line, in order, but the spaces it drops where it breaks, and never returns a line wider than
its width unless one character is (a wide character in a one-cell room).
"""

from __future__ import annotations

from bisect import bisect_right

from rich.cells import cell_len, get_character_cell_size

TAB_SIZE = 8


def expand_tabs(text: str, column: int = 0) -> str:
    """`text` (no newline) with each tab replaced by the spaces up to the next multiple of 8
    columns, `text` starting at `column`; a wide character counts two."""
    out: list[str] = []
    position = column
    pieces = text.split("\t")
    for piece in pieces[:-1]:
        position += cell_len(piece)
        spaces = TAB_SIZE - position % TAB_SIZE
        position += spaces
        out.append(piece + " " * spaces)
    out.append(pieces[-1])
    return "".join(out)


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
