"""Documents written, not rendered (no rich): transcripts and `recover`'s tasks as GitHub-flavoured
Markdown, `recover --junit FILE` as JUnit XML (docs/commands.md "Markdown (`--format markdown`)",
"`--format markdown`: the report of a parent", "`--junit FILE`"). Backend text reaches Markdown only
through `escaped` and its kin, JUnit only through `xml_text`.
"""

from __future__ import annotations

import html
import math
import re
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from itertools import groupby
from typing import Literal

from msgspec import Struct

from hermes_task.core.documents import TaskEntry, TasksDoc, TranscriptDoc, WarningItem
from hermes_task.core.sanitize import clean, clean_line, one_line
from hermes_task.core.ui_strings import RECOVER
from hermes_task.reading.reader import Transcript
from hermes_task.reading.tasktree import RUN_WIDE, Unread
from hermes_task.render.rows import (
    Block,
    Plain,
    RowView,
    Segments,
    View,
    duration_text,
    first_line,
    footer_text,
    gap_text,
    no_tasks_text,
    notes,
    number_of,
    painted,
    rows_text,
    status_text,
    summary_line,
    told_text,
    usage_cell,
    usage_line,
    usage_told,
    when,
)

# What starts something wherever it stands, and at a line's start.
_ANYWHERE = re.compile(r"[\\`*\[\]<>!&|~$@]|(?<![^\W_])_|_(?![^\W_])|:(?=//)|(?<=[wW]{3})\.")
_LINE_START = re.compile(r"[ \t]*(?:(?P<mark>[!-/:-@\[-`{-~])|(?P<digits>\d+)(?P<dot>[.)]))")
_MENTION = re.compile(r"@(?=[0-9A-Za-z])")
_BACKTICKS = re.compile(r"`+")
_INDENT = re.compile(r"^[ \t]+")
WORD_JOINER = "\u2060"
NO_BREAK_SPACE = "\u00a0"


def _defanged(text: str) -> str:
    return _MENTION.sub("@" + WORD_JOINER, text) if "@" in text else text


def _escaped_line(line: str, *, starts: bool = True) -> str:
    """One sanitised line escaped (`starts`: it begins a line, where block markers count)."""
    start = _LINE_START.match(line) if starts else None
    head = ""
    if start is not None and not (start.group("mark") and _ANYWHERE.match(line, start.start("mark"))):
        cut = start.end()
        head = line[: cut - 1] + "\\" + line[cut - 1]
        line = line[cut:]
    return _defanged(head + _ANYWHERE.sub(r"\\\g<0>", line))


def escaped(text: str, *, starts: bool = True) -> str:
    """One line of backend text escaped as it stands (no stripping)."""
    return _escaped_line(clean_line(text), starts=starts)


def inline(text: str) -> str:
    """As `escaped`, without the spaces around it (after a label)."""
    return escaped(clean_line(text).strip())


def cell(text: str) -> str:
    """As `inline`, in a table cell (where no block can start)."""
    return _escaped_line(clean_line(text).strip(), starts=False)


def _indented(line: str) -> str:
    """`line` (escaped) with its leading spaces as no-break spaces (a tab as four)."""
    return _INDENT.sub(lambda lead: lead.group().replace("\t", "    ").replace(" ", NO_BREAK_SPACE), line)


def paragraphs(text: str) -> str:
    """Backend text as paragraphs, line breaks and indentation kept; empty for whitespace only."""
    runs = groupby(clean(text).split("\n"), key=lambda line: bool(line.strip(" \t")))
    return "\n\n".join(
        "\\\n".join(_indented(_escaped_line(line.rstrip(" \t"))) for line in lines)
        for printed, lines in runs
        if printed
    )


def _ticks(text: str, least: int) -> str:
    """A backtick run longer than any in `text`, at least `least` long."""
    return "`" * max(least, max((len(run) for run in _BACKTICKS.findall(text)), default=0) + 1)


