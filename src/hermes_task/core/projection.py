"""Transcript rows for reading (pure): what a stored row displays (`project`) and what kind it is, a
tool result as text, which rows a command prints (`RowFilter`; docs/commands.md `show`: selection
never adds, changes or repeats a row) and searching them (docs/commands.md `search`; docs/json.md).

Projection: `display_content` and `display_reasoning` are authoritative whenever present, even empty
or null; `display_commentary` is public prose, never recovered from raw `codex_message_items`;
reasoning is never read from encrypted data; text that looks like JSON stays literal; backend strings
are kept as sent (renderers sanitise). Recognition only adds a `kind` to a row the server gave none.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Literal, NamedTuple

from msgspec import UNSET, Struct
from msgspec.structs import replace

from hermes_task.core.documents import Row, ToolCall, TranscriptDoc
from hermes_task.core.wire import WireMessage
from hermes_task.failures import ExitStatus


def content_text(content: Any) -> str | None:
    """Display text of a `content` value: a string, or a list of parts joined (images as alt text)."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        pieces: list[str] = []
        for part in content:
            if isinstance(part, str):
                pieces.append(part)
            elif isinstance(part, dict):
                alt = part.get("alt") or part.get("alt_text")
                if part.get("type") in ("image_url", "image", "input_image"):
                    pieces.append(f"[image: {alt}]" if isinstance(alt, str) and alt else "[image]")
                elif isinstance(part.get("text"), str):
                    pieces.append(part["text"])
        return "\n".join(pieces)
    return None


def _decode(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    stripped = value.strip()
    try:
        return json.loads(stripped) if stripped[:1] in ("[", "{") else None
    except (ValueError, RecursionError):  # malformed, or nested past the parser's limit
        return None


def _readable(item: Any, out: list[str]) -> None:
    """Collect a reasoning sidecar's readable strings (never `data`, `encrypted_content`, `signature`)."""
    if isinstance(item, list):
        for sub in item:
            _readable(sub, out)
    elif isinstance(item, dict):
        for key in ("text", "summary_text", "summary", "content"):
            value = item.get(key)
            if isinstance(value, str) and value.strip():
                out.append(value)
            elif isinstance(value, list):
                _readable(value, out)


def reasoning_text(msg: WireMessage) -> str | None:
    """Projected reasoning when sent, else the raw fields' readable text, duplicates dropped."""
    if msg.display_reasoning is not UNSET:
        value = msg.display_reasoning
        return value if isinstance(value, str) else None
    found = [raw for raw in (msg.reasoning, msg.reasoning_content) if isinstance(raw, str) and raw.strip()]
    for sidecar in (msg.reasoning_details, msg.codex_reasoning_items):
        _readable(_decode(sidecar), found)
    return "\n\n".join(dict.fromkeys(found)) if found else None


def tool_calls(raw: Any) -> list[ToolCall]:
    """Tool calls as recorded: decoded list or a JSON string of one; never invented."""
    decoded = _decode(raw)
    return [_call(item) for item in decoded if isinstance(item, dict)] if isinstance(decoded, list) else []


def _call(item: dict[str, Any]) -> ToolCall:
    function = item["function"] if isinstance(item.get("function"), dict) else {}
    name = function.get("name", item.get("name"))
    arguments = function.get("arguments", item.get("arguments"))
    if arguments is not None and not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=True)
    ident = item.get("id")
    return ToolCall(
        id=ident if isinstance(ident, str) else None,
        name=name if isinstance(name, str) else None,
        arguments=arguments,
    )


def commentary(msg: WireMessage) -> list[str]:
    value = msg.display_commentary
    if isinstance(value, list):
        return [item for item in value if isinstance(item, str)]
    return [value] if isinstance(value, str) and value else []


