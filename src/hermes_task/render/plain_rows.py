"""Transcript rows as plain text, without rich: what `show`, `older` and `follow` print when
stdout is not a terminal and colour is off.

Invariant: for every row the text here is byte for byte what `render/rows.py` drawn through
`render/terminal.py` on the non-terminal console of `cli/shell.py` (`console()`: soft wrap,
no colour) prints: the same header, the same cuts and dim notes (without their styles), body
lines indented by two spaces, tabs expanded to 8-cell stops as rich expands them, never
wrapped, cropped or padded. `tests/unit/test_plain_rows.py` holds it to that on the captured
fixtures and on generated rows. Every backend string passes `sanitize.clean`/`clean_line`
first. Pure: rows in, strings out; rich is imported only to measure the cells of a line that
holds a tab.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable, Iterator

from hermes_task.core.documents import Row, TaskInfo, TranscriptDoc
from hermes_task.core.readable import BOILERPLATE_KINDS, STATUS_KINDS, cut, split_steers, tool_text
from hermes_task.core.sanitize import clean, clean_line, is_clean_line
from hermes_task.records import dataclass

BOILERPLATE_LABELS = {
    "compaction_summary": "compaction summary",
    "continuation_prompt": "continuation prompt",
}
TAB_SIZE = 8
STEER_LABEL = "steer from the user (out-of-band, appended to this result):"


@dataclass(frozen=True)
class Style:
    """How rows are drawn: Markdown prose (a TTY), reasoning expanded, everything in full,
    times in UTC instead of local time with its offset."""

    markdown: bool = False
    reasoning: bool = False
    full: bool = False
    utc: bool = False


def when(timestamp: float | None, *, utc: bool = False) -> str:
    """Local time with its UTC offset (as journalctl), or UTC with a Z: what `strftime` prints
    for `datetime.fromtimestamp(timestamp)`, the date, hour, minute and offset formatted once
    per minute (`_minute`) and the second added here."""
    if timestamp is None:
        return ""
    if 0.0 <= timestamp < 1e11 and timestamp - int(timestamp) < 0.9999994:
        second = int(timestamp)  # no rounding up to the next second
    else:
        try:
            frac, whole = math.modf(timestamp)  # datetime.fromtimestamp's rounding (half even)
            micro = round(frac * 1e6)
            second = int(whole) + (1 if micro >= 1_000_000 else -1 if micro < 0 else 0)
        except (OverflowError, ValueError):  # inf, nan
            return ""
    minutes = _MINUTES[utc]
    parts = minutes.get(second // 60)
    if parts is None:
        if len(minutes) > 4096:
            minutes.clear()
        parts = minutes[second // 60] = _minute(second // 60, utc)
    if not parts:
        return _strftime(timestamp, utc)
    return f"{parts[0]}{second % 60:02d}{parts[1]}"


_MINUTES: dict[bool, dict[int, tuple[str, str] | tuple[()]]] = {False: {}, True: {}}


def _minute(minute: int, utc: bool) -> tuple[str, str] | tuple[()]:
    """The text before and after the seconds for every second of `minute` (minutes since the
    epoch), or () when the offset changes within it or is not whole minutes (then each time
    is formatted on its own)."""
    try:
        start = dt.datetime.fromtimestamp(minute * 60, tz=dt.UTC)
        if utc:
            return (start.strftime("%Y-%m-%d %H:%M:"), "Z")
        local = start.astimezone()
        end = dt.datetime.fromtimestamp(minute * 60 + 59, tz=dt.UTC).astimezone()
    except (OverflowError, OSError, ValueError):
        return ()
    if local.utcoffset() != end.utcoffset() or local.second != 0 or local.microsecond != 0:
        return ()
    return (local.strftime("%Y-%m-%d %H:%M:"), local.strftime(" %z"))


def _strftime(timestamp: float, utc: bool) -> str:
    try:
        moment = dt.datetime.fromtimestamp(timestamp, tz=dt.UTC)
        if utc:
            return moment.strftime("%Y-%m-%d %H:%M:%SZ")
        return moment.astimezone().strftime("%Y-%m-%d %H:%M:%S %z")
    except (OverflowError, OSError, ValueError):
        return ""


def header_text(row: Row, style: Style) -> str:
    """The header line: marker, role, kind, tool, call id, row id, time, archived."""
    role = "assistant" if row.role == "agent" else row.role
    fields = [role, row.kind or "", row.tool_name or "" if row.role == "tool" else "", row.tool_call_id or ""]
    if not is_clean_line("".join(fields)):  # rare: sanitise each field on its own
        fields = [clean_line(field) for field in fields]
    head = f"▌ {fields[0]}"
    if row.kind:
        head += f" [{fields[1]}]"
    if row.tool_name and row.role == "tool":
        head += f" {fields[2]}"
    if row.tool_call_id:
        head += f" ({fields[3]})"
    stamp = when(row.timestamp, utc=style.utc)
    head = f"{head}  #{row.id}  {stamp}" if stamp else f"{head}  #{row.id}"
    return head + "  archived" if row.archived else head


def quiet_text(row: Row, style: Style) -> str | None:
    """Boilerplate and status rows as one line (None: draw the row in full)."""
    if style.full or not (row.kind in BOILERPLATE_KINDS or row.kind in STATUS_KINDS):
        return None
    stamp = when(row.timestamp, utc=style.utc)
    if row.kind in BOILERPLATE_KINDS:
        size = len(row.text or "")
        line = f"▸ {BOILERPLATE_LABELS[row.kind or '']}, {size:,} chars (--full shows it)"
    else:
        first = clean_line((row.text or "").strip().split("\n", 1)[0])
        if len(first) > 100:
            first = first[:99] + "…"
        line = f"· {clean_line(row.kind or '')}: {first}"
    line += f"  #{row.id}"
    if stamp:
        line += f"  {stamp}"
    return line


def tool_parts(text: str, style: Style) -> list[tuple[str, str]]:
    """A tool result's body parts as (text, kind): "text" (sanitised output), "note" (what was
    cut), "status" (exit code, error, status) and "steer" (a user message Hermes appended to
    the result: never cut)."""
    output, steers = split_steers(text)
    decoded = tool_text(output)
    body = output if decoded is None else decoded.body
    out: list[tuple[str, str]] = []
    if style.full:
        shown, more, short = body, 0, False
    else:
        shown, more, short = cut(body)
    if shown:
        out.append((clean(shown), "text"))
    if more:
        out.append((f"… {more:,} more line{'s' if more != 1 else ''} (--full)", "note"))
    elif short:
        out.append(("… cut at 2,000 chars (--full)", "note"))
    if decoded is not None and decoded.status:
        out.append((clean_line(decoded.status), "status"))
    out += [(f"{STEER_LABEL}\n{clean(steer)}", "steer") for steer in steers]
    return out


def reasoning_parts(row: Row, style: Style) -> list[str]:
    if not row.reasoning:
        return []
    if style.reasoning:
        return ["reasoning:", clean(row.reasoning)]
    return [f"▸ reasoning hidden ({len(row.reasoning)} chars; --reasoning shows it)"]


def call_text(name: str | None, call_id: str | None, arguments: str | None) -> str:
    """One recorded tool call: `→ call NAME (ID) ARGUMENTS`."""
    line = f"→ call {clean_line(name or '(unnamed tool)')}"
    if call_id:
        line += f" ({clean_line(call_id)})"
    return line + " " + ("(no arguments recorded)" if arguments is None else clean(arguments))


def expand_tabs(line: str) -> str:
    """`line` (no newline) with each tab replaced as rich replaces it: by a space, then spaces
    up to the next multiple of 8 cells."""
    from rich.cells import cell_len

    out: list[str] = []
    position = 0
    pieces = line.split("\t")
    for piece in pieces[:-1]:
        part = piece + " "
        position += cell_len(part)
        spaces = (TAB_SIZE - position % TAB_SIZE) % TAB_SIZE
        position += spaces
        out.append(part + " " * spaces)
    out.append(pieces[-1])
    return "".join(out)


def row_text(row: Row, style: Style) -> str:
    """One row as printed without a terminal, without its final newline."""
    if row.kind and not style.full and (row.kind in BOILERPLATE_KINDS or row.kind in STATUS_KINDS):
        return quiet_text(row, style) or ""
    body = reasoning_parts(row, style) if row.reasoning else []
    for note in row.commentary:
        body.append(clean(note))
    if row.text and row.role == "tool":
        for text, _ in tool_parts(row.text, style):
            body.append(text)
    elif row.text:
        body.append(clean(row.text))
    for call in row.tool_calls:
        body.append(call_text(call.name, call.id, call.arguments))
    joined = "\n".join(body) if body else "(empty)"
    if "\n" in joined:
        joined = joined.replace("\n", "\n  ")
    text = f"{header_text(row, style)}\n  {joined}"
    if "\t" in text:
        text = "\n".join(expand_tabs(line) if "\t" in line else line for line in text.split("\n"))
    return text


def goal_text(doc: TranscriptDoc, width: int) -> str | None:
    """The task's goal on one line, cut to `width`."""
    goal = doc.task.goal
    if not goal:
        return None
    text = " ".join(clean_line(goal).split())
    room = max(10, width - len("goal: "))
    if len(text) > room:
        text = text[: room - 1] + "…"
    return "goal: " + text