def code(text: str, *, cell: bool = False) -> str:
    """`text` (one line) as a code span (`cell`: in a table cell); empty text is `-`."""
    text = clean_line(text)
    if not text:
        return "-"
    ticks = _ticks(text, 1)
    # A parser strips one space from each end of a span's text unless it is all spaces.
    pad = " " if text.strip(" ") and (text[0] in "` " or text[-1] in "` ") else ""
    span = f"{ticks}{pad}{text}{pad}{ticks}"
    return span.replace("|", "\\|") if cell else span


def fence(text: str) -> str:
    body = clean(text)
    ticks = _ticks(body, 3)
    return f"{ticks}\n{body}{ticks}" if body.endswith("\n") else f"{ticks}\n{body}\n{ticks}"


def html_text(text: str) -> str:
    return _defanged(html.escape(clean_line(text).strip(), quote=True))


def table(header: list[str], rows: list[list[str]]) -> str:
    """A GFM table of cells already escaped (`cell`, `code(..., cell=True)`)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    lines += ["| " + " | ".join(cell or " " for cell in row) + " |" for row in rows]
    return "\n".join(lines)


BATCH = 200  # rows formatted between two writes


def block_markdown(block: Block) -> str:
    """One body block: tool output and a call's arguments fenced, any other text as paragraphs."""
    what = block[0][1]
    if what == "output":
        return fence(block[0][0])
    if what == "call":
        line = escaped("".join(text for text, part in block if part != "arguments"))
        arguments = [text[1:] for text, part in block if part == "arguments"]  # " " + arguments
        return "\n\n".join([line, *(fence(text) for text in arguments)])
    return paragraphs("".join(text for text, _ in block))


class MarkdownPainter(Plain):
    def row(self, view: RowView) -> str:
        """Markdown blocks: the header's marker and role in bold (no space may end the bold
        text, or its `**` would not close it), the rest as it reads, then the body."""
        if view.quiet is not None:
            return escaped(view.quiet)
        (first, _what), *rest = view.header
        header = f"**{escaped(first.rstrip())}**" + escaped("".join(text for text, _ in rest), starts=False)
        blocks = [block_markdown(block) for block in view.body]
        return "\n\n".join([header, *(block for block in blocks if block)])

    def line(self, text: str, what: str) -> str:
        return escaped(text)


MARKDOWN = MarkdownPainter()


def warnings_markdown(warnings: Sequence[WarningItem]) -> str:
    lines = [f"> **warning:** {inline(item.message)}" for item in warnings]
    return "\\\n".join(lines) + "\n\n" if lines else ""


def transcript_markdown(doc: TranscriptDoc, view: View) -> Iterator[str]:
    task = doc.task
    yield f"## Task {code(task.root_id)}\n\n{inline(footer_text(doc))}\n\n"
    if goal := paragraphs(task.goal or ""):
        yield f"**Goal:**\n\n{goal}\n\n"
    if usage := usage_line(task.usage):
        yield inline(usage) + "\n\n"
    if task.segments:  # the proven segments, oldest first
        rows = [
            [
                code(seg.id, cell=True),
                cell(when(seg.started_at, utc=view.utc)),
                cell(when(seg.ended_at, utc=view.utc)),
                cell(seg.end_reason or ""),
                str(seg.rows_shown),
            ]
            for seg in task.segments
        ]
        yield table(["segment", "started", "ended", "end reason", "rows shown"], rows) + "\n\n"
    yield warnings_markdown(doc.warnings)
    yield from painted(doc.rows, view, Segments(task), MARKDOWN, BATCH)


GOAL_WIDTH = 100  # a goal's characters in the table and a block's summary line
COLUMNS = ["#", "status", "time", "usage", "goal", "child session"]

# A task's child as read, or why not; given the task and the conversation it belongs to.
ReadChild = Callable[[TaskEntry, str], Transcript | Unread]


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
    reported = ((tokens.input, "in"), (tokens.output, "out")) if tokens is not None else ()
    parts = [f"{n:,} {what}" for n, what in reported if n is not None]
    return " · ".join(parts) + " (reported)" if parts else ""


