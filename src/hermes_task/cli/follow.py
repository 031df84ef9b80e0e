"""`hermes-task follow`: each new row of a delegated task once, until it ends (the loop:
`reading/polling.py`); or, with `--parent`, every task of a parent chat (`recover.drive`).
NDJSON: docs/json.md "`--json`: NDJSON events"."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from hermes_task.cli.options import (
    Common,
    Full,
    Interval,
    NoHint,
    Reasoning,
    Roles,
    Tail,
    Tips,
    Utc,
    argument,
    command_app,
    complete_parent_id,
    complete_task_id,
    seconds,
    with_common,
)

app = command_app()


@app.command()
@with_common(pager=False, events="events")
def follow(
    child_id: Annotated[
        str | None,
        argument(
            "[CHILD_ID]",
            "The task's root session id (its first durable reference; `recover PARENT` prints it); or give --parent.",
            complete_task_id,
        ),
    ] = None,
    parent: Annotated[
        str | None,
        typer.Option(
            "--parent",
            metavar="PARENT_ID",
            help="Follow every task PARENT_ID delegated: rows prefixed with the task's number, "
            "tasks joining as they start, until every task ended (--exit-status: by the parent's verdicts).",
            show_default=False,
            autocompletion=complete_parent_id,
        ),
    ] = None,
    tip: Tips = None,
    no_hint: NoHint = False,
    interval: Interval = 2.0,
    exit_status: Annotated[
        bool, typer.Option("--exit-status", help="Exit 8 when the task did not close itself (agent_close).")
    ] = False,
    timeout: Annotated[
        float | None,
        seconds(
            "--timeout",
            help="Stop after S seconds in all; exit 9 when the task is known to be still running.",
            show_default=False,
        ),
    ] = None,
    start_timeout: Annotated[
        float,
        seconds(
            "--start-timeout",
            help="Give up after S seconds of 'not found' (an unflushed child, or a typo): exit 4; or after S "
            "seconds in which no read succeeded yet (a dashboard that is down): that failure's code.",
        ),
    ] = 60.0,
    reasoning: Reasoning = False,
    full: Full = False,
    utc: Utc = False,
    tail: Tail = None,
    role: Roles = None,
    **shared: Any,
) -> None:
    """Print each new row of a delegated task once, as it arrives, until the task ends.

    Every --interval seconds: the task's detail, its newest page and a fresh detail. When the task ends, one final read, then exit.

    A newer segment (--tip, the dashboard's latest-descendant hint, or a continuation in the local store) is followed only after its lineage is proven back to CHILD_ID.
    """
    common = Common.of(shared)
    if (child_id is None) == (parent is None):
        raise typer.BadParameter("give either CHILD_ID or --parent PARENT_ID")
    if parent is not None and tip:
        raise typer.BadParameter("--tip names a segment of one task: not with --parent")
    from hermes_task.cli.session import Session, live_failure, shell  # lazy: the work, off --help
    from hermes_task.core.projection import RowFilter  # lazy: as the session
    from hermes_task.render.watchout import JsonEvents, TerminalReporter, TextFamily  # lazy: as the session

    env = common.env
    session = Session(common)
    rows = RowFilter.of(role, tail)
    events = JsonEvents(env.write_stdout, env.write_stderr) if common.json else None
    limits: dict[str, Any] = {"timeout": timeout, "exit_status": exit_status, "start_timeout": start_timeout}
    if parent is not None:  # every task's rows, prefixed, until every task ended
        from hermes_task.cli.recover import drive  # lazy: the parent loop

        family = events or TextFamily(session.target, session.err_console, interval)
        drive(session, parent, family, limits, rows=rows, interval=interval)
        return
    assert child_id is not None
    from hermes_task.cli.session import dropped, idle_sleep, stderr_line  # lazy: as the session
    from hermes_task.core.sanitize import check_id  # lazy: as the session
    from hermes_task.reading.polling import Follower, PollConfig  # lazy: as the session
    from hermes_task.reading.reader import TaskReader  # lazy: as the session
    from hermes_task.render.rows import View  # lazy: as the session

    config = PollConfig(interval=interval, rows=rows, **limits)
    reporter = events or TerminalReporter(
        session.target,
        lambda line, style: stderr_line(common, line, style),
        lambda code: not dropped(common.quiet, code),
        interval,
        child_id,
        View(reasoning, full, utc),
        stderr_tty=env.isatty(env.stderr),
    )

    with shell(session, report=lambda error, status: live_failure(common, reporter, error, status)):
        anchor = check_id(child_id, what="CHILD_ID")
        candidates = [check_id(t, what="--tip") for t in tip or []]
        with session.reading() as (client, hints):
            reader = TaskReader(client, anchor, tips=candidates, hint=not no_hint, store=hints)
            sleep = env.sleep or idle_sleep(env.stdout)
            follower = Follower(reader, reporter, config, clock=env.clock, sleep=sleep, debug=session.debug)
            outcome = follower.run()
        raise SystemExit(outcome.exit_code)