def segment_text(sid: str, previous: str | None, reason: str | None) -> str:
    """The line where the task moves to a newer segment."""
    line = f"── segment {clean_line(sid)}"
    if previous:
        line += f" · previous segment {clean_line(previous)} ended: {clean_line(reason or 'unknown')}"
    return line + " ──"


def footer_text(doc: TranscriptDoc) -> str:
    task = doc.task
    state = task.state if task.end_reason is None else f"{task.state} ({task.end_reason})"
    text = f"task {clean_line(task.root_id)} · {clean_line(state)}"
    if len(task.lineage) > 1:
        text += f" · {len(task.lineage)} segments, tip {clean_line(task.tip_id)}"
    text += f" · {len(doc.rows)} rows shown"
    if doc.coverage.has_older:
        text += f" · older rows exist: hermes-task older {clean_line(task.root_id)}"
    return text


def rows_chunks(
    items: Iterable[Row], style: Style, task: TaskInfo | None, newest: str | None, out: list[str]
) -> str | None:
    """Rows appended to `out` as printed text (each followed by a blank line), with a segment
    line where the task moves past `newest`; returns the newest segment after them."""
    order = {sid: i for i, sid in enumerate(task.lineage if task else ())}
    reasons = {s.id: s.end_reason for s in task.segments} if task else {}
    append = out.append
    for row in items:
        if row.session_id != newest and (
            newest is None or order.get(row.session_id, -1) > order.get(newest, -1)
        ):
            if newest is not None and task is not None:
                append(segment_text(row.session_id, newest, reasons.get(newest)) + "\n\n")
            newest = row.session_id
        append(row_text(row, style) + "\n\n")
    return newest


def transcript_chunks(doc: TranscriptDoc, style: Style, width: int, *, batch: int = 500) -> Iterator[str]:
    """The whole transcript as printed without a terminal (goal, rows, footer), in chunks of
    about `batch` rows so a pipe starts receiving before everything is formatted."""
    goal = goal_text(doc, width)
    if goal is not None:
        yield goal + "\n\n"
    newest: str | None = None
    rows = doc.rows
    for start in range(0, len(rows), batch):
        out: list[str] = []
        newest = rows_chunks(rows[start : start + batch], style, doc.task, newest, out)
        yield "".join(out)
    yield footer_text(doc) + "\n"