def project(msg: WireMessage) -> Row | None:
    """The displayed row for `msg`, or None when the server hides it."""
    if msg.display_kind == "hidden":
        return None
    shown = msg.display_content is not UNSET
    text = content_text(msg.display_content if shown else msg.content)
    # A row the backend flags as a compression's summary is boilerplate whatever its text,
    # unless the server projected it into something to display (iot: the restated request).
    flagged = "compaction_summary" if msg.compressed_summary is True and not shown else None
    return Row(
        id=msg.id,
        session_id=msg.session_id,
        role=msg.role,
        text=text,
        reasoning=reasoning_text(msg),
        commentary=commentary(msg),
        tool_calls=tool_calls(msg.tool_calls),
        tool_call_id=msg.tool_call_id,
        tool_name=msg.tool_name,
        timestamp=msg.timestamp if msg.timestamp is not None and math.isfinite(msg.timestamp) else None,
        archived=bool(msg.compacted) or msg.active in (0, False),
        kind=msg.display_kind or flagged or recognised_kind(msg.role, text),
    )


def counts_as_text(row: Row) -> bool:
    """Whether a row counts for `--min-text`: user or assistant prose with visible text or commentary."""
    quiet = row.kind in BOILERPLATE_KINDS or row.kind in STATUS_KINDS
    prose = row.role in ("user", "assistant", "agent") and not quiet
    return prose and (bool((row.text or "").strip()) or bool(row.commentary))


def states_goal(row: Row) -> bool:
    """A row that can state a task's goal (`TaskInfo.goal`): a user row of prose."""
    return row.role == "user" and counts_as_text(row)


BOILERPLATE_KINDS = frozenset({"compaction_summary", "continuation_prompt"})
STATUS_KINDS = frozenset(
    {
        "model_switch",
        "process_complete",
        "internal_notification",
        "auto_continue",
        "failed_turn",
        "system_notice",
    }
)
RESULT_FIELDS = frozenset({"output", "stdout", "stderr", "result", "error", "exit_code", "status"})
# Markdown that changes how text reads: emphasis (`_` only at a word's edge: snake_case is
# not), code, links and autolinks, strike-through, escapes; at a line's start headings,
# quotes, list items, setext rules, indented code; a table's delimiter row. A `#` or `|`
# inside a line changes nothing, and such text keeps its line breaks.
MARKDOWN_SYNTAX = re.compile(
    r"[*`\[~<\\]|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])"
    r"|^ {0,3}(?:#{1,6}(?: |$)|>|[-+](?: |$)|\d{1,9}[.)](?: |$)|(?:=+|-{2,}) *$)|^ {4}"
    r"|^[ :|-]*(?:-[ :]*\||\|[ :]*-)[ :|-]*$",
    re.M,
)
# How Hermes appends a mid-turn steer to a tool result (format_steer_marker in the backends'
# agent/prompt_builder.py; the words after the dash differ between versions).
STEER_OPEN = re.compile(r"\n\n\[OUT-OF-BAND USER MESSAGE(?: — [^\n\]]*)?\]\n")
STEER_CLOSE = "\n[/OUT-OF-BAND USER MESSAGE]"


def recognised_kind(role: str, text: str | None) -> str | None:
    """The kind of an untyped row, from its text: boilerplate or a status notice, else None."""
    head = (text or "").lstrip()
    if head.startswith(("[CONTEXT COMPACTION — REFERENCE ONLY]", "[CONTEXT SUMMARY]:")):
        return "compaction_summary"
    if role == "user" and head.startswith("Continue from the compressed conversation context"):
        return "continuation_prompt"
    if role == "user" and head.startswith("[System:"):
        return "system_notice"
    return None


def looks_like_markdown(text: str) -> bool:
    """A cheap test: text without Markdown syntax reads the same as plain text."""
    return MARKDOWN_SYNTAX.search(text) is not None


class ToolText(NamedTuple):
    """A tool result laid out for reading: `body` with real line breaks, one `status` line or None."""

    body: str
    status: str | None


def split_steers(text: str) -> tuple[str, list[str]]:
    """`text` without the whole steer blocks appended to its end, and their messages, oldest first."""
    steers: list[str] = []
    while text.endswith(STEER_CLOSE):
        blocks = list(STEER_OPEN.finditer(text))
        if not blocks:
            break
        block = blocks[-1]  # the last opening marker
        steers.append(text[block.end() : -len(STEER_CLOSE)])
        text = text[: block.start()]
    steers.reverse()
    return text, steers


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=2)


