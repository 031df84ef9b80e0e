"""`hermes-task show`: one verified snapshot of a delegated task's transcript (read by
`session.read_transcript`, as `older` reads it)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from hermes_task.cli.options import (
    ChildId,
    Common,
    Full,
    NoHint,
    Reasoning,
    Roles,
    Tail,
    Tips,
    Utc,
    command_app,
    with_common,
)

app = command_app()


@app.command()
@with_common(formats=True)
def show(
    child_id: ChildId,
    tip: Tips = None,
    around: Annotated[
        list[int] | None,
        typer.Option(
            "--around",
            metavar="ROW_ID",
            help="Show the window around this row id (current backends; repeatable).",
        ),
    ] = None,
    reasoning: Reasoning = False,
    full: Full = False,
    utc: Utc = False,
    no_hint: NoHint = False,
    tail: Tail = None,
    role: Roles = None,
    **shared: Any,
) -> None:
    """One verified snapshot of a delegated task's transcript.

    Reads the task root's detail, its newest messages page and a fresh detail; a newer
    segment (--tip, the dashboard's latest-descendant hint, or a continuation in the local
    store) is shown only after its lineage is proven back to CHILD_ID.
    """
    common = Common.of(shared)
    from hermes_task.cli.session import (  # lazy: the work, off --help
        Session,
        finish,
        output_transcript,
        read_transcript,
        shell,
    )
    from hermes_task.core.projection import RowFilter  # lazy: as the session
    from hermes_task.reading.reader import read_around  # lazy: as the session

    with shell(Session(common)) as session:
        step = (lambda reader, snap: read_around(reader, around, snap)) if around else None
        picked = RowFilter.of(role, tail)  # what is printed, in the error document too
        reading = read_transcript(
            session, child_id=child_id, tip=tip, no_hint=no_hint, step=step, picked=picked
        )
        session.ending = finish(
            common,
            reading,
            lambda doc: output_transcript(session, doc, reasoning=reasoning, full=full, utc=utc),
        )
