"""`hermes-task tui [PARENT_ID]`: every task of a parent live on one screen (Textual, an extra).

The screen (`render/livescreen.py`) is one more reporter of `recover.parent_loop`, run in a thread
of its own; `q` sets the stop event the loop's `sleep` waits on. Only this command imports Textual.
"""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING, Annotated, Any, cast

import typer

from hermes_task.cli.options import Common, Interval, argument, command_app, complete_parent_id, with_common
from hermes_task.failures import HermesError

if TYPE_CHECKING:
    from hermes_task.cli.session import Session
    from hermes_task.core.documents import Row, WarningItem
    from hermes_task.reading.family import FamilyFollower
    from hermes_task.reading.reader import TaskReader
    from hermes_task.render.livescreen import Emit, Loop, TaskScreenApp

STOP_WAIT = 5.0  # seconds the screen waits, after q, for the loop's request in flight
PARENTS = 50  # the parents listed when no PARENT_ID is given (`parents --limit`'s most)
INSTALL = "error: hermes-task tui needs Textual: pip install 'hermes-task[tui]'"

app = command_app()


@app.command()
@with_common(pager=False, json=False)
def tui(
    parent_id: Annotated[
        str | None,
        argument(
            "[PARENT_ID]",
            "The parent chat's session id; without it the screen opens on `hermes-task parents`' list.",
            complete_parent_id,
        ),
    ] = None,
    interval: Interval = 2.0,
    exit_status: Annotated[
        bool,
        typer.Option(
            "--exit-status",
            help="On q, exit as recover --watch --exit-status would for the verdict at that moment: "
            "0 every task completed, 8 one failed or ended unreported, 9 one still runs.",
        ),
    ] = False,
    recursive: Annotated[
        bool,
        typer.Option(
            "--recursive",
            help="Nest the tasks each task delegated in turn (depth <= 8), as recover does: "
            "numbered under their task (1.2/1.1), live like the others.",
        ),
    ] = False,
    **shared: Any,
) -> None:
    """Every task of a parent chat live on one screen: the task table, the selected task's transcript.

    The screen is driven by the watch loop of recover --watch and follow --parent (the same statuses, proofs and warnings), every --interval seconds. Keys: j/k select, Enter the transcript, f follow, w wrap, r reasoning, o older rows, / search, e only what went wrong, s status filter, y copy the child id, c the CLI command, ? help, q quit. Needs the tui extra: pip install 'hermes-task[tui]'.
    """
    common = Common.of(shared)
    if importlib.util.find_spec("textual") is None:
        common.env.stderr.write(INSTALL + "\n")
        raise typer.Exit(2)
    from hermes_task.cli.session import Session, shell  # lazy: the work (and Textual), off --help

    with shell(Session(common)) as session:
        screen = build(session, parent_id, interval=interval, exit_status=exit_status, recursive=recursive)
        try:
            code = screen.run()
        finally:
            if screen.loop is not None:
                screen.loop.stop(STOP_WAIT)
        if code:
            raise SystemExit(code)


def build(
    session: Session, parent_id: str | None, *, interval: float, exit_status: bool, recursive: bool = False
) -> TaskScreenApp:
    """The screen: `start` runs a parent's loop in a thread of its own, its events to `emit`."""
    import threading  # lazy: the work (and Textual), off --help

    from hermes_task.cli.recover import parent_loop  # lazy: as threading
    from hermes_task.core.events import ErrorEvent, ResultEvent  # lazy: as threading
    from hermes_task.core.sanitize import check_id  # lazy: as threading
    from hermes_task.core.wire import PAGE_LIMIT  # lazy: as threading
    from hermes_task.reading.hints import admit  # lazy: as threading
    from hermes_task.reading.polling import PollConfig  # lazy: as threading
    from hermes_task.reading.reader import TaskReader  # lazy: as threading
    from hermes_task.reading.stream import Plan, read_batches  # lazy: as threading
    from hermes_task.reading.tasktree import MAX_DEPTH  # lazy: as threading
    from hermes_task.render.livescreen import EventFeed, Loop, TaskScreenApp  # lazy: as threading

    parent = None if parent_id is None else check_id(parent_id, what="PARENT_ID")
    client, hints = session.client, session.hints
    lineage: dict[str, FamilyFollower] = {}  # the parent's loop: its proven lineages gate `o`'s reads
    config = PollConfig(interval=interval, exit_status=exit_status)

    def start(chosen: str, emit: Emit) -> Loop:
        stop = threading.Event()

        def sleep(seconds: float) -> None:
            (session.env.sleep or stop.wait)(seconds)  # the Environment's sleep: the tests' clock
            if stop.is_set():
                raise KeyboardInterrupt

        depth = MAX_DEPTH if recursive else 0  # each proven child's own tasks, as `recover --recursive`
        follower = cast(
            "FamilyFollower", parent_loop(session, chosen, EventFeed(emit), config, sleep, depth=depth)
        )

        def loop() -> None:
            try:
                follower.run()
            except HermesError as err:  # a failure before the loop's own handling (its first read's)
                emit(ErrorEvent(code=err.code.value, message=err.message, retryable=False), None)
                emit(ResultEvent(state="unknown", end_reason=None, exit_code=int(err.exit_status)), None)

        lineage[chosen] = follower
        thread = threading.Thread(target=loop, name="hermes-task-tui-watch", daemon=True)
        thread.start()
        return Loop(stop, thread)

    readers: dict[str, TaskReader] = {}  # `o`'s, one per child, kept across presses

    def older(child: str) -> tuple[list[Row], list[WarningItem], bool]:
        """One more batch of a child's older rows, as `older` pages, gated on the proven lineages."""
        reader = readers.get(child)
        warnings: list[WarningItem] = []
        if reader is None:
            parents = frozenset().union(*(loop.lineages() for loop in list(lineage.values())))
            reader = TaskReader(client, child, hint=True, store=hints, admit=admit(parents, client.detail))
            snap = reader.refresh()
            if snap.failure is not None:
                raise snap.failure
            warnings += snap.warnings
            readers[child] = reader
        paged = read_batches(reader, Plan(batches=1, limit=PAGE_LIMIT))
        return reader.rows(), warnings + paged.warnings, reader.reached_start

    return TaskScreenApp(
        start=start,
        parent_id=parent,
        parents=lambda: session.parents(PARENTS),
        older=older,
        url=session.settings.url,
        interval=interval,
        exit_status=exit_status,
    )
