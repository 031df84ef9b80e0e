"""Text without rich: the row model every painter draws and the walk they share, the plain painter,
usage as text, the piped task lines (docs/commands.md "Piped rows", "Piped output"). A `RowView` is a
`quiet` line or a `header` and `body` blocks; a piece is `(text, what)`, `what` one of `PARTS`, never
a colour. Every backend string is sanitised here: a painter adds nothing from the backend.
"""

from __future__ import annotations

import datetime as dt
import math
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache
from typing import NamedTuple

from hermes_task.core.documents import (
    MISSING,
    Row,
    TaskEntry,
    TaskInfo,
    TasksDoc,
    TaskTokens,
    TranscriptDoc,
    Usage,
)
from hermes_task.core.projection import BOILERPLATE_KINDS, ROLES, STATUS_KINDS, cut, split_steers, tool_text
from hermes_task.core.sanitize import clean, clean_line, clip, is_clean_line, one_line
from hermes_task.core.ui_strings import RECOVER, UNAVAILABLE, TaskStatus
from hermes_task.core.verdict import flatten
from hermes_task.failures import Code, error_message

STEER_LABEL = "steer from the user (out-of-band, appended to this result):"
# What a piece is, for the painters: the header's parts, then the body's.
PARTS = (
    *("user", "assistant", "tool", "system", "role"),  # the marker and role, by role
    *("kind", "tool_name", "call_id", "row_id", "archived"),  # row_id: `  #ID  TIME`
    *("prose", "output", "cut", "status", "steer", "reasoning_label", "reasoning", "hidden"),
    *("call", "call_id_in_call", "arguments", "no_arguments", "empty"),
)

Piece = tuple[str, str]  # (sanitised text, what it is: one of PARTS)
Block = tuple[Piece, ...]  # one or more pieces, starting on a line of their own


class View(NamedTuple):
    """What the user asked to see: reasoning expanded, everything in full, times in UTC."""

    reasoning: bool = False
    full: bool = False
    utc: bool = False
    more: tuple[str, ...] = ()  # `older`'s options for the footer's "shows more" (`--pages N+1`)


class RowView(NamedTuple):
    quiet: str | None
    header: Block
    body: tuple[Block, ...]


