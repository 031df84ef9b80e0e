"""`recover PARENT --watch` and `follow --parent PARENT`: the watch loops wired to the shell.

Output is chosen once: NDJSON events with `--json`; for the watch, a table redrawn in place on
a terminal or appended tab-separated task lines when piped (`render/watchout.py`); for
`follow --parent`, prefixed rows (`render/familyout.py`). The shell (`shell.run`) turns
SIGTERM and SIGHUP into `Interrupted` like Ctrl-C; the loop catches it and still writes its
`result` (exit 143 / 129 / 130). A failure before the loop starts (an invalid id) is an
`error` event and a `result` with `--json`. A closed stdout ends the watch quietly.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from hermes_task.cli.common import Common, RoleName
from hermes_task.cli.endings import flushed, stderr_line
from hermes_task.cli.quiet import QuietNotes
from hermes_task.cli.reports import JunitFile, Reader, check_target, child_reader, still_after_watch
from hermes_task.cli.session import Session
from hermes_task.cli.shell import Report, run
from hermes_task.cli.waiting import idle_sleep
from hermes_task.core.documents import TaskEntry
from hermes_task.core.ids import check_id
from hermes_task.core.rowfilter import RowFilter
from hermes_task.failures import Code, HermesError, interrupt_status
from hermes_task.reading.api import DashboardAPI
from hermes_task.reading.details import SharedDetails
from hermes_task.reading.family import FamilyFollower, OpenChild
from hermes_task.reading.family_child import FamilyReporter, Tagged
from hermes_task.reading.hints import StoreHints, find_children
from hermes_task.reading.ownership import admit
from hermes_task.reading.polling import START_TIMEOUT, Outcome, PollConfig
from hermes_task.reading.reader import TaskReader
from hermes_task.reading.tasktree import MAX_DEPTH
from hermes_task.reading.unreported import MAX_CHECKS_PER_CYCLE, Unreported
from hermes_task.reading.watcher import Watcher
from hermes_task.render.familyout import TextFamily
from hermes_task.render.watchout import JsonEvents, LinesWatch, LiveWatch

INTERVAL = 2.0
# Jitter of the back-off; tests replace it (clock and sleep come from the Environment).
JITTER: Callable[[], float] = random.random


def watch_parent(
    common: Common,
    parent_id: str,
    *,
    timeout: float | None,
    exit_status: bool,
    start_timeout: float | None,
    junit: str | None = None,
) -> None:
    """`recover PARENT --watch`: until every task is terminal; exits with the outcome's status;
    with `junit`, the JUnit file is written as the watch ends (`cli/reports.py`)."""
    env = common.env
    session = Session(common)
    reporter: JsonEvents | LinesWatch | LiveWatch
    if common.json:
        reporter = JsonEvents(env.write_stdout, flushed(env.stderr))
    elif env.isatty(env.stdout):
        reporter = LiveWatch(session.console(), session.err_console, parent_id, INTERVAL)
        if env.isatty(env.stderr):  # the same screen: a debug line goes above the table
            session.debug_above = partial(reporter.note, "debug: ", style="")
    else:
        reporter = LinesWatch(env.write_stdout, session.err_console, INTERVAL)
    limits = {"timeout": timeout, "exit_status": exit_status, "start_timeout": start_timeout}
    try:
        _drive(session, parent_id, reporter, limits, family=False, junit=junit)
    finally:  # every ending (a failure, Ctrl-C, an internal error) shows the cursor again
        if isinstance(reporter, LiveWatch):
            reporter.close()


def follow_parent(
    common: Common,
    parent_id: str,
    *,
    timeout: float | None,
    exit_status: bool,
    start_timeout: float | None,
    role: Sequence[RoleName] | None = None,
    tail: int | None = None,
    interval: float = INTERVAL,
) -> None:
    """`follow --parent PARENT`: every task's rows, prefixed, until every task ended; `role`
    and `tail` (--role, --tail) choose each task's rows as `follow CHILD` does (its backlog's
    last N, then every new row); `interval` (--interval) the seconds between cycles."""
    rows = RowFilter.of(role, tail)
    env = common.env
    session = Session(common)
    reporter: JsonEvents | TextFamily
    if common.json:
        reporter = JsonEvents(env.write_stdout, flushed(env.stderr))
    else:
        reporter = TextFamily(session.target, session.err_console, interval)
    limits = {"timeout": timeout, "exit_status": exit_status, "start_timeout": start_timeout}
    _drive(session, parent_id, reporter, limits, family=True, rows=rows, interval=interval)


def _drive(
    session: Session,
    parent_id: str,
    reporter: Any,
    limits: dict[str, Any],
    *,
    family: bool,
    rows: RowFilter | None = None,
    junit: str | None = None,
    interval: float = INTERVAL,
) -> None:
    """Check the parent id (and the JUnit file's place), then run the watch or the family
    follow to its outcome through the shell; the JUnit file is written however it ends."""
    common = session.common
    if limits["start_timeout"] is None:
        limits = {**limits, "start_timeout": START_TIMEOUT}
    config = PollConfig(interval=interval, **limits)
    if common.quiet and not common.json:
        reporter = QuietNotes(reporter)
    files: list[JunitFile] = []  # the JUnit file, once the parent id is valid and FILE writable

    def body(session: Session) -> None:
        parent = check_id(parent_id, what="PARENT_ID")
        if junit is not None:
            check_target(junit)
            files.append(JunitFile(junit, parent))
        with session.reading() as (client, hints):
            reader = TaskReader(client, parent, hint=False)
            shared = SharedDetails(client)  # one cycle's details: the watch clears it each cycle
            watcher: Watcher
            if family:
                watcher = _family_follower(session, client, hints, shared, reader, reporter, config, rows)
            else:
                watcher = _parent_watcher(session, client, hints, shared, reader, reporter, config)
            outcome = watcher.run()
            for junit_file in files:
                read = child_reader(client, hints, {parent: reader.path}, pages=1)
                stop = _write_junit(junit_file, outcome, watcher.entries, read)
                if stop is not None:  # the watch's `result` is written: end as the signal says
                    raise SystemExit(interrupt_status(stop))
        if outcome.exit_code:
            raise SystemExit(outcome.exit_code)

    run(session, body, report=_failure_report(common, reporter, files))


def _failure_report(common: Common, reporter: Any, files: list[JunitFile]) -> Report:
    """The shell's report of a failure outside the loop's own handling: the JUnit file saying
    so, the error event or line, then (with `--json`) `result`."""

    def report(error: HermesError, status: int) -> None:
        for junit_file in files:
            try:
                junit_file.failed(error, status)
            except HermesError as unwritten:  # the command's own failure still ends it
                stderr_line(common, f"error: {unwritten.message}", "bold red")
        interrupted = error.code is Code.INTERRUPTED
        if not interrupted:
            reporter.error(error, retrying=False, delay=None)
        if common.json:
            reporter.result(Outcome("interrupted" if interrupted else "failed", "unknown", None, status), [])

    return report


def _timing(
    session: Session,
    client: DashboardAPI,
    hints: StoreHints,
    shared: SharedDetails,
    sleep: Callable[[float], None] | None = None,
) -> dict[str, Any]:
    """What both loops wait and resolve by: the clock, the idle sleep (which watches stdout),
    the back-off jitter, the `--debug` writer, and each cycle's store proposals of children
    (proven against this cycle's `shared` details)."""
    env = session.env
    return {
        "clock": env.clock,
        "sleep": sleep or env.sleep or idle_sleep(env.stdout),
        "jitter": JITTER,
        "debug": session.debug,
        "resolve": lambda messages, found: find_children(client, hints, messages, found, shared),
        "shared": shared,
        "notes": hints.warnings,  # store_unavailable, once per run, in every live command
    }


def _open_child(client: DashboardAPI, hints: StoreHints, shared: SharedDetails) -> OpenChild:
    """How `follow --parent` (and `tui`) read a child: as `follow CHILD` reads it (hint,
    store), once proven; the detail its store proposal was proven with this cycle is its
    first read."""

    def open_child(child_id: str, parents: frozenset[str]) -> TaskReader:
        gate = admit(parents, client.detail)
        return TaskReader(client, child_id, hint=True, store=hints, admit=gate, shared=shared)

    return open_child


def _family_follower(
    session: Session,
    client: DashboardAPI,
    hints: StoreHints,
    shared: SharedDetails,
    reader: TaskReader,
    reporter: Any,
    config: PollConfig,
    rows: RowFilter | None,
) -> FamilyFollower:
    """`follow --parent`'s loop, with the undelivered-completion rule as `recover --watch`
    applies it (without the usage reads)."""
    timing = _settled_timing(session, client, hints, shared, reporter, usage=False)
    return FamilyFollower(reader, reporter, config, _open_child(client, hints, shared), rows=rows, **timing)


def _parent_watcher(
    session: Session,
    client: DashboardAPI,
    hints: StoreHints,
    shared: SharedDetails,
    reader: TaskReader,
    reporter: Any,
    config: PollConfig,
) -> Watcher:
    """`recover --watch`'s loop; each cycle also settles the tasks whose child ended
    unreported (their usage read too)."""
    timing = _settled_timing(session, client, hints, shared, reporter)
    return Watcher(reader, reporter, config, **timing)


def _settled_timing(
    session: Session,
    client: DashboardAPI,
    hints: StoreHints,
    shared: SharedDetails,
    reporter: Any,
    sleep: Callable[[float], None] | None = None,
    *,
    usage: bool = True,
) -> dict[str, Any]:
    """`_timing`, with the settle step of every parent loop: each cycle's tasks whose child
    ended unreported (`reading/unreported.py`), and with `usage` their usage, as `resolve`
    and `recheck`."""
    settle = Unreported(
        client,
        hints,
        per_cycle=MAX_CHECKS_PER_CYCLE,
        usage=usage,
        debug=session.debug,
        warn=reporter.warning,
        shared=shared,
    )
    timing = _timing(session, client, hints, shared, sleep)
    found = timing.pop("resolve")
    timing["resolve"] = lambda messages, tasks: settle(messages, found(messages, tasks))
    timing["recheck"] = settle
    return timing


def screen_follower(
    session: Session,
    client: DashboardAPI,
    hints: StoreHints,
    parent: str,
    reporter: FamilyReporter,
    config: PollConfig,
    sleep: Callable[[float], None],
    *,
    recursive: bool = False,
) -> FamilyFollower:
    """`tui`'s loop: `follow --parent`'s (every proven child's rows) with `recover --watch`'s
    tasks (the same settle step: a child's end noticed without a parent row, usage), so its
    statuses, warnings and proofs are theirs; `sleep` is the screen's (it ends the loop on
    quit). `recursive`: each proven child's own tasks too, each conversation's watched as the
    parent's (its settle step its own), to `recover --recursive`'s depth."""
    reader = TaskReader(client, parent, hint=False)
    shared = SharedDetails(client)
    timing = _settled_timing(session, client, hints, shared, reporter, sleep)

    def nest(child: TaskReader, tagged: Tagged) -> Watcher:
        nested = _settled_timing(session, client, hints, shared, tagged, sleep)
        return Watcher(child, tagged, config, **nested)

    opened = _open_child(client, hints, shared)
    depth = MAX_DEPTH if recursive else 0
    return FamilyFollower(reader, reporter, config, opened, nest=nest, depth=depth, **timing)


def _write_junit(
    junit_file: JunitFile, outcome: Outcome, entries: list[TaskEntry], read: Reader
) -> KeyboardInterrupt | None:
    """The JUnit file of a watch that ended: the last rows of the tasks that did not pass are
    read unless a signal stopped the watch (or it failed: its reads would fail alike)."""
    still = still_after_watch(outcome.ending, outcome.exit_code, outcome.failure)
    quiet = outcome.ending in ("interrupted", "failed")
    unread = still.replace("still running when ", "not read: ") if quiet else ""
    return junit_file.write(
        entries, still=still, read=None if quiet else read, failure=outcome.failure, unread=unread
    )
