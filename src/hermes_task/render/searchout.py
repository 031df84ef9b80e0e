"""What `search` prints (each layout: docs/commands.md "search"): NDJSON events, tab-separated lines
piped, readable groups on a terminal, and the text formats' warnings on stderr; sanitised here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from msgspec.structs import asdict

from hermes_task.core.documents import TaskEntry, WarningItem
from hermes_task.core.events import (
    ErrorEvent,
    SearchMatch,
    SearchResult,
    SearchTask,
    SearchWarning,
    TaskRef,
)
from hermes_task.core.projection import Group, GroupLine, Hit, Span, groups
from hermes_task.core.sanitize import clean, clean_line
from hermes_task.core.ui_strings import SEARCH
from hermes_task.failures import HermesError
from hermes_task.reading.task_search import Tally, TaskSearch
from hermes_task.render import Target
from hermes_task.render.jsontext import event
from hermes_task.render.rows import View, header, number_of, plural, when
from hermes_task.render.terminal_rows import Painter, width_of

Write = Callable[[str], None]
Note = Callable[[str, str], None]  # (line, style): one line on stderr
MAX_SHOWN = 300  # a longer line is shown on a terminal around its first match
SHOWN_BEFORE = 100
MIN_GOAL = 10  # a task heading keeps this much of the goal however narrow the terminal


class JsonSearch:
    def __init__(self, write: Write) -> None:
        self.write = write

    def hits(self, task: TaskEntry, hits: Sequence[Hit]) -> None:
        ref = TaskRef.of(task)
        for hit in hits:
            found = asdict(hit)
            row = found.pop("row")
            found.update(session_id=row.session_id, row_id=row.id, role=row.role, kind=row.kind)
            self.write(event(SearchMatch(task=ref, timestamp=row.timestamp, **found)))

    def warning(self, item: WarningItem, task: TaskEntry | None) -> None:
        ref = None if task is None else TaskRef.of(task)
        self.write(event(SearchWarning(code=item.code, message=item.message, task=ref)))

    def task(self, outcome: TaskSearch) -> None:
        found = asdict(outcome)
        task = found.pop("task")
        found.update(number=task.number, goal=task.goal, child_session_id=task.child_session_id)
        self.write(event(SearchTask(status=task.status, **found)))

    def error(self, error: HermesError) -> None:
        self.write(event(ErrorEvent(code=error.code.value, message=error.message, retryable=error.retryable)))

    def result(self, tally: Tally, exit_code: int) -> None:
        self.write(event(SearchResult(**asdict(tally), exit_code=exit_code)))


class SearchNotes:
    """The text formats' stderr (`shown`: whether --quiet keeps a setup warning)."""

    def __init__(self, out: Target, note: Note, shown: Callable[[str], bool], *, utc: bool = False) -> None:
        self.out = out
        self.note = note
        self.shown = shown
        self.view = View(utc=utc)
        self.warned: set[str] = set()  # the warning codes said about the current task
        self.painter = Painter(color=out.color, width=None, markdown=False)
        self.heading: str | None = None  # the task whose heading was written last
        self.tasks_with_hits = 0

    def warning(self, item: WarningItem, task: TaskEntry | None) -> None:
        text = item.message
        if task is not None:
            self.warned.add(item.code)
            text = SEARCH["task_warning"].format(number=clean_line(number_of(task)), message=text)
        if task is not None or self.shown(item.code):
            self.note(f"warning: {text}", "bold yellow")

    def task(self, outcome: TaskSearch) -> None:
        said, self.warned = self.warned, set()
        if outcome.searched == "whole" or outcome.code in said:
            return  # a warning of its read already said why
        key = "not_searched" if outcome.searched == "no" else "in_part"
        text = SEARCH[key].format(
            number=clean_line(number_of(outcome.task)), reason=outcome.message or outcome.code
        )
        self.note(f"warning: {text}", "bold yellow")

    def marked(self, text: str, spans: Sequence[Span], escape: Callable[[str], str]) -> str:
        out, at = [], 0
        for start, end in spans:
            out += [escape(text[at:start]), self.painter.paint([(escape(text[start:end]), "match")])]
            at = end
        return "".join([*out, escape(text[at:])])


