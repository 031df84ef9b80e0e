"""`recover --junit FILE`: a parent's tasks as a JUnit XML report, the file GitHub, GitLab,
Jenkins and Buildkite render (pure; xml.etree writes it).

The document is the common JUnit schema's shape (Jenkins/Ant `junit-10.xsd`): `testsuites`
holding one `testsuite` per conversation (the parent; with `--recursive`, each nested
conversation too), its `name` the conversation's session id, with one `testcase` per task:
`name` its number and goal, `classname` the conversation, `time` its reported duration (left
out when none, or no finite one, was reported). A completed task passes. A task that failed, errored, timed out,
was interrupted or cancelled, or ended with no outcome reported to the parent
(`ended_unreported`: it will not run again and is not known to have succeeded; `--exit-status`
counts it as 8) is a `failure` whose `type` is its status and whose `message` is the first line
of its error or summary; the text holds the whole error and summary and its ids, and
`system-out` the last rows of its child's transcript (or why they were not read). A task still
running (or of unknown status) when the report was made is an `error` (`type` its status, the
`message` saying when: when read, when `--timeout` ran out, when the watch was stopped or
failed), with its last rows too. A run that failed itself (the parent could not be read, the
watch failed) adds a `testcase` named after that read, an `error` whose `type` is the failure's
code. Every counter (`tests`, `failures`, `errors`, `skipped`) is counted from the cases. A
task with a proven usage carries it as `show`'s header line (`usage: … in · … out · …`): in a
passing testcase's `system-out`, in a failure's or error's text.

Backend text is hostile: every string is stripped of control sequences (`clean`) and of the
characters XML 1.0 forbids (U+FFFE, U+FFFF; `clean` already spelled out the C0 and C1 controls
and lone surrogates), then escaped by ElementTree.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from typing import Literal

from msgspec import Struct

from hermes_task.core.delegations import TERMINAL_STATUSES
from hermes_task.core.documents import TaskEntry
from hermes_task.core.sanitize import clean, clean_line
from hermes_task.reading.taskread import ChildRead, Unread
from hermes_task.render.rows import Segments, View, number_of, rows_text, usage_line

LAST_ROWS = 20
MESSAGE_WIDTH = 200
NAME_WIDTH = 200
_NOT_XML = re.compile("[\ufffe\uffff]")
Kind = Literal["pass", "failure", "error"]
# The system-out of a task that did not pass: given the task and its conversation.
LastRows = Callable[[TaskEntry, str], str]


class Case(Struct, frozen=True):
    """One `testcase`: its attributes, and for a failure or error its type, message, text and
    system-out."""

    name: str
    classname: str
    time: float | None
    kind: Kind = "pass"
    type: str = ""
    message: str = ""
    text: str = ""
    out: str | None = None


def xml_text(text: str) -> str:
    """`text` as XML 1.0 may carry it (module docstring), line breaks and tabs kept."""
    return _NOT_XML.sub(lambda m: f"<U+{ord(m.group()):04X}>", clean(text))


def _line(text: str, width: int) -> str:
    first = clean_line(text.strip().split("\n", 1)[0])
    return first if len(first) <= width else first[: width - 1] + "…"


def kind_of(entry: TaskEntry) -> Kind:
    """pass (completed), failure (any other end, `ended_unreported` too), error (not ended)."""
    if entry.status == "completed":
        return "pass"
    if entry.status in TERMINAL_STATUSES or entry.status == "ended_unreported":
        return "failure"
    return "error"


def case_of(entry: TaskEntry, conversation: str, still: str, last_rows: LastRows) -> Case:
    """The `testcase` of one task of `conversation`; `still` says when a running task was seen."""
    name = _line(f"{number_of(entry)} {entry.goal or '(no goal recorded)'}", NAME_WIDTH)
    kind = kind_of(entry)
    usage = usage_line(entry.usage)  # the proven usage, `show`'s header line
    if kind == "pass":
        return Case(name, conversation, entry.duration_seconds, out=usage)
    facts = [f"status: {entry.status}"]
    if entry.error:
        facts.append(f"error: {entry.error}")
    if entry.summary:
        facts.append(f"summary: {entry.summary}")
    facts += [
        f"{label}: {value}"
        for label, value in (
            ("child session", entry.child_session_id),
            ("delegation", entry.delegation_id),
            ("subagent", entry.subagent_id),
            ("result source", entry.result_source),
        )
        if value
    ]
    if usage:
        facts.append(usage)
    if kind == "failure":
        message = _line(entry.error or entry.summary or entry.status, MESSAGE_WIDTH)
    else:
        message = still if entry.status == "running" else f"no outcome known ({entry.status})"
    out = last_rows(entry, conversation)
    return Case(
        name, conversation, entry.duration_seconds, kind, entry.status, message, "\n".join(facts), out
    )


def suites_of(
    parent_id: str, tasks: Sequence[TaskEntry], still: str, last_rows: LastRows
) -> list[tuple[str, list[Case]]]:
    """(conversation, its cases): the parent's first, then each nested conversation, depth first."""
    out: list[tuple[str, list[Case]]] = []

    def visit(conversation: str, entries: Sequence[TaskEntry]) -> None:
        out.append((conversation, [case_of(e, conversation, still, last_rows) for e in entries]))
        for entry in entries:
            if entry.children and entry.child_session_id:
                visit(entry.child_session_id, entry.children)

    visit(parent_id, tasks)
    return out