def when(timestamp: float | None, *, utc: bool = False) -> str:
    """Local time with its UTC offset (as journalctl), or UTC with a Z, as `strftime` prints it."""
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
    parts = _minute(second // 60, utc)
    if parts:
        return f"{parts[0]}{second % 60:02d}{parts[1]}"
    try:  # this time formatted on its own
        moment = dt.datetime.fromtimestamp(timestamp, tz=dt.UTC)
        return (
            moment.strftime("%Y-%m-%d %H:%M:%SZ")
            if utc
            else moment.astimezone().strftime("%Y-%m-%d %H:%M:%S %z")
        )
    except (OverflowError, OSError, ValueError):
        return ""


@lru_cache(maxsize=4096)
def _minute(minute: int, utc: bool) -> tuple[str, str] | tuple[()]:
    """The text around the seconds of `minute` (since the epoch), or () when its offset changes
    within it or is not whole minutes (each time then formatted on its own)."""
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


def plural(count: int, word: str, *, grouped: bool = False) -> str:
    """`1 row`, `0 rows`, `1200 rows` (`grouped`: `1,200 rows`)."""
    number = f"{count:,}" if grouped else str(count)
    return f"{number} {word}" if count == 1 else f"{number} {word}s"


def header(row: Row, view: View) -> Block:
    role = "assistant" if row.role == "agent" else row.role
    kind, call_id = row.kind or "", row.tool_call_id or ""
    tool = row.tool_name or "" if row.role == "tool" else ""
    if not is_clean_line(role + kind + tool + call_id):  # rare: sanitise each field on its own
        role, kind, tool, call_id = clean_line(role), clean_line(kind), clean_line(tool), clean_line(call_id)
    stamp = when(row.timestamp, utc=view.utc)
    place = f"  #{row.id}  {stamp}" if stamp else f"  #{row.id}"  # the row id and time: one part
    marker = (f"▌ {role}", role if role in ROLES else "role")
    if not (kind or tool or call_id or row.archived):  # the usual row: two pieces
        return (marker, (place, "row_id"))
    optional = ((f" [{kind}]", "kind"), (f" {tool}", "tool_name"), (f" ({call_id})", "call_id"))
    pieces = [marker, *(piece for piece, value in zip(optional, (kind, tool, call_id), strict=True) if value)]
    pieces.append((place, "row_id"))
    return (*pieces, ("  archived", "archived")) if row.archived else tuple(pieces)


def tool_blocks(text: str, view: View) -> list[Block]:
    """A tool result's blocks: its output (cut unless `full`), status line and steers (never cut)."""
    output, steers = split_steers(text)
    decoded = tool_text(output)
    body = output if decoded is None else decoded.body
    pieces: list[Piece] = [(body, "output")]
    if not view.full:
        kept = cut(body)
        left = f"{kept.chars:,} chars" if kept.inside else plural(kept.lines, "line", grouped=True)
        note = (f"… {left} left out (--full)", "cut") if kept.chars else ("", "cut")
        pieces = [(kept.head, "output"), note, (kept.tail, "output")]
    out: list[Block] = [((clean(t) if what == "output" else t, what),) for t, what in pieces if t]
    if decoded is not None and decoded.status:
        out.append(((clean_line(decoded.status), "status"),))
    out += [((f"{STEER_LABEL}\n{clean(steer)}", "steer"),) for steer in steers]
    return out


def call_block(name: str | None, call_id: str | None, arguments: str | None) -> Block:
    """One recorded tool call (its arguments a piece of their own: Markdown fences them)."""
    pieces = [(f"→ call {clean_line(name or '(unnamed tool)')}", "call")]
    if call_id:
        pieces.append((f" ({clean_line(call_id)})", "call_id_in_call"))
    if arguments is None:
        pieces += [(" ", "call"), ("(no arguments recorded)", "no_arguments")]
    else:
        pieces.append((" " + clean(arguments), "arguments"))
    return tuple(pieces)


def row_view(row: Row, view: View) -> RowView:
    if row.kind and not view.full and (row.kind in BOILERPLATE_KINDS or row.kind in STATUS_KINDS):
        if row.kind in BOILERPLATE_KINDS:  # `▸ compaction summary, …`, `▸ continuation prompt, …`
            line = f"▸ {row.kind.replace('_', ' ')}, {len(row.text or ''):,} chars (--full shows it)"
        else:
            line = f"· {clean_line(row.kind)}: {first_line(row.text or '', 100)}"
        stamp = when(row.timestamp, utc=view.utc)
        return RowView(f"{line}  #{row.id}  {stamp}" if stamp else f"{line}  #{row.id}", (), ())
    body: list[Block] = []
    if row.reasoning:
        if view.reasoning:
            body += [(("reasoning:", "reasoning_label"),), ((clean(row.reasoning), "reasoning"),)]
        else:
            hidden = f"▸ reasoning hidden ({len(row.reasoning)} chars; --reasoning shows it)"
            body.append(((hidden, "hidden"),))
    body += [((clean(note), "prose"),) for note in row.commentary]
    if row.text and row.role == "tool":
        body += tool_blocks(row.text, view)
    elif row.text:
        body.append(((clean(row.text), "prose"),))
    body += [call_block(call.name, call.id, call.arguments) for call in row.tool_calls]
    return RowView(None, header(row, view), tuple(body) or ((("(empty)", "empty"),),))


def footer_text(doc: TranscriptDoc, view: View = View(), shown: int | None = None) -> str:  # noqa: B008 (an immutable tuple)
    """The last line; `shown`: a streamed document's row count."""
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
    """`line(row)`: the segment line to draw before `row` (None: no move to a newer segment of
    `task`'s lineage, or no task); `newest` carries over to a later batch (`follow`)."""

    def __init__(self, task: TaskInfo | None, newest: str | None = None) -> None:
        self.newest = newest
        self.order = {sid: i for i, sid in enumerate(task.lineage)} if task else {}
        self.reasons = {s.id: s.end_reason for s in task.segments} if task else {}

    def line(self, row: Row) -> str | None:
        sid, newest = row.session_id, self.newest
        if sid == newest or (newest is not None and self.order.get(sid, -1) <= self.order.get(newest, -1)):
            return None
        self.newest = sid
        if newest is None:  # the first row (without a task, no row ever moves: order is empty)
            return None
        line = f"── segment {clean_line(sid)}"
        if newest:
            reason = clean_line(self.reasons.get(newest) or "unknown")
            line += f" · previous segment {clean_line(newest)} ended: {reason}"
        return line + " ──"


FIELD_NAMES = ("input_tokens", "output_tokens", "cost_usd", "cost_kind", "usage_complete")


def count_text(value: int | None) -> str:
    """`950`, `12.3k`, `4.5M`; `?` when unknown."""
    if value is None:
        return "?"
    if value < 1000:
        return str(value)
    number, unit = (value / 1000, "k") if value < 999_950 else (value / 1_000_000, "M")
    return f"{number:.1f}".removesuffix(".0") + unit


def cost_text(usage: Usage) -> str:
    """`$0.042` (actual), `~$0.042` (estimated), `$?` (no cost known)."""
    cost = usage.cost_usd
    if cost is None:
        return "$?"
    sign = "~" if usage.cost_kind == "estimated" else ""
    if cost == 0:
        return sign + "$0"
    text = f"{cost:.4f}" if cost < 0.01 else f"{cost:.3f}" if cost < 1 else f"{cost:,.2f}"
    return sign + ("<$0.0001" if text == "0.0000" else "$" + text)


def usage_cell(usage: Usage | None) -> str:
    if usage is None:
        return "-"
    lower = "" if usage.complete else "≥"
    return f"{lower}{count_text(usage.input_tokens)}/{count_text(usage.output_tokens)} {cost_text(usage)}"


def usage_told(entry: TaskEntry) -> str | None:
    """`told_text`, when a figure both the result and the proven sum have differs; else None."""
    usage, tokens = entry.usage, entry.tokens
    if usage is None or tokens is None:
        return None
    pairs = ((tokens.input, usage.input_tokens), (tokens.output, usage.output_tokens))
    return None if all(a is None or b is None or a == b for a, b in pairs) else told_text(tokens)


def told_text(tokens: TaskTokens) -> str:
    """`told 10k/1.2k`: the tokens a task's result gave the parent."""
    return f"told {count_text(tokens.input)}/{count_text(tokens.output)}"


def _full(value: int | None) -> str:
    return "?" if value is None else f"{value:,}"


def usage_line(usage: Usage | None) -> str | None:
    """`show`'s header line (cache and reasoning tokens when not 0); None without usage."""
    if usage is None:
        return None
    parts = [f"{_full(usage.input_tokens)} in", f"{_full(usage.output_tokens)} out"]
    extras = (
        (usage.cache_read_tokens, "cache read"),
        (usage.cache_write_tokens, "cache write"),
        (usage.reasoning_tokens, "reasoning"),
    )
    parts += [f"{_full(n)} {label}" for n, label in extras if n]  # a zero says nothing here
    parts.append(f"{_full(usage.api_calls)} API call" + ("" if usage.api_calls == 1 else "s"))
    if usage.cost_usd is None:
        parts.append("cost unknown")
    else:
        sign = "~" if usage.cost_kind == "estimated" else ""
        amount = f"{usage.cost_usd:.6f}".rstrip("0").rstrip(".")
        parts.append(f"{sign}${amount} {usage.cost_kind}")
    parts.append(plural(usage.segments, "segment"))
    text = "usage: " + " · ".join(parts)
    if not usage.complete:
        text += " · not complete: " + "; ".join(MISSING[m] for m in usage.missing)
    return text


def usage_fields(usage: Usage | None) -> tuple[str, ...]:
    """The piped line's usage fields (`FIELD_NAMES`); empty where unknown."""
    if usage is None:
        return ("",) * len(FIELD_NAMES)
    tokens = ("" if n is None else str(n) for n in (usage.input_tokens, usage.output_tokens))
    cost = "" if usage.cost_usd is None else f"{usage.cost_usd:.10f}".rstrip("0").rstrip(".")
    return (*tokens, cost, usage.cost_kind or "", "true" if usage.complete else "false")


def expand_tabs(text: str, column: int = 0) -> str:
    """`text` (no newline, from `column`) with each tab spaced to the next multiple of 8 cells."""
    from rich.cells import cell_len  # lazy: rich's cell widths (no rich on a pipe), only for a tab

    out, position = [], column
    *pieces, last = text.split("\t")
    for piece in pieces:
        position += cell_len(piece)
        spaces = 8 - position % 8
        position += spaces
        out.append(piece + " " * spaces)
    return "".join(out) + last


class Plain:
    """The plain painter (docs/commands.md "Piped rows"): one row, or one whole line, without a newline."""

    def row(self, view: RowView) -> str:
        if view.quiet is not None:
            text = view.quiet
        else:
            head = "".join([text for text, _ in view.header])
            body = [block[0][0] if len(block) == 1 else "".join([t for t, _ in block]) for block in view.body]
            text = f"{head}\n  " + "\n".join(body).replace("\n", "\n  ")
        if "\t" in text:  # rare: rich measures cells only then
            text = "\n".join(expand_tabs(line) if "\t" in line else line for line in text.split("\n"))
        return text

    def line(self, text: str, what: str) -> str:
        return text


PLAIN = Plain()


def painted(rows: Iterable[Row], view: View, segments: Segments, painter: Plain, batch: int) -> Iterator[str]:
    """Rows each followed by a blank line, a segment line where the task moves on; chunks of ~`batch`."""
    pending: list[str] = []
    for row in rows:
        line = segments.line(row)
        if line is not None:
            pending.append(painter.line(line, "segment") + "\n\n")
        pending.append(painter.row(row_view(row, view)) + "\n\n")
        if len(pending) >= batch:
            yield "".join(pending)
            pending = []
    if pending:
        yield "".join(pending)


def rows_text(rows: Iterable[Row], view: View, segments: Segments) -> str:
    return "".join(painted(rows, view, segments, PLAIN, 500))


def head_text(doc: TranscriptDoc, width: int, painter: Plain = PLAIN) -> str:
    """The lines before the rows: the goal on one line, cut to `width`, then the task's usage."""
    goal = doc.task.goal and "goal: " + one_line(doc.task.goal, max(10, width - 6))
    texts = ((goal, "goal"), (usage_line(doc.task.usage), "footer"))
    head = [painter.line(text, what) for text, what in texts if text]
    return "\n".join(head) + "\n\n" if head else ""


def transcript_chunks(
    doc: TranscriptDoc, view: View, width: int, *, batch: int = 500, painter: Plain = PLAIN
) -> Iterator[str]:
    """The whole transcript in chunks: the output starts before everything is formatted."""
    if head := head_text(doc, width, painter):
        yield head
    yield from painted(doc.rows, view, Segments(doc.task), painter, batch)
    yield painter.line(footer_text(doc, view), "footer") + "\n"


COLUMNS = ("#", "status", "time", "goal", "child_session", "delegation", "subagent", "result", *FIELD_NAMES)
RESULT_WIDTH = 80


def duration_text(seconds: float | None) -> str:
    """`8.4s`, `2m05s`, `1h02m`; empty when unknown."""
    if seconds is None:
        return ""
    if seconds < 60:
        return f"{seconds:.1f}s".replace(".0s", "s")
    whole = int(seconds)
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


def result_line(entry: TaskEntry, width: int | None = RESULT_WIDTH) -> str:
    """How the task ended, on one line (docs/commands.md "Piped output", field 8), cut to `width`."""
    failed = entry.terminal and entry.status != "completed"
    text = (entry.error if failed else None) or entry.summary or entry.error or ""
    if not text and entry.status == "ended_unreported":
        text = RECOVER["unreported_result"]
    return first_line(text, width)


def first_line(text: str, width: int | None) -> str:
    first = clean_line(text.strip().split("\n", 1)[0])
    return first if width is None else clip(first, width)


def number_of(entry: TaskEntry) -> str:
    return entry.number or "?"


def status_text(entry: TaskEntry) -> str:
    return entry.status.label + (" (store)" if entry.result_source == "store" else "")


def task_line(entry: TaskEntry, path: str = "") -> str:
    """One task as a tab-separated line (`COLUMNS`; a new field only ever comes last)."""
    fields = (
        path + number_of(entry),
        entry.status,
        "" if entry.duration_seconds is None else f"{entry.duration_seconds:g}",
        entry.goal or "",
        entry.child_session_id or "",
        entry.delegation_id or "",
        entry.subagent_id or "",
        result_line(entry, None),
        *usage_fields(entry.usage),
    )
    return "\t".join(clean_line(field) for field in fields)


def task_lines(tasks: Iterable[TaskEntry], *, header: bool = False, path: str = "") -> list[str]:
    out = ["\t".join(COLUMNS)] if header else []
    for entry in tasks:
        out.append(task_line(entry, path))
        out.extend(task_lines(entry.children, path=f"{path}{number_of(entry)}/"))
    return out


def gap_text(entry: TaskEntry) -> str:
    """The words for a task's `gap` (why its child was not read), sanitised."""
    gap = entry.gap or ""
    failure = error_message(Code(gap)) if gap in {c.value for c in Code} else gap
    reason = RECOVER.get(f"gap_{gap}", failure)
    return RECOVER["gap"].format(reason=clean_line(reason))


def summary_line(doc: TasksDoc) -> str:
    """The counts under a task table (`2 tasks · 2 terminal · finished (1 completed, 1 failed)`)."""
    summary = doc.summary
    counts: Counter[str] = Counter(e.status for e in flatten(doc.tasks))
    line = RECOVER["summary"].format(
        tasks=plural(summary.total, "task"), terminal=summary.terminal, state=summary.state
    )
    line += " (" + ", ".join(f"{counts[s]} {s}" for s in TaskStatus if counts[s]) + ")"
    if summary.usage is not None:
        line += " · usage " + usage_cell(summary.usage)
    return line


def notes(doc: TasksDoc) -> list[str]:
    """The lines under a task table: what `(store)` means, why a child is `-`, how to open one."""
    every = flatten(doc.tasks)
    reasons = dict.fromkeys(e.unavailable_reason for e in every if e.unavailable_reason in UNAVAILABLE)
    out = [RECOVER["store_note"]] if any(e.result_source == "store" for e in every) else []
    out += [RECOVER["unavailable"].format(reason=UNAVAILABLE[reason]) for reason in reasons if reason]
    if any(e.child_session_id for e in every):
        out.append(RECOVER["open"])
    return out


def no_tasks_text(doc: TasksDoc, statuses: Sequence[str] = ()) -> str:
    """Why no task is shown: none matches `--status` (`statuses`), or none was delegated."""
    if doc.summary.total:
        wanted = ", ".join(clean_line(s) for s in statuses) or "?"
        return RECOVER["no_match"].format(statuses=wanted, tasks=plural(doc.summary.total, "task"))
    return RECOVER["no_tasks"].format(sid=clean_line(doc.parent_id))
