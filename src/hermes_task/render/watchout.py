"""What the live commands (`follow`, `recover --watch`, `follow --parent`) print as they read:
`JsonEvents`, their one NDJSON writer, and the text reporters (sanitised by the renderers they call).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

from msgspec.structs import asdict
from rich.console import Console
from rich.text import Text

from hermes_task.core.documents import Row, TaskEntry, TaskInfo, TasksDoc, WarningItem
from hermes_task.core.events import (
    ErrorEvent,
    FollowEvent,
    ResultEvent,
    RowEvent,
    StateEvent,
    TaskRef,
    WarningEvent,
    task_event,
)
from hermes_task.core.sanitize import clean_line
from hermes_task.core.ui_strings import RECOVER, UNAVAILABLE
from hermes_task.core.verdict import summarize, unreported
from hermes_task.failures import HermesError
from hermes_task.reading.polling import Outcome
from hermes_task.render import Target, terminal_rows
from hermes_task.render.jsontext import event
from hermes_task.render.rows import (
    PLAIN,
    Segments,
    View,
    gap_text,
    number_of,
    plural,
    result_line,
    row_view,
    task_line,
)
from hermes_task.render.terminal_rows import Painter, sgr, width_of

Write = Callable[[str], None]


def retry_text(error: HermesError, delay: float | None, interval: float) -> str:
    when = f"next read in {delay:.0f}s" if delay is not None else f"polling every {interval:g}s"
    return f"{error.message}; {when}"


class JsonEvents:
    """Each event of core/events.py on a line (docs/json.md); a final failure also gets a stderr line."""

    def __init__(self, write: Write, err: Write) -> None:
        self.write = write
        self.err = err

    def _event(self, payload: FollowEvent) -> None:  # livescreen's EventFeed posts it instead
        self.write(event(payload))

    def state(self, task: TaskInfo) -> None:
        self._event(StateEvent(**asdict(task)))

    def task(self, entry: TaskEntry) -> None:
        self._event(task_event(entry))

    def tasks(self, entries: Sequence[TaskEntry]) -> None:
        pass  # each changed task was its own `task` event

    def unavailable(self, entry: TaskEntry) -> None:
        pass  # its `task` event already says `unavailable_reason`

    def rows(self, rows: Sequence[Row], entry: TaskEntry | None = None) -> None:
        assert entry is None or entry.child_session_id is not None  # rows come only from a known child
        ref = None if entry is None else TaskRef.of(entry)
        for row in rows:
            self._event(RowEvent(**asdict(row), task=ref))

    def warning(self, item: WarningItem) -> None:
        self._event(WarningEvent(code=item.code, message=item.message))

    def child_warning(self, entry: TaskEntry, item: WarningItem) -> None:
        message = f"task {clean_line(number_of(entry))}: {item.message}"
        self.warning(WarningItem(code=item.code, message=message))

    def error(self, error: HermesError, *, retrying: bool, delay: float | None) -> None:
        retryable = retrying or error.retryable
        self._event(ErrorEvent(code=error.code.value, message=error.message, retryable=retryable))
        if not retrying:
            self.err(f"error: {error.message}\n")

    def child_error(self, entry: TaskEntry, error: HermesError, *, retrying: bool) -> None:
        message = f"task {clean_line(number_of(entry))}: {error.message}"
        self._event(ErrorEvent(code=error.code.value, message=message, retryable=retrying))

    def result(self, outcome: Outcome, entries: Sequence[TaskEntry] | None = None) -> None:
        result = ResultEvent(
            state=outcome.state,
            end_reason=outcome.end_reason,
            exit_code=outcome.exit_code,
            last_read_age=outcome.last_read_age,
            unreported=None if entries is None else unreported(entries),
        )
        self._event(result)


class Notes:
    """The watches' base: warnings, retries and the ending as lines on stderr."""

    naming_unreported = True  # the ending names the tasks that ended with no outcome known

    def __init__(self, err: Callable[[], Console], interval: float) -> None:
        self.err = err
        self.interval = interval
        self.statuses: dict[str, str] = {}

    def changed(self, entry: TaskEntry) -> bool:
        """Whether `entry` is new or its status changed since the last call (then remembered)."""
        key = entry.number or ""
        if self.statuses.get(key) == entry.status:
            return False
        self.statuses[key] = entry.status
        return True

    def task(self, entry: TaskEntry) -> None:
        pass

    def tasks(self, entries: Sequence[TaskEntry]) -> None:
        pass

    def note(self, prefix: str, text: str, style: str, text_style: str | None = None) -> None:
        line = Text(prefix, style=style)
        line.append(text, style=text_style)
        self.err().print(line)

    def warning(self, item: WarningItem) -> None:
        self.note("warning: ", item.message, "bold yellow")

    def error(self, error: HermesError, *, retrying: bool, delay: float | None) -> None:
        if retrying:
            self.note("retrying: ", retry_text(error, delay, self.interval), "yellow")
        else:
            self.note("error: ", error.message, "bold red")

    def ending(self, outcome: Outcome, entries: Sequence[TaskEntry]) -> str | None:
        endings = {
            "ended": f"every task ended ({clean_line(outcome.end_reason or '')})",
            "timeout": "--timeout ran out",
            "interrupted": "watch stopped",
        }
        if outcome.ending not in endings:
            return None
        summary = summarize(entries)
        line = f"{endings[outcome.ending]} · {summary.terminal} of {plural(summary.total, 'task')} terminal"
        numbers = unreported(entries) if self.naming_unreported else []
        if numbers:
            line += " · " + RECOVER["unreported"].format(numbers=", ".join(clean_line(n) for n in numbers))
        return line

    def result(self, outcome: Outcome, entries: Sequence[TaskEntry]) -> None:
        if line := self.ending(outcome, entries):
            self.note("", line, "dim")


