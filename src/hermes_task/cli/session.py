"""One command's run: its `Session` (the settings resolved once, the `--debug` writer and, made on
first use, the client, the store's hints and the outputs), the `shell` around it, and how its
output and failures are written. `shell` is the only place an exception becomes an exit status
(docs/exit-codes.md): stdout then holds at most one whole JSON document (or whole NDJSON lines).
"""

from __future__ import annotations

import math
import os
import select
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import closing, contextmanager, suppress
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, NoReturn

from hermes_task import __version__
from hermes_task import settings as settings_module
from hermes_task.cli.options import CONNECTION, ColorMode, Common, Environment, OutputFormat
from hermes_task.core.documents import (
    ErrorBody,
    ErrorDoc,
    ParentEntry,
    Row,
    TaskInfo,
    TranscriptDoc,
    WarningItem,
)
from hermes_task.core.projection import RowFilter, filtered
from hermes_task.core.sanitize import check_id, clean_line
from hermes_task.core.ui_strings import SETUP_WARNINGS
from hermes_task.failures import Code, ExitStatus, HermesError, Interrupted, interrupt_status
from hermes_task.reading.hints import StoreHints, find_parents
from hermes_task.reading.reader import Snapshot, TaskReader, Transcript
from hermes_task.render import FALLBACK_WIDTH, Target, sane_width
from hermes_task.render.jsontext import document

if TYPE_CHECKING:
    from rich.console import Console

    from hermes_task.dashboard.client import DashboardClient
    from hermes_task.store.sqlite_reader import Store


def quiet_pipe_exit(stdout: Any = None) -> NoReturn:
    """Point the closed `stdout` (default: `sys.stdout`) at /dev/null, then exit 0."""
    with suppress(OSError, ValueError, AttributeError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), (stdout or sys.stdout).fileno())
    raise SystemExit(0)


def color_enabled(common: Common, stream: Any) -> bool:
    """--color, then NO_COLOR, FORCE_COLOR and TERM=dumb, then whether `stream` is a tty."""
    env = common.env.environ
    if common.color is not ColorMode.auto:
        return common.color is ColorMode.always
    if env.get("NO_COLOR"):
        return False
    return bool(env.get("FORCE_COLOR")) or (env.get("TERM") != "dumb" and common.env.isatty(stream))


def output_target(common: Common) -> Target:
    """stdout as the painters' output: its size a terminal's, else `columns` and 25 lines."""
    env = common.env
    tty = env.isatty(env.stdout)
    width, height = terminal_size(env.environ, env.stdout) if tty else (columns(env.environ), 25)
    color = color_enabled(common, env.stdout)
    return Target(env.write_stdout, tty=tty, color=color, columns=width, height=height)


def rich_console(common: Common, *, stderr: bool = False) -> Console:
    """A rich console on stdout (or stderr): no markup from data, no padded line, a closed pipe a
    quiet exit. On a terminal rich follows its width, unless COLUMNS is not sane."""
    from hermes_task.render.terminal import QuietConsole  # lazy: rich, only for what rich draws

    env = common.env
    stream = env.stderr if stderr else env.stdout
    color = color_enabled(common, stream)
    tty = env.isatty(stream)
    width = None if tty else columns(env.environ)
    if tty and "COLUMNS" in env.environ and sane_width(env.environ["COLUMNS"]) is None:
        width = terminal_size(env.environ, stream)[0]
    return QuietConsole(
        on_broken_pipe=lambda: quiet_pipe_exit(env.stdout),
        trim=tty,
        file=stream,
        force_terminal=color,
        no_color=not color,
        color_system="standard" if color else None,
        markup=False,
        highlight=False,
        emoji=False,
        soft_wrap=stderr or not tty,  # one message, one line: the terminal wraps it
        width=width,
    )


def columns(environ: Mapping[str, str]) -> int:
    """The width off a terminal: a sane `COLUMNS`, else 100 (never an error of its own)."""
    return sane_width(environ.get("COLUMNS")) or 100


def terminal_size(environ: Mapping[str, str], stream: Any) -> tuple[int, int]:
    """(columns, lines) of the terminal `stream`: sane `COLUMNS`/`LINES`, else measured, else 80x25."""
    try:
        measured_width, measured_height = os.get_terminal_size(stream.fileno())
    except (AttributeError, ValueError, OSError):  # not a real terminal (a test's stream)
        measured_width = measured_height = 0
    width = sane_width(environ.get("COLUMNS")) or sane_width(measured_width) or FALLBACK_WIDTH
    raw = str(environ.get("LINES", "")).strip()
    height = int(raw) if raw.isdigit() and int(raw) > 0 else measured_height or 25
    return width, height


