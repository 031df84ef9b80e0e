"""The transcript row model both painters draw: what each row, segment line, goal and footer
says, built once (pure, no rich).

A row is a `RowView`: either one `quiet` line (compaction boilerplate and status notices,
unless `--full`), or a `header` (pieces: marker, role, kind, tool, call id, row id, time,
archived) and `body` blocks, each starting on a line of its own: reasoning (or the note that
it is hidden), commentary and prose, a tool result (its output, where it was cut, its status
line, the steers appended to it), one block per tool call, or `(empty)`. A piece is
`(text, what)`: `what` names the part (`PARTS`), never a colour; `render/plain_rows.py` joins
the texts, `render/terminal_rows.py` colours and wraps them.

Invariants: every backend string is sanitised here (`clean` for text, `clean_line` for
one-line fields), so a painter adds nothing from the backend; with `full` every character of
the row's text is in the model, and without it only tool output is cut (`core/projection.py`:
its first and last lines, with what was left out between) and boilerplate and status rows
shrink to one line; prose is never cut.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable, Iterator
from typing import NamedTuple

from hermes_task.core.documents import Row, TaskInfo, TranscriptDoc
from hermes_task.core.projection import BOILERPLATE_KINDS, STATUS_KINDS, cut, split_steers, tool_text
from hermes_task.core.sanitize import clean, clean_line, is_clean_line

BOILERPLATE_LABELS = {
    "compaction_summary": "compaction summary",
    "continuation_prompt": "continuation prompt",
}
STEER_LABEL = "steer from the user (out-of-band, appended to this result):"
# What a piece is, for the painters: the header's parts, then the body's.
PARTS = (
    *("user", "assistant", "tool", "system", "role"),  # the marker and role, by role
    *("kind", "tool_name", "call_id", "row_id", "archived"),  # row_id: `  #ID  TIME`
    *("prose", "output", "cut", "status", "steer", "reasoning_label", "reasoning", "hidden"),
    *("call", "call_id_in_call", "arguments", "no_arguments", "empty"),
)
ROLES = frozenset({"user", "assistant", "tool", "system"})

Piece = tuple[str, str]  # (sanitised text, what it is: one of PARTS)
Block = tuple[Piece, ...]  # one or more pieces, starting on a line of their own


class View(NamedTuple):
    """What the user asked to see: reasoning expanded, everything in full, times in UTC
    (instead of local time with its offset)."""

    reasoning: bool = False
    full: bool = False
    utc: bool = False
    more: tuple[str, ...] = ()  # `older`'s options for the footer's "shows more" (`--pages N+1`)


class RowView(NamedTuple):
    """One row as drawn: `quiet` (one line) or `header` and `body` (module docstring)."""

    quiet: str | None
    header: Block
    body: tuple[Block, ...]


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


def plural(count: int, word: str, *, grouped: bool = False) -> str:
    """`1 row`, `0 rows`, `1200 rows` (`grouped`: `1,200 rows`)."""
    number = f"{count:,}" if grouped else str(count)
    return f"{number} {word}" if count == 1 else f"{number} {word}s"


def header(row: Row, view: View) -> Block:
    """The header line: marker, role, kind, tool, call id, row id, time, archived."""
    role = "assistant" if row.role == "agent" else row.role
    kind, tool, call_id = (
        row.kind or "",
        row.tool_name or "" if row.role == "tool" else "",
        row.tool_call_id or "",
    )
    if not is_clean_line(role + kind + tool + call_id):  # rare: sanitise each field on its own
        role, kind, tool, call_id = clean_line(role), clean_line(kind), clean_line(tool), clean_line(call_id)
    stamp = when(row.timestamp, utc=view.utc)
    place = f"  #{row.id}  {stamp}" if stamp else f"  #{row.id}"  # the row id and time: one part
    if not (kind or tool or call_id or row.archived):  # the usual row: two pieces
        return ((f"▌ {role}", role if role in ROLES else "role"), (place, "row_id"))
    pieces = [(f"▌ {role}", role if role in ROLES else "role")]
    if kind:
        pieces.append((f" [{kind}]", "kind"))
    if tool:
        pieces.append((f" {tool}", "tool_name"))
    if call_id:
        pieces.append((f" ({call_id})", "call_id"))
    pieces.append((place, "row_id"))
    if row.archived:
        pieces.append(("  archived", "archived"))
    return tuple(pieces)


def quiet_text(row: Row, view: View) -> str | None:
    """Boilerplate and status rows as one line (None: draw the row in full)."""
    if view.full or not (row.kind in BOILERPLATE_KINDS or row.kind in STATUS_KINDS):
        return None
    if row.kind in BOILERPLATE_KINDS:
        size = len(row.text or "")
        line = f"▸ {BOILERPLATE_LABELS[row.kind or '']}, {size:,} chars (--full shows it)"
    else:
        first = clean_line((row.text or "").strip().split("\n", 1)[0])
        if len(first) > 100:
            first = first[:99] + "…"
        line = f"· {clean_line(row.kind or '')}: {first}"
    line += f"  #{row.id}"
    stamp = when(row.timestamp, utc=view.utc)
    return f"{line}  {stamp}" if stamp else line


def tool_blocks(text: str, view: View) -> list[Block]:
    """A tool result's blocks: its output (cut unless `full`: the first lines, a `cut` note,
    the last lines), its status line (exit code, error, status), and the steers Hermes
    appended to it (a user message: never cut)."""
    output, steers = split_steers(text)
    decoded = tool_text(output)
    body = output if decoded is None else decoded.body
    out: list[Block] = []
    if view.full:
        if body:
            out.append(((clean(body), "output"),))
    else:
        kept = cut(body)
        if kept.head:
            out.append(((clean(kept.head), "output"),))
        if kept.chars:
            left = f"{kept.chars:,} chars" if kept.inside else plural(kept.lines, "line", grouped=True)
            out.append(((f"… {left} left out (--full)", "cut"),))
        if kept.tail:
            out.append(((clean(kept.tail), "output"),))
    if decoded is not None and decoded.status:
        out.append(((clean_line(decoded.status), "status"),))
    out += [((f"{STEER_LABEL}\n{clean(steer)}", "steer"),) for steer in steers]
    return out


def call_block(name: str | None, call_id: str | None, arguments: str | None) -> Block:
    """One recorded tool call: `→ call NAME (ID) ARGUMENTS` (the arguments a piece of their
    own: the Markdown painter fences them)."""
    pieces = [(f"→ call {clean_line(name or '(unnamed tool)')}", "call")]
    if call_id:
        pieces.append((f" ({clean_line(call_id)})", "call_id_in_call"))
    if arguments is None:
        pieces += [(" ", "call"), ("(no arguments recorded)", "no_arguments")]
    else:
        pieces.append((" " + clean(arguments), "arguments"))
    return tuple(pieces)


def row_view(row: Row, view: View) -> RowView:
    """The row as drawn (module docstring)."""
    if row.kind and not view.full and (row.kind in BOILERPLATE_KINDS or row.kind in STATUS_KINDS):
        return RowView(quiet_text(row, view), (), ())
    body: list[Block] = []
    if row.reasoning:
        if view.reasoning:
            body += [(("reasoning:", "reasoning_label"),), ((clean(row.reasoning), "reasoning"),)]
        else:
            hidden = f"▸ reasoning hidden ({len(row.reasoning)} chars; --reasoning shows it)"
            body.append(((hidden, "hidden"),))
    for note in row.commentary:
        body.append(((clean(note), "prose"),))
    if row.text and row.role == "tool":
        body += tool_blocks(row.text, view)
    elif row.text:
        body.append(((clean(row.text), "prose"),))
    for call in row.tool_calls:
        body.append(call_block(call.name, call.id, call.arguments))
    if not body:
        body.append((("(empty)", "empty"),))
    return RowView(None, header(row, view), tuple(body))


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


def footer_text(doc: TranscriptDoc, view: View = View(), shown: int | None = None) -> str:  # noqa: B008 (an immutable tuple)
    """The last line: the task, its state, its segments, the rows shown (`shown`: a streamed
    document's count), whether older rows exist and the command that shows more (`view.more`)."""
    task = doc.task
    state = task.state if task.end_reason is None else f"{task.state} ({task.end_reason})"
    text = f"task {clean_line(task.root_id)} · {clean_line(state)}"
    if len(task.lineage) > 1:
        text += f" · {len(task.lineage)} segments, tip {clean_line(task.tip_id)}"
    text += f" · {plural(len(doc.rows) if shown is None else shown, 'row')} shown"
    if doc.coverage.has_older:
        more = "".join(f" {clean_line(arg)}" for arg in view.more)
        text += f" · older rows exist: hermes-task older {clean_line(task.root_id)}{more}"
    return text


class Segments:
    """Where rows move to a newer segment of `task`'s lineage: `line(row)` is the segment line
    to draw before `row` (or None), and `newest` the segment of the newest row seen, which
    a later batch of rows (`follow`) continues from. Without a task there are no lines."""

    def __init__(self, task: TaskInfo | None, newest: str | None = None) -> None:
        self.task = task
        self.newest = newest
        self.order = {sid: i for i, sid in enumerate(task.lineage)} if task else {}
        self.reasons = {s.id: s.end_reason for s in task.segments} if task else {}

    def line(self, row: Row) -> str | None:
        sid, newest = row.session_id, self.newest
        if sid == newest or (newest is not None and self.order.get(sid, -1) <= self.order.get(newest, -1)):
            return None
        self.newest = sid
        if newest is None or self.task is None:
            return None
        return segment_text(sid, newest, self.reasons.get(newest))


Item = tuple[str, str | RowView]  # ("goal" | "segment" | "footer", text) or ("row", RowView)


def row_items(rows: Iterable[Row], view: View, segments: Segments) -> Iterator[Item]:
    """Rows, each after its segment line where the task moves to a newer segment."""
    for row in rows:
        line = segments.line(row)
        if line is not None:
            yield ("segment", line)
        yield ("row", row_view(row, view))
