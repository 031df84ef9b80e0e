"""What a parent's result rows say about one delegated task's outcome (pure, sanitised).

Two sources: a synchronous `delegate_task` result entry (`summary`,
`duration_seconds`, `exit_reason`, `api_calls`, `model`, `tokens`, `tool_trace`, `error`), and
the model-facing text of an async completion row (a batch block's header `(status=…,
api_calls=…, 8.4s)` and body, the single form's `Status: … API calls: … Duration: …s` line and
`--- RESULT ---` body, iot's early `TASK FAILED` notice with its `Error:` line, and the unit's
`Role: … Model: …` line). iot's completion-row `display_metadata.duration_seconds` is the
duration of a one-task unit whose text gave none.

Invariants: every field is typed or null (a number is a finite non-negative number, a count a
non-negative int, never a bool); every string is `sanitize.clean`ed (`clean_line` for
one-line fields), so a result carries no terminal control sequence; merging two results only
fills fields still null, so the first source that spoke about a field keeps it.
"""

from __future__ import annotations

import math
import re
from typing import Any

from msgspec import Struct
from msgspec.structs import fields, replace

from hermes_task.core.documents import TaskTokens, ToolTraceCounts
from hermes_task.core.sanitize import clean, clean_line


class TaskResult(Struct, frozen=True):
    """One task's reported outcome; every field optional."""

    summary: str | None = None
    duration_seconds: float | None = None
    exit_reason: str | None = None
    api_calls: int | None = None
    model: str | None = None
    tokens: TaskTokens | None = None
    error: str | None = None
    tool_trace: ToolTraceCounts | None = None

    def merged(self, other: TaskResult | None) -> TaskResult:
        """This result with its null fields taken from `other`."""
        if other is None:
            return self
        fill = {
            f.name: getattr(other, f.name)
            for f in fields(self)
            if getattr(self, f.name) is None and getattr(other, f.name) is not None
        }
        return replace(self, **fill) if fill else self


EMPTY = TaskResult()


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _seconds(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) and number >= 0 else None


def _prose(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    text = clean(value).strip()
    return text or None


def _word(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    text = clean_line(value).strip()
    return text or None


def _tokens(value: object) -> TaskTokens | None:
    if not isinstance(value, dict):
        return None
    given, taken = _count(value.get("input")), _count(value.get("output"))
    return None if given is None and taken is None else TaskTokens(input=given, output=taken)


def _trace(value: object) -> ToolTraceCounts | None:
    if not isinstance(value, list):
        return None
    steps = [step for step in value if isinstance(step, dict)]
    errors = sum(1 for step in steps if step.get("status") not in (None, "ok"))
    return ToolTraceCounts(calls=len(steps), errors=errors)


def from_entry(entry: dict[str, Any]) -> TaskResult:
    """The result of one synchronous `results` entry."""
    return TaskResult(
        summary=_prose(entry.get("summary")),
        duration_seconds=_seconds(entry.get("duration_seconds")),
        exit_reason=_word(entry.get("exit_reason")),
        api_calls=_count(entry.get("api_calls")),
        model=_word(entry.get("model")),
        tokens=_tokens(entry.get("tokens")),
        error=_prose(entry.get("error")),
        tool_trace=_trace(entry.get("tool_trace")),
    )


# --- completion-row text ---------------------------------------------------------------

_MODEL = re.compile(r"(?m)^Role: \S+ +Model: (\S+)")
_BLOCK_HEAD = re.compile(
    r"  \(status=([A-Za-z_]+)(?:, api_calls=(\d+))?(?:, (\d+(?:\.\d+)?)s)?(?:, TRUNCATED[^)\n]*)?\) ---"
)
_STATUS_LINE = re.compile(
    r"(?m)^Status: ([A-Za-z_]+)(?: +API calls: (\d+))? +Duration: (\d+(?:\.\d+)?)s[^\n]*$"
)
_NO_SUMMARY = re.compile(r"\(no summary — status=[A-Za-z_]+(?:: (.*))?\)\Z", re.S)
_PARTIAL = "\nPartial output:\n"
_LIVE = re.compile(r"(?m)^Full live transcript \(complete tool/assistant trace\): .*$")


def unit_model(preamble: str) -> str | None:
    """The model a completion row names for its unit: the last `Role: … Model: …` line of the
    text before the first task block (a context or goal quoted earlier cannot win)."""
    found = list(_MODEL.finditer(preamble))
    return _word(found[-1].group(1)) if found else None


def _number(text: str | None) -> float | None:
    return None if text is None else _seconds(float(text))


def block_result(rest: str, model: str | None) -> tuple[str | None, TaskResult]:
    """A batch block after its goal (`  (status=…) ---` and the body up to the next block):
    its raw status and result. A block whose header cannot be read has neither."""
    head = _BLOCK_HEAD.match(rest)
    if head is None:
        return None, EMPTY
    status, calls, seconds = head.group(1), head.group(2), head.group(3)
    body = _LIVE.sub("", rest[head.end() :]).strip("\n")
    summary, error = body, None
    if status not in ("completed", "success"):
        empty = _NO_SUMMARY.match(body)
        if empty is not None:
            summary, error = "", empty.group(1)
        elif body.startswith(f"({status}: ") and _PARTIAL in body:
            first, _sep, summary = body.partition(_PARTIAL)
            error = first[len(status) + 3 : -1] if first.endswith(")") else None
        elif body.startswith("Partial output:\n"):
            summary = body[len("Partial output:\n") :]
    return status, _text_result(summary, seconds, calls, model, error)


def _text_result(
    summary: str, seconds: str | None, calls: str | None, model: str | None, error: str | None
) -> TaskResult:
    """A result read from a completion row's text (the batch block or the single form)."""
    return TaskResult(
        summary=_prose(summary),
        duration_seconds=_number(seconds),
        api_calls=None if calls is None else int(calls),
        model=model,
        error=_prose(error),
    )


def single_result(body: str, model: str | None) -> tuple[str | None, TaskResult]:
    """The single-task form after its goal: `Status: … API calls: … Duration: …s`, then
    `--- RESULT ---` and the summary, error or partial output."""
    line = _STATUS_LINE.search(body)
    if line is None:
        return None, EMPTY
    status, calls, seconds = line.group(1), line.group(2), line.group(3)
    _head, marker, text = body[line.end() :].partition("\n--- RESULT ---\n")
    text = text if marker else ""
    summary, error = text, None
    if status not in ("completed", "success"):
        reason, _sep, partial = text.partition(_PARTIAL.lstrip("\n"))
        summary = partial
        lead = "The subagent did not complete successfully (status=" + status + ")."
        if reason.startswith(lead):
            error = reason[len(lead) :]
        elif reason.startswith("The subagent was interrupted before completing: "):
            error = reason[len("The subagent was interrupted before completing: ") :]
    return status, _text_result(summary, seconds, calls, model, error)


def notice_result(body: str) -> TaskResult:
    """iot's early `TASK FAILED` notice: its duration and `Error:` line."""
    line = _STATUS_LINE.search(body)
    if line is None:
        return EMPTY
    after = body[line.end() :]
    error = after[len("\nError: ") :].split("\n", 1)[0] if after.startswith("\nError: ") else None
    return TaskResult(duration_seconds=_number(line.group(3)), error=_prose(error))


def metadata_seconds(meta: object) -> float | None:
    """iot's `display_metadata.duration_seconds` of a completion row, when valid."""
    return _seconds(meta.get("duration_seconds")) if isinstance(meta, dict) else None