def escape_field(text: str) -> str:
    return clean(text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r"))


class LinesSearch(SearchNotes):
    def hits(self, task: TaskEntry, hits: Sequence[Hit]) -> None:
        lines = []
        for group in groups(hits):
            row = group.row
            ids = (task.number or "", task.child_session_id or "", row.session_id, str(row.id), row.role)
            head = "\t".join(
                clean_line(v) for v in (*ids, when(row.timestamp, utc=self.view.utc), group.field)
            )
            for line in group.lines:
                mark = "-" if line.spans is None else ":"
                text = self.marked(line.text, line.spans or (), escape_field)
                lines.append(f"{head}\t{line.number}\t{mark}\t{text}\n")
        self.out.write("".join(lines))

    def result(self, tally: Tally, exit_code: int) -> None:
        pass


class TerminalSearch(SearchNotes):
    def hits(self, task: TaskEntry, hits: Sequence[Hit]) -> None:
        out: list[str] = []
        key = task.number or ""
        if self.heading != key:
            if self.heading is not None:
                out.append("\n")
            self.heading = key
            self.tasks_with_hits += 1
            ids = f"{clean_line(number_of(task))}  {clean_line(task.child_session_id or '')}  "
            goal = " ".join(clean_line(task.goal or "").split())
            room = max(MIN_GOAL, self.out.columns - width_of(ids))  # the ids are never cut
            if width_of(goal) > room:
                goal = goal[: room - 1].rstrip() + "…"
            out.append(self.painter.paint([(ids + goal, "heading")]) + "\n")
        previous: Group | None = None
        for group in groups(hits):
            if previous is None:  # the row's header, as `show` draws it
                row = group.row
                head = self.painter.paint(header(row, self.view))
                if row.session_id != task.child_session_id:
                    head += "  " + self.painter.paint([(f"segment {clean_line(row.session_id)}", "segment")])
                out.append(head + "\n")
            if previous is None or (previous.field, previous.part) != (group.field, group.part):
                out.append("  " + self.painter.paint([(_label(group), "label")]) + "\n")
            else:
                out.append("    " + self.painter.paint([("--", "mark")]) + "\n")
            width = len(str(group.lines[-1].number))
            out += [self._line(line, width) + "\n" for line in group.lines]
            previous = group
        self.out.write("".join(out))

    def _line(self, line: GroupLine, width: int) -> str:
        mark = "-" if line.spans is None else ":"
        text, spans = line.text, line.spans or ()
        left = right = ""
        if len(text) > MAX_SHOWN:
            start = max(0, spans[0][0] - SHOWN_BEFORE) if spans else 0
            end = min(len(text), start + MAX_SHOWN)
            left, right = ("…" if start > 0 else ""), ("…" if end < len(text) else "")
            spans = tuple(
                (max(s, start) - start, min(e, end) - start) for s, e in spans if e > start and s < end
            )
            text = text[start:end]
        body = self.marked(text, spans, clean)
        number = self.painter.paint([(f"{line.number:>{width}}", "number"), (mark, "mark")])
        return f"    {number} {left}{body}{right}".rstrip(" ")

    def result(self, tally: Tally, exit_code: int) -> None:
        total = plural(tally.tasks, "task")
        if tally.matches:
            lines, tasks = plural(tally.matches, "matching line"), plural(self.tasks_with_hits, "task")
            found = SEARCH["found"].format(lines=lines, tasks=tasks, searched=tally.searched, total=total)
        else:
            found = SEARCH["none"].format(searched=tally.searched, total=total)
            if not tally.complete:
                found += f" · {SEARCH['unproven']}"
        self.note(found, "dim")


def _label(group: Group) -> str:
    """What a block is, above its lines: `output`, `commentary 2`, `arguments of call NAME (ID)`."""
    if group.field == "arguments":
        call = group.row.tool_calls[group.part]
        name = clean_line(call.name or "(unnamed tool)")
        return f"arguments of call {name}" + (f" ({clean_line(call.id)})" if call.id else "")
    return group.field if group.part == 0 else f"{group.field} {group.part + 1}"
