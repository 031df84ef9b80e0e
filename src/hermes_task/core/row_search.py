"""Searching transcript rows for a pattern, line by line, with context (pure).

What is searched is what a reader of the task sees of each row in full (`show --full`), block
by block in the order a row is drawn: its reasoning (only when asked: `show` hides it), each
commentary note, its text (for a tool row, the output laid out for reading by
`core/readable.tool_text`, then that output's status line, then each steer Hermes appended to
it), and each tool call's recorded arguments. A block is split into lines at `\\n`; a line
matches when the pattern is found in it, so `^` and `$` anchor at the line's ends; context
lines come from the same block only, never from another block or another row.

Invariants: lines are the backend's own text, unsanitised (every renderer sanitises what it
prints, and JSON escapes it); `spans` are the code-point offsets of the non-empty,
non-overlapping matches `re.finditer` finds in the line (a pattern that can only match empty
text matches a line without a span); hits come in the row's block order, then line order.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Literal

from msgspec import Struct

from hermes_task.core.documents import Row
from hermes_task.core.readable import split_steers, tool_text
from hermes_task.failures import ExitStatus

SearchField = Literal["reasoning", "commentary", "text", "output", "status", "steer", "arguments"]
Span = tuple[int, int]


class PatternError(ValueError):
    """PATTERN cannot be used: why, one line to follow the word PATTERN, without the pattern."""


def compile_pattern(pattern: str, *, regex: bool, ignore_case: bool) -> re.Pattern[str]:
    """PATTERN as a compiled expression: a fixed string (`regex` False: every character
    literal) or a Python regular expression, case-insensitive with `ignore_case`. A line
    break in it is refused (matching is line by line, so it could never match)."""
    if "\n" in pattern:
        raise PatternError("holds a line break, but lines are searched one at a time")
    source = pattern if regex else re.escape(pattern)
    try:
        return re.compile(source, re.IGNORECASE if ignore_case else 0)
    except (re.error, OverflowError, RecursionError) as exc:
        raise PatternError(f"is not a valid regular expression: {exc}") from None


class Block(Struct, frozen=True, kw_only=True):
    """One searched block of a row: what it is (`field`), which one of the row's blocks of
    that field (`part`, 0-based: the second tool call's arguments are part 1), its text."""

    field: SearchField
    part: int
    text: str


def blocks(row: Row, *, reasoning: bool = False) -> Iterator[Block]:
    """The row's searched blocks, in the order the row is drawn (module docstring)."""
    if reasoning and row.reasoning:
        yield Block(field="reasoning", part=0, text=row.reasoning)
    for index, note in enumerate(row.commentary):
        yield Block(field="commentary", part=index, text=note)
    if row.text and row.role == "tool":
        output, steers = split_steers(row.text)
        decoded = tool_text(output)
        body = output if decoded is None else decoded.body
        if body:
            yield Block(field="output", part=0, text=body)
        if decoded is not None and decoded.status:
            yield Block(field="status", part=0, text=decoded.status)
        for index, steer in enumerate(steers):
            yield Block(field="steer", part=index, text=steer)
    elif row.text:
        yield Block(field="text", part=0, text=row.text)
    for index, call in enumerate(row.tool_calls):
        if call.arguments:
            yield Block(field="arguments", part=index, text=call.arguments)


class Hit(Struct, frozen=True, kw_only=True):
    """One matching line of one block of `row`, with up to N lines of context on each side
    from the same block (`before` ends just above the line, `after` starts just below it)."""

    row: Row
    field: SearchField
    part: int
    line_number: int  # 1-based, within the block
    line: str
    spans: tuple[Span, ...]
    before: tuple[str, ...] = ()
    after: tuple[str, ...] = ()


def search_row(row: Row, pattern: re.Pattern[str], *, context: int = 0, reasoning: bool = False) -> list[Hit]:
    """Every line of the row's blocks (`blocks`) in which `pattern` is found, in order, each
    with `context` lines before and after it from its block."""
    hits: list[Hit] = []
    for block in blocks(row, reasoning=reasoning):
        if "\n" not in block.text:
            lines: Sequence[str] = (block.text,)
        else:
            lines = block.text.split("\n")
        for index, line in enumerate(lines):
            if pattern.search(line) is None:
                continue
            spans = tuple((m.start(), m.end()) for m in pattern.finditer(line) if m.end() > m.start())
            hits.append(
                Hit(
                    row=row,
                    field=block.field,
                    part=block.part,
                    line_number=index + 1,
                    line=line,
                    spans=spans,
                    before=tuple(lines[max(0, index - context) : index]),
                    after=tuple(lines[index + 1 : index + 1 + context]),
                )
            )
    return hits


class GroupLine(Struct, frozen=True, kw_only=True):
    """One printed line of a group: its number in the block, its text, and its spans when it
    matched (None: a context line)."""

    number: int
    text: str
    spans: tuple[Span, ...] | None


class Group(Struct, frozen=True, kw_only=True):
    """Consecutive lines of one block of one row: matches and their context, each line once."""

    row: Row
    field: SearchField
    part: int
    lines: tuple[GroupLine, ...]


def groups(hits: Sequence[Hit]) -> list[Group]:
    """`hits` merged as grep merges them: a hit of the same block whose first line (context
    included) touches or overlaps the previous group joins it; a line that matched is never
    printed as another hit's context, and no line is printed twice."""
    out: list[Group] = []
    head: Hit | None = None
    lines: dict[int, GroupLine] = {}

    def close() -> None:
        if head is not None:
            out.append(
                Group(
                    row=head.row,
                    field=head.field,
                    part=head.part,
                    lines=tuple(lines[n] for n in sorted(lines)),
                )
            )

    for hit in hits:
        first = hit.line_number - len(hit.before)
        same = head is not None and (
            (hit.row.session_id, hit.row.id, hit.field, hit.part)
            == (head.row.session_id, head.row.id, head.field, head.part)
        )
        if not same or first > max(lines) + 1:
            close()
            head, lines = hit, {}
        for offset, text in enumerate(hit.before):
            lines.setdefault(first + offset, GroupLine(number=first + offset, text=text, spans=None))
        lines[hit.line_number] = GroupLine(number=hit.line_number, text=hit.line, spans=hit.spans)
        for offset, text in enumerate(hit.after):
            number = hit.line_number + 1 + offset
            lines.setdefault(number, GroupLine(number=number, text=text, spans=None))
    close()
    return out


def search_status(matches: int, *, complete: bool) -> ExitStatus:
    """grep's exit status in this tool's numbers: 0 when a line matched; when none did, 10
    only if every transcript was searched whole (absence proven), else 11."""
    if matches:
        return ExitStatus.OK
    return ExitStatus.NO_MATCH if complete else ExitStatus.NO_MATCH_INCOMPLETE


__all__ = [
    "Block",
    "Group",
    "GroupLine",
    "Hit",
    "PatternError",
    "SearchField",
    "Span",
    "blocks",
    "compile_pattern",
    "groups",
    "search_row",
    "search_status",
]
