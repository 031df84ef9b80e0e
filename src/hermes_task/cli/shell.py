"""The one shell around every command: failures, interrupts and closed pipes become exit statuses.

`run(common, body)` is the only place an exception becomes an exit status: a `HermesError`
its documented status (and, under `--json`, its error document); Ctrl-C 130, SIGTERM 143 and
SIGHUP 129 (with `--json` an `interrupted` document, or the command's own final report); a
closed stdout a quiet 0; anything else an internal error, with the traceback only under
`--debug`. Invariant: whatever path a command ends by, stdout carries at most one complete JSON
document (or complete NDJSON lines) and stderr one line per failure (and whole debug lines).
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NoReturn

from msgspec import Struct, field

from hermes_task.cli.common import ColorMode, Common
from hermes_task.cli.environment import rich_width, screen_size
from hermes_task.cli.session import Session, debug_enabled
from hermes_task.failures import ExitStatus, HermesError, Interrupted, interrupt_status

if TYPE_CHECKING:
    from rich.console import Console
    from rich.segment import Segment

    from hermes_task.core.documents import Row, TaskInfo
    from hermes_task.render.target import Target

SIGNALS = {signal.SIGTERM: ("SIGTERM", ExitStatus.TERMINATED), signal.SIGHUP: ("SIGHUP", ExitStatus.HANGUP)}


class Ending(Struct):
    """A command's failure returned to the shell once its output is written: reported (the
    error document with `rows` and `task` under `--json`, the error line) and its status."""

    error: HermesError
    rows: list[Row] = field(default_factory=list)
    task: TaskInfo | None = None


def color_enabled(common: Common, stream: Any) -> bool:
    """--color, then NO_COLOR, FORCE_COLOR and TERM=dumb, then whether `stream` is a tty."""
    env = common.env.environ
    if common.color is ColorMode.always:
        return True
    if common.color is ColorMode.never or env.get("NO_COLOR"):
        return False
    if env.get("FORCE_COLOR"):
        return True
    if env.get("TERM") == "dumb":
        return False
    return common.env.isatty(stream)


def target(common: Common) -> Target:
    """stdout as the painters' output (`render/target.py`): a terminal or not, colour or not,
    its size (`environment.screen_size`), written through `write_stdout`."""
    from hermes_task.render.target import Target

    env = common.env
    tty = env.isatty(env.stdout)
    width, height = screen_size(env.environ, env.stdout, tty=tty)
    color = color_enabled(common, env.stdout)
    return Target(env.write_stdout, tty=tty, color=color, columns=width, height=height)


def console(common: Common, *, stderr: bool = False) -> Console:
    """A rich console on stdout (or stderr), for what rich draws (tables, live displays):
    no markup from data, no terminal line padded with trailing spaces, never a stderr message
    broken into lines (a terminal wraps it at word boundaries of its own width, and a copied
    message stays one line), a closed pipe a quiet exit, a sane width (`rich_width`)."""
    from rich.console import Console

    env = common.env
    stream = env.stderr if stderr else env.stdout
    color = color_enabled(common, stream)
    tty = env.isatty(stream)

    class QuietConsole(Console):
        """rich's own broken-pipe handler exits 1; a closed pipe is a quiet exit 0 here."""

        def on_broken_pipe(self) -> None:
            quiet_pipe(common)

        def render(self, renderable: Any, options: Any = None) -> Iterable[Segment]:
            """On a terminal, every line without rich's trailing padding (copied lines stay
            clean); piped output is never padded, and keeps every byte of the text."""
            from hermes_task.render.terminal import strip_line_ends

            rendered = super().render(renderable, options)
            return strip_line_ends(rendered) if tty else rendered

    return QuietConsole(
        file=stream,
        force_terminal=color,
        no_color=not color,
        color_system="standard" if color else None,
        markup=False,
        highlight=False,
        emoji=False,
        soft_wrap=stderr or not tty,  # one message, one line: the terminal wraps it
        width=rich_width(env.environ, stream, tty=tty),
    )


