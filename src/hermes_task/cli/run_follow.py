"""`follow CHILD`'s work: print each new row of a delegated task once, until the task ends
(`cli/follow.py` declares the command; `follow --parent` is `watch.py`'s).

The loop is `hermes_task.reading.polling.Follower`; this module wires it to the terminal (rows on
stdout, notes on stderr, append-only, no redraw, no spinner) or to NDJSON events (one per
line, flushed per line; the stream always ends with a `result` event, also on failure).
Waiting between reads also watches stdout: a closed pipe ends the follow quietly even while
nothing is printed.
"""

from __future__ import annotations

from collections.abc import Sequence

from hermes_task.cli.common import Common, RoleName
from hermes_task.cli.endings import flushed, stderr_line
from hermes_task.cli.quiet import dropped
from hermes_task.cli.session import Session
from hermes_task.cli.shell import run
from hermes_task.cli.waiting import idle_sleep
from hermes_task.core.documents import Row, TaskInfo, WarningItem
from hermes_task.core.projection import RowFilter
from hermes_task.core.sanitize import check_id, clean_line
from hermes_task.failures import Code, HermesError
from hermes_task.reading.polling import Follower, Outcome, PollConfig
from hermes_task.reading.reader import TaskReader
from hermes_task.render.rows import Segments, View, plural, rows_text
from hermes_task.render.watchout import JsonEvents


class TerminalReporter:
    """Rows on stdout as they arrive (the plain or the terminal painter, as `show`); warnings,
    retries and the ending on stderr."""

    def __init__(
        self, session: Session, interval: float, root: str = "", view: dict[str, bool] | None = None
    ) -> None:
        common = session.common
        self.common = common
        self.env = common.env
        self.out = session.target
        flags = view or {}
        self.view = View(flags.get("reasoning", False), flags.get("full", False), flags.get("utc", False))
        self.interval = interval
        self.tip: str | None = None
        self.root = root  # the CHILD_ID as given, until the first read names the task
        self.count = 0
        self.segments = Segments(None)  # where rows move to a newer segment, once the task is known
        self.quiet = common.quiet

    def _note(self, prefix: str, text: str, style: str) -> None:
        stderr_line(self.common, prefix + text, style)

    def state(self, task: TaskInfo) -> None:
        self.root = task.root_id
        self.segments = Segments(task, self.segments.newest)
        if self.tip is None and self.env.isatty(self.env.stderr):
            self._note("following ", f"{clean_line(task.root_id)} (Ctrl-C stops)", "dim")
        elif self.tip is not None and task.tip_id != self.tip:
            self._note(
                "note: ", f"the task continues in a newer, proven segment {clean_line(task.tip_id)}", "dim"
            )
        self.tip = task.tip_id

    def warning(self, item: WarningItem) -> None:
        if not dropped(self.quiet, item.code):
            self._note("warning: ", item.message, "bold yellow")

    def rows(self, rows: Sequence[Row]) -> None:
        if self.out.plain:
            self.env.write_stdout(rows_text(rows, self.view, self.segments))
        else:
            from hermes_task.render import terminal_rows  # lazy: rich's cell widths, only on a terminal

            terminal_rows.rows(self.out, rows, self.view, self.segments)
        self.count += len(rows)

    def error(self, error: HermesError, *, retrying: bool, delay: float | None) -> None:
        message = error.message
        if retrying:
            when = f"next read in {delay:.0f}s" if delay is not None else f"polling every {self.interval:g}s"
            self._note("retrying: ", f"{message}; {when}", "yellow")
            return
        self._note("error: ", message, "bold red")
        hint = error.hint
        if hint:
            self._note("hint: ", hint, "dim")

    def result(self, outcome: Outcome) -> None:
        root = clean_line(self.root)
        if outcome.ending == "ended":
            reason = f" ({clean_line(outcome.end_reason)})" if outcome.end_reason else ""
            self._note("", f"task {root} ended{reason} · {plural(self.count, 'row')}", "dim")
        elif outcome.ending == "partial_history":
            self._note("", "following stopped on partial history; pass --tip NEWER_ID when known", "dim")
        elif outcome.ending == "timeout":
            self._note("", f"--timeout ran out; task {root} is still {outcome.state}", "dim")


def run_follow(
    common: Common,
    *,
    child_id: str,
    tip: Sequence[str] | None = None,
    no_hint: bool = False,
    interval: float = 2.0,
    exit_status: bool = False,
    timeout: float | None = None,
    start_timeout: float = 60.0,
    reasoning: bool = False,
    full: bool = False,
    utc: bool = False,
    tail: int | None = None,
    role: Sequence[RoleName] | None = None,
) -> None:
    """Follow the task `child_id` until it ends (`hermes-task follow --help`)."""
    env = common.env
    session = Session(common)
    config = PollConfig(
        interval=interval,
        timeout=timeout,
        start_timeout=start_timeout,
        exit_status=exit_status,
        rows=RowFilter.of(role, tail),
    )
    reporter: JsonEvents | TerminalReporter = (
        JsonEvents(env.write_stdout, flushed(env.stderr))
        if common.json
        else TerminalReporter(session, interval, child_id, {"reasoning": reasoning, "full": full, "utc": utc})
    )

    def report(error: HermesError, status: int) -> None:
        """A failure outside the loop's own handling: its error event (or line), then `result`."""
        interrupted = error.code is Code.INTERRUPTED
        if not interrupted:
            reporter.error(error, retrying=False, delay=None)
        if common.json:
            if interrupted:
                reporter.result(Outcome("interrupted", "unknown", None, status, None))
            else:
                reporter.result(Outcome("failed", "unknown", None, status, error))

    def body(session: Session) -> None:
        anchor = check_id(child_id, what="CHILD_ID")
        candidates = [check_id(t, what="--tip") for t in tip or []]
        with session.reading() as (client, hints):
            reader = TaskReader(client, anchor, tips=candidates, hint=not no_hint, store=hints)
            follower = Follower(
                reader,
                reporter,
                config,
                clock=env.clock,
                sleep=env.sleep or idle_sleep(env.stdout),
                debug=session.debug,
            )
            outcome = follower.run()
        raise SystemExit(outcome.exit_code)

    run(session, body, report=report)
