"""`hermes-task show`: one verified snapshot of a delegated task's transcript."""

from __future__ import annotations

from typing import Annotated

import typer

from hermes_task.cli import (
    ChildId,
    Color,
    ColorMode,
    Debug,
    Gateway,
    Json,
    NoHint,
    Pager,
    PasswordFile,
    Profile,
    RequestTimeout,
    Timeout,
    Tips,
    TokenFile,
    Url,
    Username,
    app,
    connect,
    fail,
    guarded,
    options_from,
    output_transcript,
    run,
)


@app.command()
def show(
    child_id: ChildId,
    tip: Tips = None,
    around: Annotated[
        list[int] | None,
        typer.Option(
            "--around",
            metavar="ROW_ID",
            help="Show the window around this row id (current backends; repeatable).",
            show_default=False,
        ),
    ] = None,
    reasoning: Annotated[
        bool, typer.Option("--reasoning", help="Show reasoning expanded (JSON always carries it).")
    ] = False,
    no_hint: NoHint = False,
    json_out: Json = False,
    pager: Pager = None,
    url: Url = None,
    gateway: Gateway = None,
    profile: Profile = None,
    token_file: TokenFile = None,
    username: Username = None,
    password_file: PasswordFile = None,
    request_timeout: RequestTimeout = None,
    timeout: Timeout = None,
    color: Color = ColorMode.auto,
    debug: Debug = False,
) -> None:
    """One verified snapshot of a delegated task's transcript.

    Reads the task root's detail, its newest messages page and a fresh detail; a newer
    segment (--tip, or the dashboard's latest-descendant hint) is shown only after its
    lineage is proven back to CHILD_ID.
    """
    opts = options_from(locals())

    def body() -> None:
        from hermes_task.core.ids import check_id

        anchor = check_id(child_id, what="CHILD_ID")
        tips = [check_id(t, what="--tip") for t in tip or []]
        with connect(opts) as client:
            from hermes_task.reading.reader import TaskReader

            reader = TaskReader(client, anchor, tips=tips, hint=not no_hint)
            snap = guarded(opts, reader, reader.refresh)
            if around:
                from hermes_task.reading.around import read_around

                snap = guarded(opts, reader, lambda: read_around(reader, around, snap))
            doc = reader.document(snap.warnings)
            if snap.failure is not None and opts.json:
                fail(opts, snap.failure, doc.rows)
            output_transcript(opts, doc, reasoning=reasoning)
            if snap.failure is not None:
                fail(opts, snap.failure, doc.rows)

    run(opts, body)
