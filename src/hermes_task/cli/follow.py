"""`hermes-task follow`: print each new row of a delegated task once, until the task ends.

The loop is `hermes_task.reading.follow.Follower`; this module wires it to the terminal (rows on
stdout, notes on stderr, append-only, no redraw, no spinner) or to NDJSON events (one per
line, flushed per line; the stream always ends with a `result` event, also on failure).
Waiting between reads also watches stdout: a closed pipe ends the follow quietly even while
nothing is printed.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from hermes_task import cli
from hermes_task.cli import app

if TYPE_CHECKING:
    from hermes_task.core.documents import Row, TaskInfo, WarningItem
    from hermes_task.failures import HermesError
    from hermes_task.reading.follow import FollowConfig, Outcome


class JsonReporter:
    """NDJSON events of the contract, one per line, flushed per line."""

    def __init__(self, write: Callable[[str], None]) -> None:
        self.write = write

    def _event(self, payload: dict[str, Any]) -> None:
        from hermes_task.render.jsonout import event

        self.write(event(payload))

    def state(self, task: TaskInfo) -> None:
        from hermes_task.core.documents import to_json_dict

        self._event({"type": "state", **to_json_dict(task)})

    def warning(self, item: WarningItem) -> None:
        self._event({"type": "warning", "code": item.code, "message": item.message})

    def rows(self, rows: Sequence[Row]) -> None:
        from hermes_task.core.documents import to_json_dict

        for row in rows:
            self._event({"type": "row", **to_json_dict(row)})

    def error(self, error: HermesError, *, retrying: bool, delay: float | None) -> None:
        from hermes_task.core.messages import error_message

        message = error_message(error.code, error.detail)
        retryable = True if retrying else error.retryable
        self._event({"type": "error", "code": error.code.value, "message": message, "retryable": retryable})
        if not retrying:  # the final failure also gets its one human line
            sys.stderr.write(f"error: {message}\n")
            sys.stderr.flush()

    def result(self, outcome: Outcome) -> None:
        fields = ("state", "end_reason", "exit_code")
        self._event({"type": "result", **{name: getattr(outcome, name) for name in fields}})


class TerminalReporter:
    """Rows on stdout as they arrive; warnings, retries and the ending on stderr."""

    def __init__(self, opts: cli.Options, interval: float, root: str = "") -> None:
        self.out = cli.console(opts)
        self.err = cli.console(opts, stderr=True)
        self.markdown = cli._isatty(sys.stdout)
        self.interval = interval
        self.tip: str | None = None
        self.root = root  # the CHILD_ID as given, until the first read names the task
        self.count = 0

    def _note(self, prefix: str, text: str, style: str) -> None:
        from rich.text import Text

        line = Text(prefix, style=style)
        line.append(text)
        with self.err.capture() as captured:
            self.err.print(line)
        sys.stderr.write(captured.get())
        sys.stderr.flush()

    def state(self, task: TaskInfo) -> None:
        from hermes_task.core.sanitize import clean_line

        self.root = task.root_id
        if self.tip is None and cli._isatty(sys.stderr):
            self._note("following ", f"{clean_line(task.root_id)} (Ctrl-C stops)", "dim")
        elif self.tip is not None and task.tip_id != self.tip:
            self._note(
                "note: ", f"the task continues in a newer, proven segment {clean_line(task.tip_id)}", "dim"
            )
        self.tip = task.tip_id

    def warning(self, item: WarningItem) -> None:
        self._note("warning: ", item.message, "bold yellow")

    def rows(self, rows: Sequence[Row]) -> None:
        from hermes_task.render import terminal

        # Rendered to a string and written here: rich's own broken-pipe handler would exit 1.
        with self.out.capture() as captured:
            terminal.rows(self.out, rows, markdown=self.markdown, reasoning=False)
        _write(captured.get())
        self.count += len(rows)

    def error(self, error: HermesError, *, retrying: bool, delay: float | None) -> None:
        from hermes_task.core.messages import HINTS, error_message

        message = error_message(error.code, error.detail)
        if retrying:
            when = f"next read in {delay:.0f}s" if delay is not None else f"polling every {self.interval:g}s"
            self._note("retrying: ", f"{message}; {when}", "yellow")
            return
        self._note("error: ", message, "bold red")
        hint = HINTS.get(error.code)
        if hint:
            self._note("hint: ", hint, "dim")

    def result(self, outcome: Outcome) -> None:
        from hermes_task.core.sanitize import clean_line

        root = clean_line(self.root)
        if outcome.ending == "ended":
            reason = f" ({clean_line(outcome.end_reason)})" if outcome.end_reason else ""
            self._note("", f"task {root} ended{reason} · {self.count} rows", "dim")
        elif outcome.ending == "partial_history":
            self._note("", "following stopped on partial history; pass --tip NEWER_ID when known", "dim")
        elif outcome.ending == "timeout":
            self._note("", f"--timeout ran out; task {root} is still {outcome.state}", "dim")


def _write(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def idle_sleep(stream: Any) -> Callable[[float], None]:
    """A sleep that returns early with BrokenPipeError once `stream`'s reader has gone (poll
    reports POLLERR/POLLHUP on the write end of a closed pipe); plain sleep otherwise."""
    import select

    try:
        fd = stream.fileno()
        poller = select.poll()
    except (AttributeError, OSError, ValueError):
        return time.sleep
    poller.register(fd, 0)  # no events asked: only POLLERR, POLLHUP and POLLNVAL come back
    gone = select.POLLERR | select.POLLHUP | select.POLLNVAL

    def sleep(seconds: float) -> None:
        deadline = time.monotonic() + max(0.0, seconds)
        while True:
            left = deadline - time.monotonic()
            if any(ev & gone for _fd, ev in poller.poll(max(0, math.ceil(left * 1000)))):
                raise BrokenPipeError("stdout was closed")
            if time.monotonic() >= deadline:
                return

    return sleep


def _stop(opts: cli.Options, err: HermesError, reporter: JsonReporter | TerminalReporter) -> NoReturn:
    """A failure before the loop started: error event (or line) and a result event."""
    from hermes_task.reading.follow import Outcome

    reporter.error(err, retrying=False, delay=None)
    if opts.json:
        reporter.result(Outcome("failed", "unknown", None, int(err.exit_status), err))
    raise typer.Exit(int(err.exit_status))


# The loop's time source and waiting; tests replace them.
CLOCK: Callable[[], float] = time.monotonic
SLEEP_FOR: Callable[[Any], Callable[[float], None]] = idle_sleep


@app.command()
def follow(
    child_id: cli.ChildId,
    tip: cli.Tips = None,
    no_hint: cli.NoHint = False,
    interval: Annotated[
        float, typer.Option("--interval", metavar="S", min=0.5, help="Seconds between reads (at least 0.5).")
    ] = 2.0,
    exit_status: Annotated[
        bool,
        typer.Option(
            "--exit-status",
            help="Exit 8 when the task did not close itself (agent_close), 9 when paused on partial history.",
        ),
    ] = False,
    timeout: Annotated[
        float | None,
        typer.Option(
            "--timeout",
            metavar="S",
            min=0.0,
            help="Stop after S seconds in all; exit 9 while the task still runs.",
            show_default=False,
        ),
    ] = None,
    json_out: Annotated[
        bool,
        typer.Option(
            "--json", help="NDJSON events on stdout, one per line (schema: hermes-task schema events)."
        ),
    ] = False,
    url: cli.Url = None,
    gateway: cli.Gateway = None,
    profile: cli.Profile = None,
    token_file: cli.TokenFile = None,
    username: cli.Username = None,
    password_file: cli.PasswordFile = None,
    request_timeout: cli.RequestTimeout = None,
    color: cli.Color = cli.ColorMode.auto,
    debug: cli.Debug = False,
) -> None:
    """Print each new row of a delegated task once, as it arrives, until the task ends.

    Every --interval seconds: the task's detail, its newest page and a fresh detail. When the task ends, one final read, then exit.

    A newer segment (--tip, or the dashboard's latest-descendant hint) is followed only after its lineage is proven back to CHILD_ID.
    """
    opts = cli.options_from(locals(), request_timeout_alias=False)
    from hermes_task.reading.follow import FollowConfig

    config = FollowConfig(interval=interval, timeout=timeout, exit_status=exit_status)
    reporter = JsonReporter(_write) if opts.json else TerminalReporter(opts, interval, child_id)
    try:
        _follow(opts, reporter, child_id, tip or [], not no_hint, config)
    except BrokenPipeError:
        cli._quiet_pipe()


def _follow(
    opts: cli.Options,
    reporter: JsonReporter | TerminalReporter,
    child_id: str,
    tips: list[str],
    hint: bool,
    config: FollowConfig,
) -> None:
    from hermes_task.core.ids import check_id
    from hermes_task.failures import Code, ExitStatus, HermesError
    from hermes_task.reading.follow import Follower, Outcome

    try:
        anchor = check_id(child_id, what="CHILD_ID")
        candidates = [check_id(t, what="--tip") for t in tips]
        with cli.connect(opts) as client:
            from hermes_task.reading.reader import TaskReader

            reader = TaskReader(client, anchor, tips=candidates, hint=hint)
            follower = Follower(
                reader,
                reporter,
                config,
                clock=CLOCK,
                sleep=SLEEP_FOR(sys.stdout),
                debug=cli._debug_writer(opts),
            )
            outcome = follower.run()
    except HermesError as err:
        _stop(opts, err, reporter)
    except KeyboardInterrupt:
        if opts.json:
            reporter.result(Outcome("interrupted", "unknown", None, int(ExitStatus.INTERRUPTED)))
        raise typer.Exit(int(ExitStatus.INTERRUPTED)) from None
    except (BrokenPipeError, typer.Exit):
        raise
    except Exception as exc:
        if cli.debug_enabled(opts):
            raise
        name = type(exc).__name__
        _stop(opts, HermesError(Code.INTERNAL, f"{name} (rerun with --debug for the traceback)"), reporter)
    raise typer.Exit(outcome.exit_code)
