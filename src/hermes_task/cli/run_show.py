"""`show`'s work: what `hermes-task show` runs once typer has parsed its arguments
(`cli/show.py` declares the command), callable with plain values as gh's `runF` is.
"""

from __future__ import annotations

from collections.abc import Sequence

from hermes_task.cli.common import Common, RoleName
from hermes_task.cli.endings import Ending
from hermes_task.cli.output import output_transcript
from hermes_task.cli.read_transcript import Step, finish, read_transcript
from hermes_task.cli.session import Session
from hermes_task.cli.shell import run
from hermes_task.core.projection import RowFilter
from hermes_task.reading.reader import read_around


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

    def body(session: Session) -> Ending | None:
        step: Step | None = None
        if around:
            step = lambda reader, snap: read_around(reader, around, snap)  # noqa: E731
        picked = RowFilter.of(role, tail)  # what is printed, in the error document too
        reading = read_transcript(
            session, child_id=child_id, tip=tip, no_hint=no_hint, step=step, picked=picked
        )
        return finish(
            common,
            reading,
            lambda doc: output_transcript(session, doc, reasoning=reasoning, full=full, utc=utc),
        )

    run(Session(common), body)
