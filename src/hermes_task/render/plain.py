"""Plain (no rich) task lines for piped output: `recover` and `recover --watch` not on a TTY.

The contract (docs/commands.md "Piped output"): one line per task, fields separated by one tab, no
padding and no wrapping, full ids, no header unless asked; a new field only ever comes last. Every field is `clean_line`d, so a
backend value can neither add a field (tab) nor a line (newline) nor an escape sequence; an
unknown value is the empty field. Nested tasks follow their parent, their `#` being the path
of numbers (`1.1/2.1`). Pure: strings in, strings out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from hermes_task.core.documents import TaskEntry, TasksDoc
from hermes_task.core.sanitize import clean_line
from hermes_task.core.ui_strings import RECOVER, UNAVAILABLE, TaskStatus
from hermes_task.core.verdict import flatten
from hermes_task.failures import Code, error_message
from hermes_task.render import usagetext
from hermes_task.render.rows import plural
from hermes_task.render.usagetext import FIELD_NAMES
from hermes_task.render.usagetext import fields as usage_fields

# Fields 9-13 (the task's usage) came last: scripts that cut fields 1-8 are unchanged.
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
    """One line saying how the task ended: the error of a task that did not complete (else
    its summary; a task that ended unreported says so), first line only, cut to `width`
    characters with `…`."""
    failed = entry.terminal and entry.status != "completed"
    text = (entry.error if failed else None) or entry.summary or entry.error or ""
    if not text and entry.status == "ended_unreported":
        text = RECOVER["unreported_result"]
    first = clean_line(text.strip().split("\n", 1)[0])
    if width is not None and len(first) > width:
        return first[: width - 1] + "…"
    return first


def number_of(entry: TaskEntry) -> str:
    return entry.number or "?"


def task_line(entry: TaskEntry, path: str = "") -> str:
    """One task as a tab-separated line (`COLUMNS`), without a newline."""
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
    """Every task of a tree, parents first, as `task_line`s; the header line first if asked."""
    out = ["\t".join(COLUMNS)] if header else []
    for entry in tasks:
        out.append(task_line(entry, path))
        out.extend(task_lines(entry.children, path=f"{path}{number_of(entry)}/"))
    return out


def gap_text(entry: TaskEntry) -> str:
    """The words for a task's `gap` (why its child was not read), sanitised."""
    gap = entry.gap or ""
    reason = RECOVER.get(f"gap_{gap}")
    if reason is None:
        reason = error_message(Code(gap)) if gap in {c.value for c in Code} else gap
    return RECOVER["gap"].format(reason=clean_line(reason))


def summary_line(doc: TasksDoc) -> str:
    """The counts under a task table: tasks, terminal ones, the state, then each status's
    count (`2 tasks · 2 terminal · finished (1 completed, 1 failed)`)."""
    summary = doc.summary
    counts: Counter[str] = Counter(e.status for e in flatten(doc.tasks))
    line = RECOVER["summary"].format(
        tasks=plural(summary.total, "task"), terminal=summary.terminal, state=summary.state
    )
    line += " (" + ", ".join(f"{counts[s]} {s}" for s in TaskStatus if counts[s]) + ")"
    if summary.usage is not None:
        line += " · usage " + usagetext.cell(summary.usage)
    return line


def notes(doc: TasksDoc) -> list[str]:
    """The lines under a task table: what `(store)` means, why a child session is `-`, and
    how to open a task's child."""
    every = flatten(doc.tasks)
    out: list[str] = []
    if any(e.result_source == "store" for e in every):
        out.append(RECOVER["store_note"])
    for reason in dict.fromkeys(e.unavailable_reason for e in every if e.unavailable_reason):
        if reason in UNAVAILABLE:
            out.append(RECOVER["unavailable"].format(reason=UNAVAILABLE[reason]))
    if any(e.child_session_id for e in every):
        out.append(RECOVER["open"])
    return out


def no_tasks_text(doc: TasksDoc, statuses: Sequence[str] = ()) -> str:
    """Why no task is shown: none matches the `--status` filter (while the summary counts
    some), or the parent delegated none (that it is known of)."""
    if doc.summary.total:
        wanted = ", ".join(clean_line(s) for s in statuses) or "?"
        return RECOVER["no_match"].format(statuses=wanted, tasks=plural(doc.summary.total, "task"))
    return RECOVER["no_tasks"].format(sid=clean_line(doc.parent_id))