def task_table(tasks: Sequence[TaskEntry]) -> str:
    rows = [
        [
            cell(number_of(entry)),
            cell(status_text(entry)),
            cell(duration_text(entry.duration_seconds) or "-"),
            cell(usage_text(entry) or "-"),
            cell(one_line(entry.goal or "(no goal recorded)", GOAL_WIDTH)),
            code(entry.child_session_id, cell=True) if entry.child_session_id else "-",
        ]
        for entry in tasks
    ]
    return table(COLUMNS, rows)


def heading(level: int, conversation: str, task: TaskEntry | None) -> str:
    """The heading of a conversation's tasks: the parent's, or a nested one's (its task)."""
    text = f"{'#' * min(level, 6)} Delegated tasks of {code(conversation)}"
    return text + (f" (task {escaped(number_of(task), starts=False)})" if task is not None else "")


def task_block(entry: TaskEntry, read: Transcript | Unread, view: View) -> Iterator[str]:
    title = f"{number_of(entry)} {status_text(entry)} · {one_line(entry.goal or '(no goal recorded)', GOAL_WIDTH)}"
    yield f"<details>\n<summary>{html_text(title)}</summary>\n\n"
    yield f"**Goal:**\n\n{paragraphs(entry.goal or '') or escaped('(no goal recorded)')}\n\n"
    results = (("Final answer", entry.summary), ("Error", entry.error))  # the summary whole, first
    answers = [f"**{label}:**\n\n{paragraphs(text)}" for label, text in results if text]
    if not answers:  # what is known
        known = RECOVER["unreported_result"] if entry.status == "ended_unreported" else "none reported yet"
        answers.append(f"**Final answer:** {escaped(known)}")
    if entry.result_source == "store":
        answers.append(escaped(RECOVER["store_note"]))
    yield "\n\n".join(answers) + "\n\n"
    if entry.gap:
        yield escaped(gap_text(entry)) + "\n\n"
    if isinstance(read, Unread):  # what was read of the task's child, or why not
        yield f"**Transcript not read:** {inline(read.message)}\n\n"
    else:
        if read.doc is not None:
            yield f"**Transcript:** {inline(footer_text(read.doc))}\n\n"
            yield warnings_markdown([w for w in read.warnings if w.code not in RUN_WIDE])
        if read.failure is not None:
            what = "read in part" if read.rows else "could not be read"
            yield f"**Transcript {what}:** {inline(read.failure.message)}\n\n"
        yield from painted(read.rows, view, Segments(read.doc.task if read.doc else None), MARKDOWN, BATCH)
    yield "</details>\n\n"


def report(
    doc: TasksDoc, shown: Sequence[TaskEntry], read: ReadChild, view: View, statuses: Sequence[str] = ()
) -> Iterator[str]:
    """The report of `doc`, yielded as each child is read; `shown`: the tasks `--status` keeps."""
    yield heading(2, doc.parent_id, None) + "\n\n" + inline(summary_line(doc)) + "\n\n"
    yield warnings_markdown(doc.warnings)
    if not shown:  # none delegated, or none matches --status
        yield inline(no_tasks_text(doc, statuses)) + "\n\n"
    else:
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


LAST_ROWS = 20
MESSAGE_WIDTH = 200  # a testcase's name and a failure's message, at most
_NOT_XML = re.compile("[\ufffe\uffff]")
Kind = Literal["pass", "failure", "error"]
# The system-out of a task that did not pass: given the task and its conversation.
LastRows = Callable[[TaskEntry, str], str]


class Case(Struct, frozen=True):
    """One `testcase` (a failure's or error's `type`, `message` and `text`; `out` its system-out)."""

    name: str
    classname: str
    time: float | None
    kind: Kind = "pass"
    type: str = ""
    message: str = ""
    text: str = ""
    out: str | None = None


def xml_text(text: str) -> str:
    return _NOT_XML.sub(lambda m: f"<U+{ord(m.group()):04X}>", clean(text))


def kind_of(entry: TaskEntry) -> Kind:
    return "pass" if entry.status == "completed" else "failure" if entry.status.ends else "error"