def failed_run(parent_id: str, code: str, message: str) -> Case:
    """The `testcase` of a run that failed itself: reading `parent_id` (module docstring)."""
    return Case(f"read {parent_id}", parent_id, None, "error", code, _line(message, MESSAGE_WIDTH), message)


def last_rows_text(read: ChildRead | Unread, count: int = LAST_ROWS) -> str:
    """A task's `system-out`: the last `count` rows read of its child, as piped `show` prints
    them, after a line saying which; or why none were read."""
    if isinstance(read, Unread):
        return f"transcript not read: {read.message}\n"
    if read.failure is not None and not read.rows:
        return f"transcript could not be read: {read.failure.message}\n"
    rows = read.rows[-count:]
    head = f"the last {len(rows)} of {len(read.rows)} rows read of child session {read.child_id}"
    if read.failure is not None:
        head += f" (the read stopped: {read.failure.message})"
    segments = Segments(read.doc.task if read.doc is not None else None)
    return f"{head}:\n\n" + rows_text(rows, View(), segments)


def document(suites: Sequence[tuple[str, Sequence[Case]]]) -> str:
    """The XML document of `suites` (module docstring), with its declaration."""
    root = ET.Element("testsuites", name="hermes-task recover")
    totals = {"tests": 0, "failures": 0, "errors": 0}
    for conversation, cases in suites:
        counts = {
            "tests": len(cases),
            "failures": sum(1 for c in cases if c.kind == "failure"),
            "errors": sum(1 for c in cases if c.kind == "error"),
        }
        for key, value in counts.items():
            totals[key] += value
        attributes = {"name": xml_text(clean_line(conversation))}
        attributes.update({key: str(value) for key, value in counts.items()}, skipped="0")
        suite = ET.SubElement(root, "testsuite", attributes)
        for case in cases:
            _case(suite, case)
    for key, value in totals.items():
        root.set(key, str(value))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _case(suite: ET.Element, case: Case) -> None:
    element = ET.SubElement(
        suite, "testcase", name=xml_text(case.name), classname=xml_text(clean_line(case.classname))
    )
    if case.time is not None and math.isfinite(case.time):
        element.set("time", f"{case.time if case.time > 0 else 0.0:.3f}")  # never -0.000
    if case.kind != "pass":
        outcome = ET.SubElement(
            element, case.kind, message=xml_text(case.message), type=xml_text(clean_line(case.type))
        )
        outcome.text = xml_text(case.text)
    if case.out is not None:
        ET.SubElement(element, "system-out").text = xml_text(case.out)


__all__ = ["Case", "document", "failed_run", "kind_of", "last_rows_text", "suites_of", "xml_text"]
