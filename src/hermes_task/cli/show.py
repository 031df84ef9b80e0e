"""`hermes-task show`: one verified snapshot of a delegated task's transcript."""

from __future__ import annotations

from typing import Annotated

import typer

from hermes_task.cli.options import ChildId, Common, Full, NoHint, Reasoning, Tips, Utc, with_common
from hermes_task.cli.output import output_transcript
from hermes_task.cli.selection import Roles, Tail
from hermes_task.cli.shell import Known, connect, debug_writer, fail, guarded, resolve_settings, run
from hermes_task.cli.store import store_hints


@with_common()
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
    reasoning: Reasoning = False,
    full: Full = False,
    utc: Utc = False,
    no_hint: NoHint = False,
    tail: Tail = None,
    role: Roles = None,
    *,
    common: Common,
) -> None:
    """One verified snapshot of a delegated task's transcript.

    Reads the task root's detail, its newest messages page and a fresh detail; a newer
    segment (--tip, the dashboard's latest-descendant hint, or a continuation in the local
    store) is shown only after its lineage is proven back to CHILD_ID.
    """

    def body(known: Known) -> None:
        from hermes_task.core.ids import check_id
        from hermes_task.core.rowfilter import RowFilter, filtered

        anchor = check_id(child_id, what="CHILD_ID")
        tips = [check_id(t, what="--tip") for t in tip or []]
        picked = RowFilter.of(role, tail)  # what is printed, in the error document too
        with connect(common) as client, store_hints(resolve_settings(common), debug_writer(common)) as hints:
            from hermes_task.reading.reader import TaskReader

            reader = TaskReader(client, anchor, tips=tips, hint=not no_hint, store=hints)
            known.rows = shown = lambda: picked.select(reader.rows())
            steps = Known(rows=shown)
            snap = guarded(common, steps, reader.refresh)
            guarded(common, steps, reader.fill)
            if around:
                from hermes_task.reading.around import read_around

                snap = guarded(common, steps, lambda: read_around(reader, around, snap))
            guarded(common, steps, reader.read_goal)
            doc = filtered(reader.document(snap.warnings), picked)
            if snap.failure is not None and common.json:
                fail(common, snap.failure, doc.rows, doc.task)
            output_transcript(common, doc, reasoning=reasoning, full=full, utc=utc)
            if snap.failure is not None:
                fail(common, snap.failure, doc.rows, doc.task)

    run(common, body)
