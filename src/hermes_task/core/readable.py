"""Readable rows: what a row is (compaction boilerplate, a status notice, prose) and how a
tool result reads as text (pure; the terminal renderer draws what these functions decide).

Invariants: recognition only adds a `kind` to a row that has none from the server, and never
changes its text (JSON keeps the full text); a tool result is decoded only when its whole
content is one JSON object carrying at least one of the usual Hermes result fields, and then
every such field is kept (nothing of the output is dropped, only re-laid out); a cut keeps
the first and the last lines (the end of a build log is what matters) and says what it left
out between them. Prose is never cut. A steer
(an out-of-band user message Hermes appends to the end of a tool result) is split off the
output only when it is the exact marked block at the very end, and is never cut.
"""

from __future__ import annotations

import json
import re
from typing import Any, NamedTuple

from msgspec import Struct

COMPACTION_PREFIXES = ("[CONTEXT COMPACTION — REFERENCE ONLY]", "[CONTEXT SUMMARY]:")
CONTINUATION_PREFIX = "Continue from the compressed conversation context"
SYSTEM_PREFIX = "[System:"
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
TEXT_FIELDS = ("output", "stdout", "result")
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
MAX_LINES = 12
MAX_CHARS = 2000
# How Hermes appends a mid-turn steer to a tool result: "\n\n[OUT-OF-BAND USER MESSAGE — …]\n",
# the message, "\n[/OUT-OF-BAND USER MESSAGE]" (format_steer_marker in the backends'
# agent/prompt_builder.py; the words after the dash differ between versions, and
# fixtures/*/delegated_task_dashboard.json hold one of each).
STEER_OPEN = re.compile(r"\n\n\[OUT-OF-BAND USER MESSAGE(?: — [^\n\]]*)?\]\n")
STEER_CLOSE = "\n[/OUT-OF-BAND USER MESSAGE]"


def recognised_kind(role: str, text: str | None) -> str | None:
    """The kind of an untyped row, from its text: boilerplate or a status notice, else None."""
    if not text:
        return None
    head = text.lstrip()
    if head.startswith(COMPACTION_PREFIXES):
        return "compaction_summary"
    if role == "user" and head.startswith(CONTINUATION_PREFIX):
        return "continuation_prompt"
    if role == "user" and head.startswith(SYSTEM_PREFIX):
        return "system_notice"
    return None


def looks_like_markdown(text: str) -> bool:
    """Whether `text` holds Markdown syntax (a cheap test: text without it reads the same as
    plain text, and keeps its line breaks)."""
    return MARKDOWN_SYNTAX.search(text) is not None


def is_quiet(kind: str | None) -> bool:
    """Rows drawn as one dim line and never counted as text for --min-text."""
    return kind in BOILERPLATE_KINDS or kind in STATUS_KINDS


class ToolText(Struct, frozen=True):
    """A tool result laid out for reading: `body` with real line breaks, and one `status`
    line (exit code, error, status) or None."""

    body: str
    status: str | None


def split_steers(text: str) -> tuple[str, list[str]]:
    """`text` without the steers appended to its end, and their messages, oldest first.
    Only whole marked blocks at the very end count; anything else stays output."""
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
    stripped = text.strip()
    if not stripped.startswith("{"):
        return None
    try:
        value = json.loads(stripped)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict) or not RESULT_FIELDS.intersection(value):
        return None
    parts = [_as_text(value[k]) for k in TEXT_FIELDS if value.get(k) not in (None, "")]
    if value.get("stderr") not in (None, ""):
        parts.append("stderr:\n" + _as_text(value["stderr"]))
    others = {k: v for k, v in value.items() if k not in RESULT_FIELDS}
    if others:
        parts.append(json.dumps(others, ensure_ascii=False, indent=2))
    status: list[str] = []
    if "exit_code" in value:
        status.append(f"exit {_as_text(value['exit_code'])}")
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


def cut(text: str, *, lines: int = MAX_LINES, chars: int = MAX_CHARS) -> Cut:
    """`text` kept whole when it has fewer than `lines` lines and at most `chars` characters;
    else its first lines (at most a third of `lines`, within a third of `chars`) and its last
    lines (the rest of both), whole lines only, except that a first or last line longer than
    its share is cut to the share (its start, or its end)."""
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
        text[:head_end],
        text[tail_start:],
        len(whole),
        tail_start - head_end,
        not shown or start == count,
    )