def report_failure(
    common: Common, error: HermesError, rows: list[Row] | None = None, task: TaskInfo | None = None
) -> None:
    """The error document (with --json) on stdout and its lines on stderr."""
    if common.json:
        common.env.write_stdout(document(error_document(error, rows, task)))
    error_lines(common, error)


def failure_of(exc: HermesError | KeyboardInterrupt) -> tuple[HermesError, int]:
    """A failure and its exit status; Ctrl-C, SIGTERM or SIGHUP as an `interrupted` error."""
    if isinstance(exc, HermesError):
        return exc, int(exc.exit_status)
    what = exc.what if isinstance(exc, Interrupted) else "Ctrl-C"
    return HermesError(Code.INTERRUPTED, what), interrupt_status(exc)


def error_document(
    error: HermesError, rows: list[Row] | None = None, task: TaskInfo | None = None
) -> ErrorDoc:
    body = ErrorBody(code=error.code.value, message=error.message, retryable=error.retryable, hint=error.hint)
    return ErrorDoc(error=body, rows=rows or [], task=task)


def error_lines(common: Common, error: HermesError) -> None:
    stderr_line(common, f"error: {error.message}", "bold red")
    if error.hint:
        stderr_line(common, f"hint: {error.hint}", "dim")


STDERR_STYLES = {"bold red": "1;31", "bold yellow": "1;33", "yellow": "33", "dim": "2", "": ""}


def stderr_line(common: Common, line: str, style: str) -> None:
    """`line` on stderr, sanitised to one line, in `style` when stderr takes colour."""
    line, code = clean_line(line), STDERR_STYLES[style]
    if code and color_enabled(common, common.env.stderr):
        line = f"\x1b[{code}m{line}\x1b[0m"
    common.env.write_stderr(line + "\n")


_DEBUG_LOCK = threading.Lock()  # one --debug line at a time, from any thread (reading/api.py)


class Session:
    """What one run of a command works with."""

    def __init__(self, common: Common) -> None:
        self.common = common
        self.env: Environment = common.env
        self.known_rows: Callable[[], list[Row]] = list  # verified so far: the error document's rows
        self.ending: Transcript | None = None  # a failed read's outcome, reported as the shell ends
        self._client: DashboardClient | None = None
        self._hints: StoreHints | None = None
        self._consoles: dict[bool, Console] = {}
        # While a live table holds the terminal (`recover --watch`), `--debug` lines go above it.
        self.debug_above: Callable[[str], None] | None = None

    @cached_property
    def target(self) -> Target:
        """stdout as the painters' output, as it was when the command first wrote."""
        return output_target(self.common)

    def console(self, stderr: bool = False) -> Console:
        if stderr not in self._consoles:
            self._consoles[stderr] = rich_console(self.common, stderr=stderr)
        return self._consoles[stderr]

    def err_console(self) -> Console:
        return self.console(stderr=True)

    @cached_property
    def settings(self) -> settings_module.Settings:
        """The effective settings (flag > env > config file > default), resolved once."""
        given = {name: getattr(self.common, name) for name in (*CONNECTION, "store", "no_store")}
        return settings_module.resolve(env=dict(self.env.environ), **given)

    @cached_property
    def debug(self) -> Callable[[str], None] | None:
        if not self.common.debug and self.env.environ.get("HERMES_TASK_DEBUG", "") in ("", "0"):
            return None

        def write(line: str, stderr: Any = self.env.stderr) -> None:
            with _DEBUG_LOCK:
                if self.debug_above is not None:
                    self.debug_above(line)
                else:
                    print(f"debug: {line}", file=stderr, flush=True)

        return write

    @property
    def client(self) -> DashboardClient:
        """The dashboard client, credentials applied; made on first use."""
        if self._client is not None:
            return self._client
        import httpx  # lazy: httpx and the client, only for a command that reads a dashboard

        from hermes_task.dashboard.auth import apply_credentials  # lazy: as httpx
        from hermes_task.dashboard.client import DashboardClient  # lazy: as httpx

        resolved = self.settings
        http = httpx.Client(
            base_url=resolved.url,
            timeout=resolved.request_timeout,
            follow_redirects=False,
            headers={"User-Agent": f"hermes-task/{__version__}", "Accept": "application/json"},
            trust_env=False,
            # Plain http needs no TLS context (building one loads the CA bundle: 35 ms a run).
            verify=resolved.url.startswith("https://"),
            transport=self.env.transport,
        )
        client = DashboardClient(http, profile=resolved.profile, debug=self.debug)
        try:
            client.use_credentials(apply_credentials(http, resolved, dict(self.env.environ)))
        except BaseException:
            client.close()
            raise
        self._client = client
        return client

    def open_store(self) -> tuple[Store | None, str | None]:
        """The settings' local store opened read-only (the caller closes it), and its path."""
        path = self.settings.store
        if path is None:
            return None, None
        from hermes_task.store.sqlite_reader import Store  # lazy: SQLite, only when there is a store

        return Store(path, debug=self.debug), str(path)

    def parents(self, limit: int) -> tuple[list[ParentEntry], list[WarningItem]]:
        """`parents`' newest `limit` chats: proposed by the whole store, proven by the dashboard."""
        store, path = self.open_store()
        try:
            return find_parents(
                self.client, store, limit, off=self.settings.store_off, path=path, debug=self.debug
            )
        finally:
            if store is not None:
                store.close()

    @property
    def hints(self) -> StoreHints:
        """The store's hints (or why there is no store), made on first use."""
        if self._hints is None:
            store, path = self.open_store()
            self._hints = StoreHints(store, self.settings.store_off, debug=self.debug, path=path)
        return self._hints

    @contextmanager
    def reading(self) -> Iterator[tuple[DashboardClient, StoreHints]]:
        """The client and the store's hints for a block of reads; both closed after it."""
        try:
            yield self.client, self.hints
        finally:
            self.close()

    def close(self) -> None:
        """Close the store, then the client (again: nothing)."""
        hints, client = self._hints, self._client
        self._hints = self._client = None
        try:
            if hints is not None:
                hints.close()
        finally:
            if client is not None:
                client.close()


