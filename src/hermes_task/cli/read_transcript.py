"""The one transcript read of `show` and `older`: the task's newest page, its fill, the
command's own step (`--around` windows, older batches), its goal, and the document.

Invariant: reading returns its outcome and raises nothing it knows: a `Transcript` holds the
document (None when a step failed before it could be built), the rows verified, and the
failure to report after them. The shell renders it once (`finish`): with `--json` either
the document or the error document; otherwise the rows, then the error line. So `show` and
`older` cannot write different documents for the same failure.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from hermes_task.cli.common import Common
from hermes_task.cli.endings import Ending
from hermes_task.cli.session import Session
from hermes_task.core.documents import TranscriptDoc
from hermes_task.core.projection import RowFilter, filtered
from hermes_task.core.sanitize import check_id
from hermes_task.failures import HermesError
from hermes_task.reading.reader import Snapshot, TaskReader, Transcript

# A command's own step after the fill: given the reader and the refresh's snapshot, the
# snapshot whose warnings (and failure) the document carries, or None when the step wrote
# the output itself (`older --all` streamed: cli/older_stream.py).
Step = Callable[[TaskReader, Snapshot], Snapshot | None]


def read_transcript(
    session: Session,
    *,
    child_id: str,
    tip: Sequence[str] | None,
    no_hint: bool,
    step: Step | None = None,
    picked: RowFilter | None = None,
) -> Transcript:
    """Read the task `child_id` (its `--tip` candidates, the hint unless `no_hint`), run
    `step`, and build the document; `picked` selects the rows shown (and reported)."""
    anchor = check_id(child_id, what="CHILD_ID")
    tips = [check_id(t, what="--tip") for t in tip or []]
    with session.reading() as (client, hints):
        reader = TaskReader(client, anchor, tips=tips, hint=not no_hint, store=hints)
        session.known.rows = shown = reader.rows if picked is None else (lambda: picked.select(reader.rows()))
        try:
            snap = reader.refresh()
            reader.fill()
            if step is not None:
                stepped = step(reader, snap)
                if stepped is None:  # written already: nothing to render, nothing failed
                    return Transcript(rows=shown())
                snap = stepped
            reader.read_goal()
        except HermesError as exc:
            return Transcript(rows=shown(), failure=exc)
        doc = reader.document(snap.warnings)
        if picked is not None:
            doc = filtered(doc, picked)
        return Transcript(rows=doc.rows, doc=doc, failure=snap.failure)


def finish(common: Common, reading: Transcript, output: Callable[[TranscriptDoc], None]) -> Ending | None:
    """`output` the document unless a failure's error document replaces it (`--json`);
    returns the ending for the shell to report."""
    doc = reading.doc
    if doc is not None and (reading.failure is None or not common.json):
        output(doc)
    if reading.failure is None:
        return None
    return Ending(reading.failure, reading.rows, doc.task if doc is not None else None)
