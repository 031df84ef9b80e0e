"""Terminal lines without the trailing spaces rich pads them with (pure over rich segments).

rich pads left-justified text (Markdown paragraphs, `Padding`) to the full console width and
keeps the space where it wrapped a line; in a terminal that turns every copied line into a
line of trailing blanks. `strip_line_ends` drops the spaces at the end of each finished line
of a render. Invariants: no character but a trailing space is removed, control segments
(cursor moves of a live display) are kept in order, and an unfinished last line is passed on
unchanged (a later print may continue it).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from rich.segment import Segment


def _rstrip(line: list[Segment]) -> list[Segment]:
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
    """`segments` with the spaces before every newline removed."""
    line: list[Segment] = []
    for segment in segments:
        if segment.control or "\n" not in segment.text:
            line.append(segment)
            continue
        parts = segment.text.split("\n")
        for part in parts[:-1]:
            if part:
                line.append(Segment(part, segment.style))
            yield from _rstrip(line)
            yield Segment("\n", segment.style)
            line = []
        if parts[-1]:
            line.append(Segment(parts[-1], segment.style))
    yield from line


_STYLED = re.compile(r"(\x1b\[[0-9;]*m[^\x1b]*\x1b\[0m)")


def _rstrip_ansi(line: str) -> str:
    tokens = [token for token in _STYLED.split(line) if token]
    while tokens:
        token = tokens[-1]
        if token.startswith("\x1b["):
            start = token.index("m") + 1
            inner = token[start:-4].rstrip(" ")
            if inner:
                tokens[-1] = token[:start] + inner + "\x1b[0m"
                break
        else:
            kept = token.rstrip(" ")
            if kept:
                tokens[-1] = kept
                break
        tokens.pop()
    return "".join(tokens)


def strip_text_line_ends(text: str) -> str:
    """`strip_line_ends` over text rich already wrote, segment by segment, each styled one as
    `ESC[codes m` text `ESC[0m` (as `render/ansi_rows.py` writes them): the same characters
    `strip_line_ends` leaves of those segments."""
    if " \n" not in text and " \x1b[0m\n" not in text:
        return text
    lines = text.split("\n")
    return "\n".join([_rstrip_ansi(line) for line in lines[:-1]] + lines[-1:])
