"""`recover --format markdown`: a parent's tasks as a GitHub-flavoured Markdown report (no rich).

The report: a heading for the parent (and, with `--recursive`, one for each nested
conversation, a level deeper, naming the task that delegated it), the summary line, a table of
its tasks (number, status, time, usage, goal, child session: ids whole), the notes and
warnings the terminal prints under its table, then each task's transcript in a collapsible
`<details>` block: its goal and final answer (the result the parent was told, or its error)
first, then what was read of its child (`reading/taskread.py`) and its rows as the Markdown
painter draws them (`render/markdown.py`), or why it was not read (no known child, a failed
proof or read, a bound). Written as it is read: `report` yields the head, then one block per
task as its child is read. Invariant: every backend string goes through `render/mdtext.py`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from hermes_task.core.documents import TaskEntry, TasksDoc
from hermes_task.core.sanitize import clean_line
from hermes_task.core.ui_strings import RECOVER, STATUS_LABELS
from hermes_task.reading.taskread import RUN_WIDE, ChildRead, Unread
from hermes_task.render.markdown import rows_markdown, warnings_markdown
from hermes_task.render.mdtext import cell, code, escaped, html_text, inline, paragraphs, table
from hermes_task.render.rows import (
    Segments,
    View,
    duration_text,
    footer_text,
    gap_text,
    no_tasks_text,
    notes,
    number_of,
    summary_line,
    told_text,
    usage_cell,
    usage_told,
)

GOAL_WIDTH = 100  # a goal's characters in the table and a block's summary line
STORE_MARK = " (store)"
COLUMNS = ["#", "status", "time", "usage", "goal", "child session"]

# A task's child as read, or why not; given the task and the conversation it belongs to.
ReadChild = Callable[[TaskEntry, str], ChildRead | Unread]


def _cut(text: str, width: int = GOAL_WIDTH) -> str:
    text = " ".join(clean_line(text).split())
    return text if len(text) <= width else text[: width - 1] + "…"


def usage_text(entry: TaskEntry) -> str:
    """The proven usage (recover's table cell, with what the result told the parent when it
    differs); without it, the tokens the parent was told (its result's `tokens`), or empty."""
    tokens, usage = entry.tokens, entry.usage
    if usage is not None:
        told = usage_told(entry)
        unknown = usage.input_tokens is None and usage.output_tokens is None
        if told is None and unknown and tokens is not None and (tokens.input, tokens.output) != (None, None):
            told = told_text(tokens)
        return usage_cell(usage) + (f" ({told})" if told else "")
    if tokens is None or (tokens.input is None and tokens.output is None):
        return ""
    parts = [f"{n:,} {what}" for n, what in ((tokens.input, "in"), (tokens.output, "out")) if n is not None]
    return " · ".join(parts) + " (reported)"


def status_text(entry: TaskEntry) -> str:
    mark = STORE_MARK if entry.result_source == "store" else ""
    return STATUS_LABELS.get(entry.status, entry.status) + mark


def task_table(tasks: Sequence[TaskEntry]) -> str:
    rows = [
        [
            cell(number_of(entry)),
            cell(status_text(entry)),
            cell(duration_text(entry.duration_seconds) or "-"),
            cell(usage_text(entry) or "-"),
            cell(_cut(entry.goal or "(no goal recorded)")),
            code(entry.child_session_id, cell=True) if entry.child_session_id else "-",
        ]
        for entry in tasks
    ]
    return table(COLUMNS, rows)


def heading(level: int, conversation: str, task: TaskEntry | None) -> str:
    """The heading of a conversation's tasks: the parent's, or a nested one's (its task)."""
    marks = "#" * min(level, 6)
    text = f"{marks} Delegated tasks of {code(conversation)}"
    return text + (f" (task {escaped(number_of(task), starts=False)})" if task is not None else "")


def answer(entry: TaskEntry) -> str:
    """The final answer first: the result's summary (whole), its error; or what is known."""
    parts = []
    if entry.summary:
        parts.append(f"**Final answer:**\n\n{paragraphs(entry.summary)}")
    if entry.error:
        parts.append(f"**Error:**\n\n{paragraphs(entry.error)}")
    if not parts:
        known = RECOVER["unreported_result"] if entry.status == "ended_unreported" else "none reported yet"
        parts.append(f"**Final answer:** {escaped(known)}")
    if entry.result_source == "store":
        parts.append(escaped(RECOVER["store_note"]))
    return "\n\n".join(parts)


def transcript(read: ChildRead | Unread, view: View) -> Iterator[str]:
    """What was read of the task's child: its facts, warnings and rows, or why not."""
    if isinstance(read, Unread):
        yield f"**Transcript not read:** {inline(read.message)}\n\n"
        return
    if read.doc is not None:
        yield f"**Transcript:** {inline(footer_text(read.doc))}\n\n"
        yield warnings_markdown([w for w in read.warnings if w.code not in RUN_WIDE])
    if read.failure is not None:
        what = "read in part" if read.rows else "could not be read"
        yield f"**Transcript {what}:** {inline(read.failure.message)}\n\n"
    yield from rows_markdown(read.rows, view, Segments(read.doc.task if read.doc else None))


def task_block(entry: TaskEntry, read: ChildRead | Unread, view: View) -> Iterator[str]:
    """One task as a collapsible block (module docstring)."""
    title = f"{number_of(entry)} {status_text(entry)} · {_cut(entry.goal or '(no goal recorded)')}"
    yield f"<details>\n<summary>{html_text(title)}</summary>\n\n"
    yield f"**Goal:**\n\n{paragraphs(entry.goal or '') or escaped('(no goal recorded)')}\n\n"
    yield answer(entry) + "\n\n"
    if entry.gap:
        yield escaped(gap_text(entry)) + "\n\n"
    yield from transcript(read, view)
    yield "</details>\n\n"


def report(
    doc: TasksDoc, shown: Sequence[TaskEntry], read: ReadChild, view: View, statuses: Sequence[str] = ()
) -> Iterator[str]:
    """The whole report of `doc` (module docstring); `shown` are the tasks `--status`
    (`statuses`) keeps (the summary counts every task)."""
    yield heading(2, doc.parent_id, None) + "\n\n" + inline(summary_line(doc)) + "\n\n"
    yield warnings_markdown(doc.warnings)
    if not shown:  # none delegated, or none matches --status
        yield inline(no_tasks_text(doc, statuses)) + "\n\n"
    if shown:
        lines = "\\\n".join(inline(note) for note in notes(doc))
        yield task_table(shown) + "\n\n" + (lines + "\n\n" if lines else "")
    yield from _blocks(doc.parent_id, shown, read, view, level=2)


def _blocks(
    conversation: str, tasks: Sequence[TaskEntry], read: ReadChild, view: View, *, level: int
) -> Iterator[str]:
    """Each task's block, then each nested conversation: its heading, table and blocks."""
    for entry in tasks:
        yield from task_block(entry, read(entry, conversation), view)
    for entry in tasks:
        child = entry.child_session_id
        if entry.children and child:
            yield heading(level + 1, child, entry) + "\n\n" + task_table(entry.children) + "\n\n"
            yield from _blocks(child, entry.children, read, view, level=level + 1)


__all__ = ["COLUMNS", "ReadChild", "report", "task_table", "usage_text"]