def dropped(quiet: bool, code: str) -> bool:
    """Does `--quiet` keep this warning (about the setup) off the terminal? JSON keeps it."""
    return quiet and code in SETUP_WARNINGS


@dataclass
class QuietNotes:
    """A terminal reporter (watch, follow --parent) without the setup warnings."""

    inner: Any

    def warning(self, item: Any) -> None:
        if item.code not in SETUP_WARNINGS:
            self.inner.warning(item)

    def child_warning(self, entry: Any, item: Any) -> None:
        if item.code not in SETUP_WARNINGS:
            self.inner.child_warning(entry, item)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def emit_warnings(common: Common, warnings: list[Any]) -> None:
    """Warnings as `warning: ...` lines on stderr (not with --json), but those `--quiet` drops."""
    if common.json:
        return
    for warning in warnings:
        if not dropped(common.quiet, warning.code):
            stderr_line(common, f"warning: {warning.message}", "bold yellow")


def output_transcript(session: Session, doc: Any, **view: Any) -> None:
    """A transcript document as JSON, or painted rows (paged on a tall terminal) plus warnings."""
    common = session.common
    env = common.env
    if common.json:
        env.write_stdout(document(doc))
        return
    from hermes_task.render.rows import View, transcript_chunks  # lazy: the row model, not on --json's path

    painted = View(**view)
    if common.output_format is OutputFormat.markdown:
        from hermes_task.render.report import transcript_markdown  # lazy: only --format markdown

        for chunk in transcript_markdown(doc, painted):
            env.write_stdout(chunk)  # a document: never paged, never coloured
    elif (out := session.target).plain:
        for chunk in transcript_chunks(doc, painted, out.columns):
            env.write_stdout(chunk)  # written as it is formatted
    else:
        from hermes_task.render import terminal_rows  # lazy: rich's cell widths, only on a terminal

        if common.pager is False or not out.tty:
            terminal_rows.transcript(out, doc, painted)
        else:
            from hermes_task.cli import pager  # lazy: subprocess, only on a terminal

            stream = pager.Stream(
                requested=common.pager,
                height=out.height,
                env=dict(env.environ),
                write=env.write_stdout,
                encoding=getattr(env.stdout, "encoding", None) or "utf-8",
            )
            with closing(stream):  # painted from sanitised text, about 200 rows at a time
                terminal_rows.transcript(out.to(stream.feed), doc, painted)
    emit_warnings(common, doc.warnings)


def idle_sleep(stream: Any) -> Callable[[float], None]:
    """A sleep that raises BrokenPipeError once `stream`'s reader has gone; plain sleep otherwise."""
    try:
        fd = stream.fileno()
        poller = select.poll()
    except (AttributeError, OSError, ValueError):
        return time.sleep
    poller.register(fd, 0)  # no events asked: only POLLERR, POLLHUP (a closed pipe) and POLLNVAL come back
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
        previous = {}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@contextmanager