class LinesWatch(Notes):
    """`recover --watch` piped: a task line when a task appears or its status changes."""

    def __init__(self, write: Write, err: Callable[[], Console], interval: float) -> None:
        super().__init__(err, interval)
        self.write = write

    def task(self, entry: TaskEntry) -> None:
        if self.changed(entry):
            self.write(task_line(entry) + "\n")


class LiveWatch(Notes):
    """`recover --watch` on a terminal: the task table redrawn in place (rich `Live`) from the
    first read (no tasks read is not zero tasks), a state line under it, notes above it."""

    def __init__(self, out: Console, err: Callable[[], Console], parent_id: str, interval: float) -> None:
        super().__init__(err, interval)
        self.out = out
        self.parent_id = parent_id
        self.entries: Sequence[TaskEntry] = []
        self.read = False  # the first read happened: there is a table (maybe of no task) to draw
        self.live: Any = None  # rich `Live`, from the first read until the ending

    def _renderable(self, note: str) -> Any:
        from hermes_task.render.terminal import tasks_renderable  # lazy: the table, only on a terminal

        doc = TasksDoc(parent_id=self.parent_id, tasks=list(self.entries), summary=summarize(self.entries))
        return tasks_renderable(doc, note=note)

    def note(self, prefix: str, text: str, style: str, text_style: str | None = None) -> None:
        live, self.live = self.live, None
        if live is not None:
            live.stop()  # `transient`: the region is erased, the note takes its place
        try:
            super().note(prefix, text, style, text_style)
        finally:
            if live is not None:
                self._open(live.renderable)  # and the table comes back below it

    def _open(self, renderable: Any) -> None:
        """A new live region below the cursor (a stopped `Live` started again would first
        erase as many lines as its last frame had: the notes now above it)."""
        from rich.live import Live  # lazy: rich.live, only on a terminal

        self.live = Live(
            renderable,
            console=self.out,
            auto_refresh=False,
            transient=True,
            redirect_stdout=False,
            redirect_stderr=False,  # stderr stays stderr: notes go above the region (`note`)
        )
        self.live.start(refresh=True)

    def tasks(self, entries: Sequence[TaskEntry]) -> None:
        self.entries, self.read = list(entries), True
        renderable = self._renderable(
            f"watching {clean_line(self.parent_id)} every {self.interval:g}s (Ctrl-C stops)"
        )
        if self.live is None:
            self._open(renderable)
        else:
            self.live.update(renderable, refresh=True)

    def result(self, outcome: Outcome, entries: Sequence[TaskEntry]) -> None:
        if not self.read:
            return super().result(outcome, entries)
        self.entries = list(entries)
        self.close(self.ending(outcome, entries))

    def close(self, last: str | None = None) -> None:
        """End the live display, however the command ends (the cursor it hid shown again):
        its last frame stays, the state line replaced by `last`. Safe to call again."""
        live, self.live = self.live, None
        if live is not None:
            live.update(self._renderable(last or ""))
            live.transient = False  # the last frame stays on the screen
            live.stop()


PALETTE = ("cyan", "magenta", "green", "yellow", "blue", "bright_cyan", "bright_magenta", "bright_green")
MIN_ROOM = 20  # the narrowest a prefixed row is painted, however narrow the terminal


def colour_of(number: str) -> str:
    """A stable colour for a task number, as stern does (crc32, not Python's salted hash)."""
    return PALETTE[zlib.crc32(number.encode()) % len(PALETTE)]