def case_of(entry: TaskEntry, conversation: str, still: str, last_rows: LastRows) -> Case:
    """The `testcase` of one task of `conversation`; `still` says when a running task was seen."""
    name = first_line(f"{number_of(entry)} {entry.goal or '(no goal recorded)'}", MESSAGE_WIDTH)
    kind = kind_of(entry)
    usage = usage_line(entry.usage)  # the proven usage, `show`'s header line
    if kind == "pass":
        return Case(name, conversation, entry.duration_seconds, out=usage)
    facts = [
        f"{label}: {value}"
        for label, value in (
            ("status", entry.status),
            ("error", entry.error),
            ("summary", entry.summary),
            ("child session", entry.child_session_id),
            ("delegation", entry.delegation_id),
            ("subagent", entry.subagent_id),
            ("result source", entry.result_source),
        )
        if value
    ]
    if kind == "failure":
        message = first_line(entry.error or entry.summary or entry.status, MESSAGE_WIDTH)
    else:
        message = still if entry.status == "running" else f"no outcome known ({entry.status})"
    text = "\n".join([*facts, usage] if usage else facts)
    out = last_rows(entry, conversation)
    return Case(name, conversation, entry.duration_seconds, kind, entry.status, message, text, out)


def suites_of(
    parent_id: str, tasks: Sequence[TaskEntry], still: str, last_rows: LastRows
) -> list[tuple[str, list[Case]]]:
    """(conversation, its cases): the parent's first, then each nested conversation, depth first."""
    out = [(parent_id, [case_of(e, parent_id, still, last_rows) for e in tasks])]
    for entry in tasks:
        if entry.children and entry.child_session_id:
            out += suites_of(entry.child_session_id, entry.children, still, last_rows)
    return out


def failed_run(parent_id: str, code: str, message: str) -> Case:
    return Case(
        f"read {parent_id}", parent_id, None, "error", code, first_line(message, MESSAGE_WIDTH), message
    )


def last_rows_text(read: Transcript | Unread) -> str:
    """A task's `system-out`: its child's last rows as piped `show` prints them, or why none were read."""
    if isinstance(read, Unread):
        return f"transcript not read: {read.message}\n"
    if read.failure is not None and not read.rows:
        return f"transcript could not be read: {read.failure.message}\n"
    rows = read.rows[-LAST_ROWS:]
    head = f"the last {len(rows)} of {len(read.rows)} rows read of child session {read.child_id}"
    if read.failure is not None:
        head += f" (the read stopped: {read.failure.message})"
    return f"{head}:\n\n" + rows_text(rows, View(), Segments(read.doc.task if read.doc else None))


def document(suites: Sequence[tuple[str, Sequence[Case]]]) -> str:
    """The XML document of `suites`, with its declaration (counters counted from the cases)."""
    root = ET.Element("testsuites", name="hermes-task recover")
    totals: Counter[str] = Counter()
    for conversation, cases in suites:
        kinds = Counter(c.kind for c in cases)
        counts = {"tests": len(cases), "failures": kinds["failure"], "errors": kinds["error"]}
        totals.update(counts)
        names = {key: str(value) for key, value in counts.items()}
        attributes = {"name": xml_text(clean_line(conversation)), **names, "skipped": "0"}
        suite = ET.SubElement(root, "testsuite", attributes)
        for case in cases:
            classname = xml_text(clean_line(case.classname))
            element = ET.SubElement(suite, "testcase", name=xml_text(case.name), classname=classname)
            if case.time is not None and math.isfinite(case.time):
                element.set("time", f"{case.time if case.time > 0 else 0.0:.3f}")  # never -0.000
            if case.kind != "pass":
                kind_type = xml_text(clean_line(case.type))
                outcome = ET.SubElement(element, case.kind, message=xml_text(case.message), type=kind_type)
                outcome.text = xml_text(case.text)
            if case.out is not None:
                ET.SubElement(element, "system-out").text = xml_text(case.out)
    for key in ("tests", "failures", "errors"):
        root.set(key, str(totals[key]))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