def shell(session: Session, *, report: Callable[[HermesError, int], None] | None = None) -> Iterator[Session]:
    """Every way the block can end becomes its exit status; the session is closed, then
    `session.ending` (a failure read past) reported. `report(error, status)` replaces the
    error document and line (the live commands write their events through it)."""
    try:
        with stop_signals():
            try:
                yield session
            finally:
                session.close()
        ending = session.ending
        if ending is not None and ending.failure is not None:
            task = ending.doc.task if ending.doc is not None else None
            report_failure(session.common, ending.failure, ending.rows, task)
            raise SystemExit(int(ending.failure.exit_status))
    except BrokenPipeError:  # stdout pointed at /dev/null: the final flush cannot raise again
        quiet_pipe_exit(session.env.stdout)
    except (KeyboardInterrupt, Exception) as exc:
        if isinstance(exc, HermesError | KeyboardInterrupt):
            error, status = failure_of(exc)
        elif session.debug is not None:
            raise
        else:
            why = f"{type(exc).__name__} (rerun with --debug for the traceback)"
            error, status = HermesError(Code.INTERNAL, why), 1
        if report is not None:
            report(error, status)
        elif error.code is not Code.INTERRUPTED or session.common.json:  # a plain Ctrl-C says nothing
            report_failure(session.common, error, session.known_rows())
        raise SystemExit(status) from None


def live_failure(common: Common, reporter: Any, error: HermesError, status: int, *entries: Any) -> None:
    """A live loop's failure outside its own handling: the error event or line (not for an
    interrupt), then with `--json` the `result` event (`entries`: the tasks a watch names)."""
    from hermes_task.reading.polling import Outcome  # lazy: the live commands only

    interrupted = error.code is Code.INTERRUPTED
    if not interrupted:
        reporter.error(error, retrying=False, delay=None)
    if common.json:
        reporter.result(
            Outcome("interrupted" if interrupted else "failed", "unknown", None, status), *entries
        )


# A step after the fill (`--around`, older's batches): the document's snapshot, or None when it
# wrote the output itself (`older --all` streamed).
Step = Callable[[TaskReader, Snapshot], Snapshot | None]


def read_transcript(
    session: Session,
    *,
    child_id: str,
    tip: Sequence[str] | None,
    no_hint: bool,
    step: Step | None = None,
    picked: RowFilter | None = None,
) -> Transcript:
    """Read the task, run `step`, build the document; `picked`: the rows shown (and reported)."""
    anchor = check_id(child_id, what="CHILD_ID")
    tips = [check_id(t, what="--tip") for t in tip or []]
    with session.reading() as (client, hints):
        reader = TaskReader(client, anchor, tips=tips, hint=not no_hint, store=hints)
        session.known_rows = shown = reader.rows if picked is None else (lambda: picked.select(reader.rows()))
        try:
            # The first detail read here: one frame nearer `main` (tests/unit/test_frames.py).
            snap = reader.refresh(client.detail(anchor))
            reader.fill()
            if step is not None:
                stepped = step(reader, snap)
                if stepped is None:  # written already: nothing to render, nothing failed
                    return Transcript(rows=shown())
                snap = stepped
            reader.read_goal()
        except HermesError as exc:
            return Transcript(rows=shown(), failure=exc)
        doc = reader.document(snap.warnings)
        if picked is not None:
            doc = filtered(doc, picked)
        return Transcript(rows=doc.rows, doc=doc, failure=snap.failure)


def finish(common: Common, reading: Transcript, output: Callable[[TranscriptDoc], None]) -> Transcript:
    """`output` the document unless the error document replaces it (the shell's to report)."""
    if reading.doc is not None and (reading.failure is None or not common.json):
        output(reading.doc)
    return reading


def check_target(path: str, option: str = "--junit") -> None:
    """Before any read: FILE (of `option`) must be a file in a writable directory (exit 2)."""
    directory = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise HermesError(Code.USAGE, f"{option} {path} is a directory")
    if not os.path.isdir(directory):
        raise HermesError(Code.USAGE, f"{option} {path}: no such directory {directory}")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise HermesError(Code.USAGE, f"{option} {path}: the directory {directory} is not writable")


def write_atomic(path: str, text: str, option: str) -> None:
    """`text` as the file `path`, atomically (a temporary file renamed over it), with a new file's
    permissions; one that cannot be written is a usage error of `option`."""
    directory = os.path.dirname(os.path.abspath(path))
    temporary = ""  # none yet: unlinking it fails quietly
    try:
        fd, temporary = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=directory)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(temporary, 0o666 & ~mask)
        os.replace(temporary, path)
    except BaseException as exc:
        with suppress(OSError):
            os.unlink(temporary)
        if isinstance(exc, OSError):
            raise HermesError(Code.USAGE, f"{option} {path}: {exc.strerror or exc}") from None
        raise
