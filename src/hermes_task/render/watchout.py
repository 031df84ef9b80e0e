"""What `recover --watch` prints: NDJSON events, appended task lines, or a table redrawn in place.

Three `WatchReporter`s (reading/watch.py), chosen by the CLI:
- `JsonWatch`: one event per line, flushed per line: `task` (the whole task object) when a
  task appears or changes, `warning`, `error`, and `result` last (state, end_reason = the
  parent's verdict when every task ended, exit_code, and the tasks that ended unreported);
- `LinesWatch` (stdout not a terminal): one tab-separated task line (`plain.task_line`) each
  time a task appears or its status changes, nothing else on stdout;
- `LiveWatch` (a terminal): the `recover` table redrawn in place with a dim state line;
  warnings and retries on stderr above it.
Every backend string goes through the same sanitising renderers as `recover`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rich.console import Console
from rich.text import Text

from hermes_task.core.documents import TaskEntry, TasksDoc, WarningItem
from hermes_task.core.events import ErrorEvent, FollowEvent, ResultEvent, WarningEvent, task_event
from hermes_task.core.messages import RECOVER
from hermes_task.core.sanitize import clean_line
from hermes_task.core.verdict import summarize, unreported
from hermes_task.failures import HermesError
from hermes_task.reading.watch import WatchOutcome
from hermes_task.render.jsontext import event
from hermes_task.render.plain import task_line
from hermes_task.render.rows import plural

Write = Callable[[str], None]


class JsonWatch:
    """NDJSON events (schema: `hermes-task schema events`)."""

    def __init__(self, write: Write, err: Write) -> None:
        self.write = write
        self.err = err

    def _event(self, payload: FollowEvent) -> None:
        self.write(event(payload))

    def task(self, entry: TaskEntry) -> None:
        self._event(task_event(entry))

    def tasks(self, entries: Sequence[TaskEntry]) -> None:
        pass

    def warning(self, item: WarningItem) -> None:
        self._event(WarningEvent(code=item.code, message=item.message))

    def error(self, error: HermesError, *, retrying: bool, delay: float | None) -> None:
        message = error.message
        retryable = True if retrying else error.retryable
        self._event(ErrorEvent(code=error.code.value, message=message, retryable=retryable))
        if not retrying:
            self.err(f"error: {message}\n")

    def result(self, outcome: WatchOutcome, entries: Sequence[TaskEntry]) -> None:
        self._event(
            ResultEvent(
                state=outcome.state,
                end_reason=outcome.end_reason,
                exit_code=outcome.exit_code,
                last_read_age=outcome.last_read_age,
                unreported=unreported(entries),
            )
        )


class Notes:
    """Warnings, retries and the ending as lines on stderr."""

    def __init__(self, err: Callable[[], Console], interval: float) -> None:
        self.err = err
        self.interval = interval

    def note(self, prefix: str, text: str, style: str) -> None:
        line = Text(prefix, style=style)
        line.append(text)
        self.err().print(line)

    def warning(self, item: WarningItem) -> None:
        self.note("warning: ", item.message, "bold yellow")

    def error(self, error: HermesError, *, retrying: bool, delay: float | None) -> None:
        message = error.message
        if retrying:
            when = f"next read in {delay:.0f}s" if delay is not None else f"polling every {self.interval:g}s"
            self.note("retrying: ", f"{message}; {when}", "yellow")
        else:
            self.note("error: ", message, "bold red")

    def ending(self, outcome: WatchOutcome, entries: Sequence[TaskEntry]) -> str | None:
        summary = summarize(entries)
        counts = f"{summary.terminal} of {plural(summary.total, 'task')} terminal"
        if outcome.ending == "ended":
            return f"every task ended ({clean_line(outcome.end_reason or '')}) · {counts}"
        if outcome.ending == "timeout":
            return f"--timeout ran out · {counts}"
        if outcome.ending == "interrupted":
            return f"watch stopped · {counts}"
        return None

    def closing(self, outcome: WatchOutcome, entries: Sequence[TaskEntry]) -> str | None:
        """The `ending` line, naming the tasks that ended with no outcome known to the parent."""
        line = self.ending(outcome, entries)
        numbers = unreported(entries)
        if line and numbers:
            line += " · " + RECOVER["unreported"].format(numbers=", ".join(clean_line(n) for n in numbers))
        return line


class LinesWatch(Notes):
    """Piped: a task line when a task appears or its status changes."""

    def __init__(self, write: Write, err: Callable[[], Console], interval: float) -> None:
        super().__init__(err, interval)
        self.write = write
        self.statuses: dict[str, str] = {}

    def task(self, entry: TaskEntry) -> None:
        key = entry.number or ""
        if self.statuses.get(key) != entry.status:
            self.statuses[key] = entry.status
            self.write(task_line(entry) + "\n")

    def tasks(self, entries: Sequence[TaskEntry]) -> None:
        pass

    def result(self, outcome: WatchOutcome, entries: Sequence[TaskEntry]) -> None:
        line = self.closing(outcome, entries)
        if line:
            self.note("", line, "dim")


class LiveWatch(Notes):
    """A terminal: the task table redrawn in place (rich `Live`), a state line under it."""

    def __init__(self, out: Console, err: Callable[[], Console], parent_id: str, interval: float) -> None:
        from rich.live import Live

        super().__init__(err, interval)
        self.parent_id = parent_id
        self.entries: Sequence[TaskEntry] = []
        self.live = Live(console=out, auto_refresh=False, transient=False, redirect_stdout=False)
        self.live.start()
        self._draw(f"watching {clean_line(parent_id)} every {interval:g}s (Ctrl-C stops)")

    def _draw(self, note: str) -> None:
        from hermes_task.render.terminal import tasks_renderable

        doc = TasksDoc(parent_id=self.parent_id, tasks=list(self.entries), summary=summarize(self.entries))
        self.live.update(tasks_renderable(doc, note=note), refresh=True)

    def task(self, entry: TaskEntry) -> None:
        pass

    def tasks(self, entries: Sequence[TaskEntry]) -> None:
        self.entries = list(entries)
        self._draw(f"watching {clean_line(self.parent_id)} every {self.interval:g}s (Ctrl-C stops)")

    def result(self, outcome: WatchOutcome, entries: Sequence[TaskEntry]) -> None:
        self.entries = list(entries)
        self._draw(self.closing(outcome, entries) or "")
        self.live.stop()
