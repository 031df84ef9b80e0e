"""`tui`'s work: what `hermes-task tui` runs once typer has parsed its arguments (`cli/tui.py`
declares the command): the screen (`render/livescreen.py`) over this run's client and store,
its watch loop (`cli/watch.py` `screen_follower`) in a thread of its own, `parents`' list
(`reading/parentfinder.py`) and `older`'s paging (`reading/older_batches.py`) for `o`.

The loop's `sleep` waits on the screen's stop event: `q` sets it, the loop ends at its next
wait (as Ctrl-C ends `recover --watch`), and the screen waits at most `STOP_WAIT` seconds for
a request still in flight. The exit status is the screen's (`livescreen.quit_status`).
"""

from __future__ import annotations

import threading

from hermes_task.cli.common import Common
from hermes_task.cli.quiet import QuietNotes
from hermes_task.cli.session import Session
from hermes_task.cli.shell import run
from hermes_task.cli.watch import screen_follower
from hermes_task.core.delegators import ParentEntry
from hermes_task.core.documents import Row, WarningItem
from hermes_task.core.events import ErrorEvent, ResultEvent
from hermes_task.core.ids import check_id
from hermes_task.core.limits import PAGE_LIMIT
from hermes_task.dashboard.client import DashboardClient
from hermes_task.failures import HermesError
from hermes_task.reading.family import FamilyFollower
from hermes_task.reading.family_child import FamilyReporter
from hermes_task.reading.hints import StoreHints
from hermes_task.reading.older_batches import Plan, read_batches
from hermes_task.reading.ownership import admit
from hermes_task.reading.parentfinder import find_parents
from hermes_task.reading.polling import START_TIMEOUT, PollConfig
from hermes_task.reading.reader import TaskReader
from hermes_task.render.livescreen import Emit, EventFeed, Loop, ReadOlder, TaskScreenApp

STOP_WAIT = 5.0  # seconds the screen waits, after q, for the loop's request in flight
PARENTS = 50  # the parents listed when no PARENT_ID is given (`parents --limit`'s most)


def run_tui(
    common: Common, parent_id: str | None, *, interval: float, exit_status: bool, recursive: bool = False
) -> None:
    """Check the parent id, open the client and the store, run the screen until `q`."""
    code: list[int] = []

    def body(session: Session) -> None:
        screen = build(session, parent_id, interval=interval, exit_status=exit_status, recursive=recursive)
        try:
            code.append(screen.run() or 0)
        finally:
            if screen.loop is not None:
                screen.loop.stop(STOP_WAIT)

    run(Session(common), body)
    if code and code[0]:
        raise SystemExit(code[0])


def build(
    session: Session, parent_id: str | None, *, interval: float, exit_status: bool, recursive: bool = False
) -> TaskScreenApp:
    """The screen over this session's client and store (the tests run it with `run_test`)."""
    parent = None if parent_id is None else check_id(parent_id, what="PARENT_ID")
    client, hints = session.client, session.hints
    lineage: dict[str, FamilyFollower] = {}  # the parent's loop: its proven lineages gate `o`'s reads
    return TaskScreenApp(
        start=lambda chosen, emit: start_loop(
            session, client, hints, chosen, emit, lineage, interval, exit_status, recursive
        ),
        parent_id=parent,
        parents=lambda: list_parents(session),
        older=older_reader(client, hints, lineage),
        url=session.settings.url,
        interval=interval,
        exit_status=exit_status,
    )


def start_loop(
    session: Session,
    client: DashboardClient,
    hints: StoreHints,
    parent: str,
    emit: Emit,
    lineage: dict[str, FamilyFollower],
    interval: float,
    exit_status: bool,
    recursive: bool = False,
) -> Loop:
    """`screen_follower` on `parent` in a thread of its own; its events to `emit`."""
    stop = threading.Event()
    env_sleep = session.env.sleep

    def sleep(seconds: float) -> None:
        if env_sleep is not None:
            env_sleep(seconds)  # the tests' clock
        elif stop.wait(seconds):
            raise KeyboardInterrupt
        if stop.is_set():
            raise KeyboardInterrupt

    config = PollConfig(interval=interval, exit_status=exit_status, start_timeout=START_TIMEOUT)
    feed = EventFeed(emit)  # --quiet: the setup's warnings stay off the screen, as off stderr
    reporter: FamilyReporter = QuietNotes(feed) if session.common.quiet else feed
    follower = screen_follower(session, client, hints, parent, reporter, config, sleep, recursive=recursive)

    def loop() -> None:
        try:
            follower.run()
        except HermesError as err:  # a failure before the loop's own handling (its first read's)
            emit(ErrorEvent(code=err.code.value, message=err.message, retryable=False), None)
            emit(ResultEvent(state="unknown", end_reason=None, exit_code=int(err.exit_status)), None)

    lineage[parent] = follower
    thread = threading.Thread(target=loop, name="hermes-task-tui-watch", daemon=True)
    thread.start()
    return Loop(stop, thread)


def list_parents(session: Session) -> tuple[list[ParentEntry], list[WarningItem]]:
    """`hermes-task parents`' entries (the store proposes, the dashboard proves)."""
    resolved = session.settings
    store = session.open_store()
    path = str(resolved.store) if resolved.store is not None else None
    try:
        return find_parents(
            session.client, store, PARENTS, off=resolved.store_off, path=path, debug=session.debug
        )
    finally:
        if store is not None:
            store.close()


def older_reader(client: DashboardClient, hints: StoreHints, lineage: dict[str, FamilyFollower]) -> ReadOlder:
    """`o`: one more batch of older rows of a child, as `hermes-task older` pages (a reader per
    child, kept across presses, gated on the proven lineages the loop reads: the parent's and,
    with --recursive, each nested conversation's)."""

    readers: dict[str, TaskReader] = {}

    def read(child: str) -> tuple[list[Row], list[WarningItem], bool]:
        reader = readers.get(child)
        warnings: list[WarningItem] = []
        if reader is None:
            parents = frozenset().union(*(loop.lineages() for loop in list(lineage.values())))
            gate = admit(parents, client.detail)
            reader = TaskReader(client, child, hint=True, store=hints, admit=gate)
            snap = reader.refresh()
            if snap.failure is not None:
                raise snap.failure
            warnings += snap.warnings
            readers[child] = reader
        paged = read_batches(reader, Plan(batches=1, limit=PAGE_LIMIT))
        warnings += paged.warnings
        return reader.rows(), warnings, reader.reached_start

    return read
