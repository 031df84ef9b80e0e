"""Readable rows: what a row is (compaction boilerplate, a status notice, prose) and how a
tool result reads as text (pure; the terminal renderer draws what these functions decide).

Invariants: recognition only adds a `kind` to a row that has none from the server, and never
changes its text (JSON keeps the full text); a tool result is decoded only when its whole
content is one JSON object carrying at least one of the usual Hermes result fields, and then
every such field is kept (nothing of the output is dropped, only re-laid out); a cut keeps
whole lines from the start and says how many lines it left out. Prose is never cut. A steer
(an out-of-band user message Hermes appends to the end of a tool result) is split off the
output only when it is the exact marked block at the very end, and is never cut.
"""

from __future__ import annotations

import json
import re
from typing import Any

from hermes_task.records import dataclass, values

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
# Markdown that changes how text reads: emphasis, code, headings, quotes, links, tables,
# strike-through, HTML, escapes, list items, setext rules and indented code.
MARKDOWN_SYNTAX = re.compile(
    r"[*_`#>\[|~<\\]|^ {0,3}(?:[-+]|\d{1,9}[.)])(?: |$)|^ {0,3}(?:=+|-{2,}) *$|^ {4}", re.M
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


@values
@dataclass(frozen=True, eq=False, repr=False)
class ToolText:
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


def cut(text: str, *, lines: int = MAX_LINES, chars: int = MAX_CHARS) -> tuple[str, int, bool]:
    """The first `lines` lines of `text` within about `chars` characters (whole lines; a
    first line longer than that is cut at `chars`), how many lines were left out, and
    whether a line was cut short."""
    if len(text) <= chars and text.count("\n") < lines:  # short already: kept whole
        return text, 0, False
    all_lines = text.split("\n")
    kept: list[str] = []
    size = 0
    short = False
    for line in all_lines[:lines]:
        if kept and size + len(line) > chars:
            break
        if len(line) > chars:
            line, short = line[:chars], True
        kept.append(line)
        size += len(line) + 1
        if short:
            break
    return "\n".join(kept), len(all_lines) - len(kept), short