def tool_text(text: str) -> ToolText | None:
    """`text` decoded when it is one JSON object with the usual Hermes result fields."""
    value = _decode(text)
    if not isinstance(value, dict) or not RESULT_FIELDS.intersection(value):
        return None
    shown = (("output", ""), ("stdout", ""), ("result", ""), ("stderr", "stderr:\n"))
    parts = [label + _as_text(value[k]) for k, label in shown if value.get(k) not in (None, "")]
    others = {k: v for k, v in value.items() if k not in RESULT_FIELDS}
    if others:
        parts.append(json.dumps(others, ensure_ascii=False, indent=2))
    status = [f"exit {_as_text(value['exit_code'])}"] if "exit_code" in value else []
    if isinstance(value.get("status"), str | int | float | bool):
        status.append(f"status {value['status']}")
    if value.get("error") not in (None, "", False):
        status.append(f"error: {_as_text(value['error'])}")
    return ToolText("\n".join(p.rstrip("\n") for p in parts), " · ".join(status) or None)


class Cut(NamedTuple):
    """A tool output cut for reading: `head` (its start) and `tail` (its end) are shown, with
    `lines` whole lines and `chars` characters (line breaks included) left out between them;
    `inside` says whether the cut falls inside a line. Invariant: `text` is exactly `head`,
    the `chars` left out, then `tail`; a text kept whole is `Cut(text, "", 0, 0, False)`."""

    head: str
    tail: str
    lines: int
    chars: int
    inside: bool


def cut(text: str, *, lines: int = 12, chars: int = 2000) -> Cut:
    """`text` cut to its first third and last two thirds of `lines` and `chars` (docs/commands.md, `show`)."""
    if len(text) <= chars and text.count("\n") < lines:  # short already: kept whole
        return Cut(text, "", 0, 0, False)
    head_lines, head_chars = lines // 3, chars // 3
    tail_lines, tail_chars = lines - head_lines, chars - head_chars
    parts = text.split("\n")
    count = len(parts)
    shown = size = 0
    while shown < min(head_lines, count) and size + len(parts[shown]) <= head_chars:
        size += len(parts[shown]) + 1
        shown += 1
    head_end = size - 1 if shown else head_chars  # no whole line fits: the first one's start
    first_tail = max(shown, 1)  # a line cut at the head is never also a whole tail line
    start, size = count, 0
    while start > first_tail and count - start < tail_lines and size + len(parts[start - 1]) <= tail_chars:
        start -= 1
        size += len(parts[start]) + 1
    tail_start = len(text) - (size - 1) if start < count else max(head_end, len(text) - tail_chars)
    whole = range(shown if shown else 1, start if start < count else count - 1)
    return Cut(
        text[:head_end], text[tail_start:], len(whole), tail_start - head_end, not shown or start == count
    )


ROLES = ("user", "assistant", "tool", "system")
ALIASES = {"agent": "assistant"}  # a row's role as `--role` names it


class RowFilter(Struct, frozen=True):
    """`roles` empty: every role. `tail` None: every row."""

    roles: frozenset[str] = frozenset()
    tail: int | None = None

    @classmethod
    def of(cls, roles: Iterable[str] | None, tail: int | None) -> RowFilter:
        return cls(frozenset(roles or ()), tail)

    def select(self, rows: Sequence[Row], *, tail: bool = True) -> list[Row]:
        """The rows to print, in order; `tail=False` applies the roles only (follow's new rows)."""
        kept = [row for row in rows if not self.roles or ALIASES.get(row.role, row.role) in self.roles]
        if tail and self.tail is not None:
            kept = kept[-self.tail :] if self.tail > 0 else []
        return kept


def filtered(doc: TranscriptDoc, rows: RowFilter) -> TranscriptDoc:
    """`doc` with only the selected rows; segments' `rows_shown` recounted, coverage kept."""
    if not rows.roles and rows.tail is None:
        return doc
    kept = rows.select(doc.rows)
    counts = Counter(row.session_id for row in kept)
    segments = [replace(s, rows_shown=counts[s.id]) for s in doc.task.segments]
    return replace(doc, rows=kept, task=replace(doc.task, segments=segments))


SearchField = Literal["reasoning", "commentary", "text", "output", "status", "steer", "arguments"]
Span = tuple[int, int]


class PatternError(ValueError):
    """PATTERN cannot be used: why, one line to follow the word PATTERN, without the pattern."""


