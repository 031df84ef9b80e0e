"""`show`'s work: what `hermes-task show` runs once typer has parsed its arguments
(`cli/show.py` declares the command), callable with plain values as gh's `runF` is.
"""

from __future__ import annotations

from collections.abc import Sequence

from hermes_task.cli.common import Common, RoleName
from hermes_task.cli.output import output_transcript
from hermes_task.cli.shell import Known, connect, debug_writer, fail, guarded, resolve_settings, run
from hermes_task.cli.store import store_hints


def run_show(
    common: Common,
    *,
    child_id: str,
    tip: Sequence[str] | None = None,
    around: Sequence[int] | None = None,
    reasoning: bool = False,
    full: bool = False,
    utc: bool = False,
    no_hint: bool = False,
    tail: int | None = None,
    role: Sequence[RoleName] | None = None,
) -> None:
    """One verified snapshot of the task `child_id` (`hermes-task show --help`)."""

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
