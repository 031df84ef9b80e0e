"""The one shell around every command: failures, interrupts and closed pipes become exit statuses.

`run(session, body)` is the only place an exception becomes an exit status: a `HermesError`
its documented status (and, under `--json`, its error document: `endings.py`); Ctrl-C 130,
SIGTERM 143 and SIGHUP 129 (with `--json` an `interrupted` document, or the command's own
final report); a closed stdout a quiet 0 (`closed_pipe.py`); anything else an internal error,
with the traceback only under `--debug`. Invariant: whatever path a command ends by, stdout
carries at most one complete JSON document (or complete NDJSON lines) and stderr one line per
failure (and whole debug lines).
"""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NoReturn

from hermes_task.cli.closed_pipe import quiet_pipe_exit
from hermes_task.cli.endings import Ending, failure_of, report_failure
from hermes_task.cli.session import Session, debug_enabled
from hermes_task.failures import Code, ExitStatus, HermesError, Interrupted

SIGNALS = {signal.SIGTERM: ("SIGTERM", ExitStatus.TERMINATED), signal.SIGHUP: ("SIGHUP", ExitStatus.HANGUP)}


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


def run(session: Session, body: Callable[[Session], Ending | None], *, report: Report | None = None) -> None:
    """Run a command body; every way it can end becomes its exit status (module docstring).
    The body gets the run's `Session` (closed here, however the body ends), and ends by
    returning (None, or the `Ending` of a failure it read past) or by raising.

    `report(error, status)` replaces the default failure report (the error document and
    line): `follow` writes its error event and `result` line through it."""
    try:
        with stop_signals():
            try:
                ending = body(session)
            finally:
                session.close()
        if ending is not None:
            report_failure(session.common, ending.error, ending.rows, ending.task)
            raise SystemExit(int(ending.error.exit_status))
    except (HermesError, KeyboardInterrupt) as exc:
        _end(session, *failure_of(exc), report)
    except BrokenPipeError:
        quiet_pipe_exit(session.env.stdout)
    except SystemExit:  # an `Ending` and the commands that end with their own status
        raise
    except Exception as exc:
        if debug_enabled(session.common):
            raise
        internal = HermesError(Code.INTERNAL, f"{type(exc).__name__} (rerun with --debug for the traceback)")
        _end(session, internal, 1, report)


def _end(session: Session, error: HermesError, status: int, report: Report | None) -> NoReturn:
    """Report `error` (the command's own `report`, else the error document and line; a plain
    interrupt without `--json` says nothing), then exit with `status`."""
    if report is not None:
        report(error, status)
    elif error.code is not Code.INTERRUPTED or session.common.json:
        report_failure(session.common, error, session.known.rows())
    raise SystemExit(status)
