"""Row projection: what one stored transcript row displays (pure).

Rules: server-hidden rows are absent; `display_content`
and `display_reasoning` are authoritative whenever present, even empty or null;
`display_commentary` is public prose, even on an empty-content row, and is never recovered
from raw `codex_message_items`; without projected reasoning, readable text/summary fields of
`reasoning`, `reasoning_content`, `reasoning_details` and `codex_reasoning_items` (JSON
string or native list) are used, never encrypted data; tool calls keep their real ids and
argument strings, and missing arguments stay null; images become alt text and nothing is
fetched; text that looks like JSON stays literal. Backend strings are kept as sent here
(JSON escapes them); terminal renderers sanitise them.
"""

from __future__ import annotations

import json
import math
from typing import Any

from msgspec import UNSET

from hermes_task.core.documents import Row, ToolCall
from hermes_task.core.readable import is_quiet, recognised_kind
from hermes_task.core.wire import WireMessage

HIDDEN_KINDS = frozenset({"hidden"})
_TEXT_KEYS = ("text", "summary_text", "summary", "content")


def _image_alt(part: dict[str, Any]) -> str:
    alt = part.get("alt") or part.get("alt_text")
    return f"[image: {alt}]" if isinstance(alt, str) and alt else "[image]"


def content_text(content: Any) -> str | None:
    """Display text of a `content` value: a string as is; a list of parts joined, with
    image parts as alt text; anything else (null, numbers, objects) as null."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        pieces: list[str] = []
        for part in content:
            if isinstance(part, str):
                pieces.append(part)
            elif isinstance(part, dict):
                kind = part.get("type")
                if kind in ("image_url", "image", "input_image"):
                    pieces.append(_image_alt(part))
                elif isinstance(part.get("text"), str):
                    pieces.append(part["text"])
        return "\n".join(pieces)
    return None


def _decode(value: Any) -> Any:
    if isinstance(value, str):
        stripped = value.strip()
        if stripped[:1] in ("[", "{"):
            try:
                return json.loads(stripped)
            except (ValueError, RecursionError):  # malformed, or nested past the parser's limit
                return None
        return None
    return value


def _readable(item: Any, out: list[str]) -> None:
    """Collect readable text/summary strings from a reasoning sidecar, skipping encrypted
    payloads (`data`, `encrypted_content`, `signature`)."""
    if isinstance(item, list):
        for sub in item:
            _readable(sub, out)
    elif isinstance(item, dict):
        for key in _TEXT_KEYS:
            value = item.get(key)
            if isinstance(value, str) and value.strip():
                out.append(value)
            elif isinstance(value, list):
                _readable(value, out)


def reasoning_text(msg: WireMessage) -> str | None:
    """Projected reasoning when the server sent one (authoritative, even null/empty);
    otherwise the first readable source among the raw fields, duplicates dropped."""
    if msg.display_reasoning is not UNSET:
        value = msg.display_reasoning
        return value if isinstance(value, str) else None
    found: list[str] = []
    for raw in (msg.reasoning, msg.reasoning_content):
        if isinstance(raw, str) and raw.strip():
            found.append(raw)
    for sidecar in (msg.reasoning_details, msg.codex_reasoning_items):
        _readable(_decode(sidecar), found)
    unique: list[str] = []
    for text in found:
        if text not in unique:
            unique.append(text)
    return "\n\n".join(unique) if unique else None


def tool_calls(raw: Any) -> list[ToolCall]:
    """Tool calls as recorded: decoded list or a JSON string of one; never invented."""
    decoded = _decode(raw) if isinstance(raw, str) else raw
    if not isinstance(decoded, list):
        return []
    calls: list[ToolCall] = []
    for item in decoded:
        if not isinstance(item, dict):
            continue
        raw_function = item.get("function")
        function: dict[str, Any] = raw_function if isinstance(raw_function, dict) else {}
        name = function.get("name", item.get("name"))
        arguments = function.get("arguments", item.get("arguments"))
        if arguments is not None and not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=True)
        call_id = item.get("id")
        calls.append(
            ToolCall(
                id=call_id if isinstance(call_id, str) else None,
                name=name if isinstance(name, str) else None,
                arguments=arguments,
            )
        )
    return calls


def commentary(msg: WireMessage) -> list[str]:
    value = msg.display_commentary
    if isinstance(value, list):
        return [item for item in value if isinstance(item, str)]
    if isinstance(value, str) and value:
        return [value]
    return []


def is_hidden(msg: WireMessage) -> bool:
    return msg.display_kind in HIDDEN_KINDS


def _flagged_kind(msg: WireMessage) -> str | None:
    """A row the backend flags as a compression's summary (`_compressed_summary: true`) is
    compaction boilerplate whatever its text begins with, unless the server projected it
    into something else to display (iot shows the restated request: `display_content`)."""
    if msg.compressed_summary is not True or msg.display_content is not UNSET:
        return None
    return "compaction_summary"


def project(msg: WireMessage) -> Row | None:
    """The displayed row for `msg`, or None when the server hides it."""
    if is_hidden(msg):
        return None
    if msg.display_content is not UNSET:
        text = content_text(msg.display_content)
    else:
        text = content_text(msg.content)
    timestamp = msg.timestamp
    if timestamp is not None and not math.isfinite(timestamp):
        timestamp = None
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
        timestamp=float(timestamp) if timestamp is not None else None,
        archived=bool(msg.compacted) or msg.active in (0, False),
        kind=msg.display_kind or _flagged_kind(msg) or recognised_kind(msg.role, text),
    )


def counts_as_text(row: Row) -> bool:
    """Prose rows for `--min-text`: user and assistant rows with visible text or commentary;
    compaction boilerplate and status notices (`core/readable.py`) are not prose."""
    if row.role not in ("user", "assistant", "agent") or is_quiet(row.kind):
        return False
    return bool((row.text or "").strip()) or bool(row.commentary)


def states_goal(row: Row) -> bool:
    """A row that can state a task's goal: a user row of prose (`counts_as_text`). The goal
    is the first such row of the task's root segment (`TaskInfo.goal`)."""
    return row.role == "user" and counts_as_text(row)
