"""How a failure is told: the error document on stdout (with `--json`) and the `error:` and
`hint:` lines on stderr, and the `Ending` a command returns when it failed after writing its
output.

Invariant: every line written to stderr here is one line (`clean_line`: a message quoting
the backend can add neither a line nor an escape), coloured only when stderr takes colour;
the error document is the only thing a failure writes to stdout.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from msgspec import Struct, field

from hermes_task.cli.common import Common
from hermes_task.cli.consoles import color_enabled
from hermes_task.core.documents import ErrorBody, ErrorDoc, Row, TaskInfo
from hermes_task.core.sanitize import clean_line
from hermes_task.failures import Code, HermesError, Interrupted, interrupt_status
from hermes_task.render.jsontext import document


class Ending(Struct):
    """A command's failure returned to the shell once its output is written: reported (the
    error document with `rows` and `task` under `--json`, the error line) and its status."""

    error: HermesError
    rows: list[Row] = field(default_factory=list)
    task: TaskInfo | None = None


def report_failure(
    common: Common, error: HermesError, rows: list[Row] | None = None, task: TaskInfo | None = None
) -> None:
    """The error document (with --json) on stdout and one line (plus a hint) on stderr."""
    if common.json:
        common.env.write_stdout(document(error_document(error, rows, task)))
    error_lines(common, error)


def failure_of(exc: HermesError | KeyboardInterrupt) -> tuple[HermesError, int]:
    """A failure and its exit status: a `HermesError` as it is; Ctrl-C, SIGTERM or SIGHUP
    (`Interrupted`) as an `interrupted` error with the signal's status."""
    if isinstance(exc, HermesError):
        return exc, int(exc.exit_status)
    what = exc.what if isinstance(exc, Interrupted) else "Ctrl-C"
    return HermesError(Code.INTERRUPTED, what), interrupt_status(exc)


def error_document(
    error: HermesError, rows: list[Row] | None = None, task: TaskInfo | None = None
) -> ErrorDoc:
    """`error` as the error document (`kind: "error"`), with the rows and task verified so far."""
    body = ErrorBody(code=error.code.value, message=error.message, retryable=error.retryable, hint=error.hint)
    return ErrorDoc(error=body, rows=rows or [], task=task)


def error_lines(common: Common, error: HermesError) -> None:
    """The `error:` line, and the `hint:` line when there is one, on stderr."""
    stderr_line(common, f"error: {error.message}", "bold red")
    if error.hint:
        stderr_line(common, f"hint: {error.hint}", "dim")


# The SGR parameters of the styles stderr lines are written in.
STDERR_STYLES = {"bold red": "1;31", "bold yellow": "1;33", "yellow": "33", "dim": "2", "": ""}


def stderr_line(common: Common, line: str, style: str) -> None:
    """`line` on stderr in `style` (when stderr takes colour), sanitised to one line
    (`clean_line`: a message quoting the backend can add neither a line nor an escape)."""
    stream = common.env.stderr
    line = clean_line(line)
    code = STDERR_STYLES[style]
    if code and color_enabled(common, stream):
        line = f"\x1b[{code}m{line}\x1b[0m"
    stream.write(line + "\n")
    stream.flush()


def flushed(stream: Any) -> Callable[[str], None]:
    """A writer of `stream` that flushes each write (an NDJSON consumer reads line by line)."""

    def write(text: str) -> None:
        stream.write(text)
        stream.flush()

    return write