class TextFamily(Notes):
    """`follow --parent` as text: each task's rows and news, each line prefixed `NUMBER │ ` in its colour."""

    naming_unreported = False

    def __init__(self, out: Target, err: Callable[[], Console], interval: float) -> None:
        super().__init__(err, interval)
        self.out = out
        self.children: dict[str, str] = {}  # task number -> the child session id said
        self.gaps: dict[str, str] = {}

    def _say(self, entry: TaskEntry, text: str, style: str | None = None) -> None:
        self.note(f"{clean_line(number_of(entry))} │ ", text, colour_of(number_of(entry)), style)

    def task(self, entry: TaskEntry) -> None:
        key = entry.number or ""
        child = entry.child_session_id
        new_child = child and self.children.get(key) != child
        if self.changed(entry) or new_child:
            text = entry.status.label
            if child and new_child:  # the session to open: said once, whole
                self.children[key] = child
                text += f" · child {clean_line(child)}"
            outcome = result_line(entry)
            self._say(entry, f"{text} · {outcome}" if entry.terminal and outcome else text)
        if entry.gap and self.gaps.get(key) != entry.gap:
            self.gaps[key] = entry.gap  # a child that was not proven or could not be read
            self._say(entry, gap_text(entry), "dim")

    def unavailable(self, entry: TaskEntry) -> None:
        reason = UNAVAILABLE.get(entry.unavailable_reason or "", "no child session id is known")
        self._say(entry, f"rows unavailable: {reason}", "dim")

    def rows(self, rows: Sequence[Row], entry: TaskEntry | None = None) -> None:
        assert entry is not None  # follow --parent tags every row with its task
        out = self.out
        prefix = f"{clean_line(number_of(entry))} │ "
        room = None if out.width is None else max(out.width - width_of(prefix), MIN_ROOM)
        painter = PLAIN if out.plain else Painter(color=out.color, width=room, markdown=False)
        bare = prefix.rstrip(" ") if out.tty else prefix  # an empty line ends in no space
        if out.color:
            opened, closed = sgr(colour_of(number_of(entry)))
            prefix, bare = (opened + text + closed for text in (prefix, bare))
        lines = [line for row in rows for line in painter.row(row_view(row, View())).split("\n")]
        out.write("".join(f"{prefix}{line}\n" if line else f"{bare}\n" for line in lines))

    def child_warning(self, entry: TaskEntry, item: WarningItem) -> None:
        self.note(f"{clean_line(number_of(entry))} │ warning: ", item.message, "bold yellow")

    def child_error(self, entry: TaskEntry, error: HermesError, *, retrying: bool) -> None:
        label = "retrying: " if retrying else "error: "
        self.note(f"{clean_line(number_of(entry))} │ {label}", error.message, "yellow")


@dataclass
class TerminalReporter:
    """`follow CHILD` as text: rows on stdout as `show` paints them, the notes on stderr through `note`."""

    out: Target
    note: Callable[[str, str], None]
    shown: Callable[[str], bool]
    interval: float
    root: str = ""  # the CHILD_ID as given, until the first read names the task
    view: View = field(default_factory=View)
    _: KW_ONLY
    stderr_tty: bool = False
    tip: str | None = field(default=None, init=False)
    count: int = field(default=0, init=False)
    segments: Segments = field(default_factory=lambda: Segments(None), init=False)

    def state(self, task: TaskInfo) -> None:
        self.root = task.root_id
        self.segments = Segments(task, self.segments.newest)
        if self.tip is None and self.stderr_tty:
            self.note(f"following {clean_line(task.root_id)} (Ctrl-C stops)", "dim")
        elif self.tip is not None and task.tip_id != self.tip:
            self.note(f"note: the task continues in a newer, proven segment {clean_line(task.tip_id)}", "dim")
        self.tip = task.tip_id

    def warning(self, item: WarningItem) -> None:
        if self.shown(item.code):
            self.note(f"warning: {item.message}", "bold yellow")

    def rows(self, rows: Sequence[Row]) -> None:
        terminal_rows.rows(self.out, rows, self.view, self.segments, PLAIN if self.out.plain else None)
        self.count += len(rows)

    def error(self, error: HermesError, *, retrying: bool, delay: float | None) -> None:
        if retrying:
            self.note(f"retrying: {retry_text(error, delay, self.interval)}", "yellow")
            return
        self.note(f"error: {error.message}", "bold red")
        if error.hint:
            self.note(f"hint: {error.hint}", "dim")

    def result(self, outcome: Outcome) -> None:
        root = clean_line(self.root)
        if outcome.ending == "ended":
            reason = f" ({clean_line(outcome.end_reason)})" if outcome.end_reason else ""
            self.note(f"task {root} ended{reason} · {plural(self.count, 'row')}", "dim")
        elif outcome.ending == "partial_history":
            self.note("following stopped on partial history; pass --tip NEWER_ID when known", "dim")
        elif outcome.ending == "timeout":
            self.note(f"--timeout ran out; task {root} is still {outcome.state}", "dim")
