"""`recover`'s report outputs wired to the shell: the Markdown report on stdout (`--format
markdown`, `render/mdreport.py`) and the JUnit XML file (`--junit FILE`, `render/junit.py`).

The JUnit file is written atomically: the whole document to a temporary file in the file's own
directory, flushed to disk, then renamed over FILE, so a reader sees the old file or the new
one, never half of one. It is written whatever way `recover` (or its `--watch`) ends once it has
started reading: every task known so far, and a run that failed as a failing testcase of its
own; also when SIGTERM, SIGHUP or Ctrl-C stopped the watch (then no transcript is read for
it). The last rows of a task that did not pass are read as `show` reads them (the newest page,
`reading/taskread.py`); a stop signal while they are read ends the reading, the file is still
written with what was read, and the signal then ends the command as usual.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Sequence
from contextlib import suppress

from hermes_task.core.documents import TaskEntry
from hermes_task.core.ui_strings import RECOVER
from hermes_task.failures import Code, ExitStatus, HermesError
from hermes_task.reading.api import DashboardAPI, SharedDetails
from hermes_task.reading.hints import StoreHints
from hermes_task.reading.reader import Transcript
from hermes_task.reading.tasktree import ChildReads, Unread

STOPPED = {129: "SIGHUP", 130: "Ctrl-C", 143: "SIGTERM"}
# A task's child as read, or why not; given the task and its conversation.
Reader = Callable[[TaskEntry, str], Transcript | Unread]


def child_reader(
    client: DashboardAPI,
    hints: StoreHints | None,
    paths: dict[str, tuple[str, ...]],
    *,
    pages: int | None,
    shared: SharedDetails | None = None,
) -> Reader:
    """Each task's child read once (`ChildReads`: `pages` as `recover --pages`, at most 100
    children), owned by a segment of its conversation's proven lineage (`paths`: every
    conversation read, by its id; one not read is its own id alone); `shared`: the run's details."""
    reads = ChildReads(client, hints, pages=pages, bound=RECOVER["report_bound"], shared=shared)

    def read(task: TaskEntry, conversation: str) -> Transcript | Unread:
        return reads.read(task, frozenset(paths.get(conversation, (conversation,))))

    return read


def check_target(path: str, option: str = "--junit") -> None:
    """Before any read: FILE (given as `option`) must be a file in a directory this process
    can write (exit 2)."""
    directory = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise HermesError(Code.USAGE, f"{option} {path} is a directory")
    if not os.path.isdir(directory):
        raise HermesError(Code.USAGE, f"{option} {path}: no such directory {directory}")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise HermesError(Code.USAGE, f"{option} {path}: the directory {directory} is not writable")


def write_atomic(path: str, text: str) -> None:
    """`text` (UTF-8) as the file `path`, atomically (module docstring), with the permissions
    a new file gets under the umask."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, temporary = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(temporary, 0o666 & ~mask)
        os.replace(temporary, path)
    except BaseException:
        with suppress(OSError):
            os.unlink(temporary)
        raise


class JunitFile:
    """The `--junit FILE` of one run: `write` it once, from what the run knows."""

    def __init__(self, path: str, parent_id: str) -> None:
        self.path = path
        self.parent_id = parent_id
        self.written = False

    def write(
        self,
        tasks: Sequence[TaskEntry],
        *,
        still: str,
        read: Reader | None,
        failure: HermesError | None = None,
        unread: str = "",
    ) -> KeyboardInterrupt | None:
        """The report of `tasks`; `still` says when a running task was seen, `read` reads a
        task's child for its last rows (None: none is read, `unread` says why), `failure` is
        how the run itself failed. A stop signal that came while reading ends the reading and
        is returned once the file is written, for the caller to end by; a file that cannot be
        written is a usage error (exit 2)."""
        from hermes_task.render.report import (  # lazy: the XML writer, only with --junit
            document,
            failed_run,
            last_rows_text,
            suites_of,
        )

        if self.written:
            return None
        self.written = True
        stopped: list[KeyboardInterrupt] = []

        def last_rows(task: TaskEntry, conversation: str) -> str:
            if read is None or stopped:
                why = unread if read is None else "the command was stopped"
                return last_rows_text(Unread("not_read", why))
            try:
                return last_rows_text(read(task, conversation))
            except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM / SIGHUP as `Interrupted`
                stopped.append(exc)
                return last_rows_text(Unread("not_read", "the command was stopped"))

        suites = suites_of(self.parent_id, tasks, still, last_rows)
        if failure is not None:
            suites[0][1].append(failed_run(self.parent_id, failure.code.value, failure.message))
        try:
            write_atomic(self.path, document(suites))
        except OSError as exc:
            raise HermesError(Code.USAGE, f"--junit {self.path}: {exc.strerror or exc}") from None
        return stopped[0] if stopped else None

    def failed(self, error: HermesError, status: int) -> None:
        """The run ended by `error` before its tasks were known: the file says so (not for a
        usage error: nothing was read)."""
        if error.exit_status is ExitStatus.USAGE:
            return
        if error.code is Code.INTERRUPTED:
            stop = STOPPED.get(status, "a signal")
            error = HermesError(Code.INTERRUPTED, f"stopped by {stop} before the tasks were read")
        self.write([], still="", read=None, failure=error)


def still_after_watch(ending: str, status: int, failure: HermesError | None) -> str:
    """When a task still running was last seen, by how the watch ended."""
    if ending == "timeout":
        return "still running when --timeout ran out"
    if ending == "interrupted":
        return f"still running when the watch was stopped ({STOPPED.get(status, 'a signal')})"
    if ending == "failed" and failure is not None:
        return f"still running when the watch failed: {failure.message}"
    return "still running when the watch ended"


__all__ = ["JunitFile", "Reader", "check_target", "child_reader", "still_after_watch", "write_atomic"]