def compile_pattern(pattern: str, *, regex: bool, ignore_case: bool) -> re.Pattern[str]:
    """PATTERN compiled as docs/commands.md (`search`) says; one with a line break is refused."""
    if "\n" in pattern:
        raise PatternError("holds a line break, but lines are searched one at a time")
    source = pattern if regex else re.escape(pattern)
    try:
        return re.compile(source, re.IGNORECASE if ignore_case else 0)
    except (re.error, OverflowError, RecursionError) as exc:
        raise PatternError(f"is not a valid regular expression: {exc}") from None


class Block(NamedTuple):
    """One searched block of a row: its `field`, which one of them (`part`, 0-based), its text."""

    field: SearchField
    part: int
    text: str


def blocks(row: Row, *, reasoning: bool = False) -> Iterator[Block]:
    """The row's searched blocks, in the order the row is drawn (module docstring)."""
    if reasoning and row.reasoning:
        yield Block("reasoning", 0, row.reasoning)
    yield from (Block("commentary", index, note) for index, note in enumerate(row.commentary))
    if row.text and row.role == "tool":
        output, steers = split_steers(row.text)
        decoded = tool_text(output)
        body = output if decoded is None else decoded.body
        if body:
            yield Block("output", 0, body)
        if decoded is not None and decoded.status:
            yield Block("status", 0, decoded.status)
        yield from (Block("steer", index, steer) for index, steer in enumerate(steers))
    elif row.text:
        yield Block("text", 0, row.text)
    yield from (
        Block("arguments", i, call.arguments) for i, call in enumerate(row.tool_calls) if call.arguments
    )


class Hit(Struct, frozen=True):
    """One matching line of a block of `row` (`line_number` 1-based) and the block's lines around it."""

    row: Row
    field: SearchField
    part: int
    line_number: int
    line: str
    spans: tuple[Span, ...]
    before: tuple[str, ...] = ()
    after: tuple[str, ...] = ()


def search_row(row: Row, pattern: re.Pattern[str], *, context: int = 0, reasoning: bool = False) -> list[Hit]:
    """Every line of the row's blocks in which `pattern` is found, with `context` lines around it."""
    return [
        Hit(
            row,
            block.field,
            block.part,
            index + 1,
            line,
            tuple((m.start(), m.end()) for m in pattern.finditer(line) if m.end() > m.start()),
            tuple(lines[max(0, index - context) : index]),
            tuple(lines[index + 1 : index + 1 + context]),
        )
        for block in blocks(row, reasoning=reasoning)
        for lines in [block.text.split("\n")]
        for index, line in enumerate(lines)
        if pattern.search(line) is not None
    ]


class GroupLine(Struct, frozen=True):
    """One printed line of a group: its number in the block, its text, its spans (None: context)."""

    number: int
    text: str
    spans: tuple[Span, ...] | None


class Group(Struct, frozen=True):
    """Consecutive lines of one block of one row: matches and their context, each line once."""

    row: Row
    field: SearchField
    part: int
    lines: tuple[GroupLine, ...]


def groups(hits: Sequence[Hit]) -> list[Group]:
    """`hits` merged as grep merges them: no line twice, a matched line never as context."""
    runs: list[tuple[tuple[str, int, str, int], Hit, dict[int, GroupLine]]] = []
    for hit in hits:
        first = hit.line_number - len(hit.before)
        place = (hit.row.session_id, hit.row.id, hit.field, hit.part)
        if not runs or runs[-1][0] != place or first > max(runs[-1][2]) + 1:
            runs.append((place, hit, {}))
        lines = runs[-1][2]
        for number, text in enumerate(hit.before, first):
            lines.setdefault(number, GroupLine(number, text, None))
        lines[hit.line_number] = GroupLine(hit.line_number, hit.line, hit.spans)
        for number, text in enumerate(hit.after, hit.line_number + 1):
            lines.setdefault(number, GroupLine(number, text, None))
    return [Group(h.row, h.field, h.part, tuple(lines[n] for n in sorted(lines))) for _, h, lines in runs]


def search_status(matches: int, *, complete: bool) -> ExitStatus:
    """grep's exit status in this tool's numbers (docs/exit-codes.md)."""
    return ExitStatus.OK if matches else ExitStatus.NO_MATCH if complete else ExitStatus.NO_MATCH_INCOMPLETE
