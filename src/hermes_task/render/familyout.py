"""What `follow --parent` prints: every task's rows, each line prefixed with the task's number.

On a terminal or piped, each row is painted as `follow` paints it, but never as Markdown (so
lines can be prefixed) and on a terminal wrapped to the width left after the prefix (a long
line continues under the row's indent, never at column 0); every line of it gets
`NUMBER │ `, in a colour that is a pure function of the number (stable across runs, as
stern does); task news (a status change, a task without a child id, a child's warning or
failure, a child not read: its gap) go to stderr with the same prefix; a task's status line
names its child session, whole, the first time it is known. With
`--json`, NDJSON: `task` events as `recover --watch` writes them, `row` events that carry
`task: {number, child_session_id}`, `warning`/`error` events whose message names the task, and
`result` last. The prefix and messages use only sanitised text.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence

from rich.console import Console
from rich.text import Text

from hermes_task.core.documents import Row, TaskEntry, WarningItem
from hermes_task.core.sanitize import clean_line
from hermes_task.core.ui_strings import STATUS_LABELS, UNAVAILABLE
from hermes_task.failures import HermesError
from hermes_task.reading.polling import Outcome
from hermes_task.render.rows import Target, View, gap_text, result_line, row_text, row_view
from hermes_task.render.terminal import Painter, width_of
from hermes_task.render.watchout import Notes, task_name

PALETTE = ("cyan", "magenta", "green", "yellow", "blue", "bright_cyan", "bright_magenta", "bright_green")
SGR = {"cyan": 36, "magenta": 35, "green": 32, "yellow": 33, "blue": 34}
SGR |= {f"bright_{name}": code + 60 for name, code in list(SGR.items())}
MIN_ROOM = 20  # the narrowest a prefixed row is painted, however narrow the terminal

Write = Callable[[str], None]


def colour_of(number: str) -> str:
    """A stable colour for a task number (crc32, not Python's salted hash)."""
    return PALETTE[zlib.crc32(number.encode()) % len(PALETTE)]


class TextFamily(Notes):
    """Prefixed rows on stdout, task news on stderr."""

    def __init__(self, out: Target, err: Callable[[], Console], interval: float) -> None:
        super().__init__(err, interval)
        self.out = out
        self.statuses: dict[str, str] = {}
        self.children: dict[str, str] = {}  # task number -> the child session id said
        self.gaps: dict[str, str] = {}

    def _prefix(self, entry: TaskEntry) -> Text:
        return Text(f"{task_name(entry)} │ ", style=colour_of(entry.number or "?"))

    def task(self, entry: TaskEntry) -> None:
        key = entry.number or ""
        child = entry.child_session_id
        if self.statuses.get(key) != entry.status or (child and self.children.get(key) != child):
            self.statuses[key] = entry.status
            line = self._prefix(entry)
            line.append(STATUS_LABELS.get(entry.status, entry.status))
            if child and self.children.get(key) != child:  # the session to open: said once, whole
                self.children[key] = child
                line.append(f" · child {clean_line(child)}")
            outcome = result_line(entry)
            if entry.terminal and outcome:
                line.append(f" · {outcome}")
            self.err().print(line)
        if entry.gap and self.gaps.get(key) != entry.gap:
            self.gaps[key] = entry.gap  # a child that was not proven or could not be read
            line = self._prefix(entry)
            line.append(gap_text(entry), style="dim")
            self.err().print(line)

    def tasks(self, entries: Sequence[TaskEntry]) -> None:
        pass

    def unavailable(self, entry: TaskEntry) -> None:
        line = self._prefix(entry)
        reason = UNAVAILABLE.get(entry.unavailable_reason or "", "no child session id is known")
        line.append(f"rows unavailable: {reason}", style="dim")
        self.err().print(line)

    def rows(self, rows: Sequence[Row], entry: TaskEntry | None = None) -> None:
        assert entry is not None  # follow --parent tags every row with its task
        out = self.out
        prefix = f"{task_name(entry)} │ "
        room = None if out.width is None else max(out.width - width_of(prefix), MIN_ROOM)
        painter = Painter(color=out.color, width=room, markdown=False)
        bare = prefix.rstrip(" ") if out.tty else prefix  # an empty line ends in no space
        if out.color:
            code = SGR[colour_of(entry.number or "?")]
            prefix, bare = (f"\x1b[{code}m{text}\x1b[0m" for text in (prefix, bare))
        lines = []
        for row in rows:
            view = row_view(row, View())
            for line in (row_text(view) if out.plain else painter.row(view)).split("\n"):
                lines.append(f"{prefix}{line}\n" if line else f"{bare}\n")
        out.write("".join(lines))

    def child_warning(self, entry: TaskEntry, item: WarningItem) -> None:
        self.note(f"{task_name(entry)} │ warning: ", item.message, "bold yellow")

    def child_error(self, entry: TaskEntry, error: HermesError, *, retrying: bool) -> None:
        label = "retrying: " if retrying else "error: "
        self.note(f"{task_name(entry)} │ {label}", error.message, "yellow")

    def result(self, outcome: Outcome, entries: Sequence[TaskEntry]) -> None:
        line = self.ending(outcome, entries)
        if line:
            self.note("", line, "dim")