def report_failure(
    common: Common, error: HermesError, rows: list[Row] | None = None, task: TaskInfo | None = None
) -> None:
    """The error document (with --json) on stdout and one line (plus a hint) on stderr."""
    from hermes_task.core.documents import ErrorBody, ErrorDoc
    from hermes_task.render.jsontext import document

    message = error.message
    hint = error.hint
    if common.json:
        body = ErrorBody(code=error.code.value, message=message, retryable=error.retryable, hint=hint)
        common.env.write_stdout(document(ErrorDoc(error=body, rows=rows or [], task=task)))
    stderr_line(common, f"error: {message}", "bold red")
    if hint:
        stderr_line(common, f"hint: {hint}", "dim")


# The SGR parameters of the styles stderr lines are written in.
STDERR_STYLES = {"bold red": "1;31", "bold yellow": "1;33", "yellow": "33", "dim": "2", "": ""}


def stderr_line(common: Common, line: str, style: str) -> None:
    """`line` on stderr in `style` (when stderr takes colour), sanitised to one line
    (`clean_line`: a message quoting the backend can add neither a line nor an escape)."""
    from hermes_task.core.sanitize import clean_line

    stream = common.env.stderr
    line = clean_line(line)
    code = STDERR_STYLES[style]
    if code and color_enabled(common, stream):
        line = f"\x1b[{code}m{line}\x1b[0m"
    stream.write(line + "\n")
    stream.flush()


def quiet_pipe(common: Common) -> NoReturn:
    """A closed stdout (`| head`) ends the program quietly (Python's SIGPIPE recipe)."""
    quiet_pipe_exit(common.env.stdout)


def quiet_pipe_exit(stdout: Any = None) -> NoReturn:
    """Silence the closed stdout, exit 0."""
    silence(stdout)
    raise SystemExit(0)


def silence(stdout: Any = None) -> None:
    """Point a closed stdout at /dev/null, so the interpreter's final flush stays quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, (stdout or sys.stdout).fileno())
    except (OSError, ValueError, AttributeError):
        pass


@contextmanager
def stop_signals() -> Iterator[None]:
    """While a command runs, SIGTERM and SIGHUP unwind it like Ctrl-C (`Interrupted`)."""

    def stop(signum: int, _frame: Any) -> None:
        what, status = SIGNALS[signal.Signals(signum)]
        raise Interrupted(status, what)

    try:
        previous = {sig: signal.signal(sig, stop) for sig in SIGNALS}
    except ValueError:  # not the main thread: leave the signals alone
        yield
        return
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


Report = Callable[["HermesError", int], None]


def run(common: Common, body: Callable[[Session], Ending | None], *, report: Report | None = None) -> None:
    """Run a command body; every way it can end becomes its exit status (module docstring).
    The body gets the run's `Session` (closed here, however the body ends), and ends by
    returning (None, or the `Ending` of a failure it read past) or by raising.

    `report(error, status)` replaces the default failure report (the error document and
    line): `follow` writes its error event and `result` line through it."""
    from hermes_task.failures import Code

    session = Session(common)

    def end(error: HermesError, status: int) -> NoReturn:
        if report is not None:
            report(error, status)
        elif error.code is not Code.INTERRUPTED or common.json:
            report_failure(common, error, session.known.rows())
        raise SystemExit(status)

    try:
        with stop_signals():
            try:
                ending = body(session)
            finally:
                session.close()
        if ending is not None:
            report_failure(common, ending.error, ending.rows, ending.task)
            raise SystemExit(int(ending.error.exit_status))
    except HermesError as exc:
        end(exc, int(exc.exit_status))
    except KeyboardInterrupt as exc:
        what = exc.what if isinstance(exc, Interrupted) else "Ctrl-C"
        end(HermesError(Code.INTERRUPTED, what), interrupt_status(exc))
    except BrokenPipeError:
        quiet_pipe(common)
    except SystemExit:  # an `Ending` and the commands that end with their own status
        raise
    except Exception as exc:
        if debug_enabled(common):
            raise
        end(HermesError(Code.INTERNAL, f"{type(exc).__name__} (rerun with --debug for the traceback)"), 1)
