"""`export`'s reading: a parent's tasks and every task's child transcript, proven (pure of typer
and rich).

The tasks are `recover`'s (`reading/parenttasks.py`: the same document `recover --json`
prints, nested with `recursive`), with the parent's own transcript (its rows time the spawn
calls). Each task's child is then read whole, as `search` reads it (`reading/taskread.py`: a
`TaskReader` with the hint and the store, so a rotated child is followed into its newer
segments, gated by the ownership proof, then every older page back to the start of its first
proven segment); a nested task's child must be owned by a segment of its own task's proven
lineage. `render/otlp.py` maps the result to spans: nothing here knows OpenTelemetry.

Bounds: `ChildReads`' (at most `MAX_READS` children a run; a task past it is `Unread` with
`bound_reached`). Invariant: a child's failure is carried in its `ChildRead`, never raised;
a failure to read the parent raises.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from msgspec import Struct

from hermes_task.core.documents import TaskEntry, TasksDoc, TranscriptDoc
from hermes_task.core.ui_strings import RECOVER
from hermes_task.reading.api import DashboardAPI
from hermes_task.reading.details import SharedDetails
from hermes_task.reading.parenttasks import read_parent_tasks
from hermes_task.reading.taskread import ChildRead, ChildReads, Unread
from hermes_task.store.hints import StoreHints


class TraceSource(Struct, frozen=True, kw_only=True):
    """What a trace is made of: `recover`'s tasks document, the parent's transcript, and each
    task's child as read (by child session id) or why it was not."""

    tasks: TasksDoc
    parent: TranscriptDoc
    children: dict[str, ChildRead | Unread]


def read_trace(
    client: DashboardAPI,
    hints: StoreHints,
    parent: str,
    *,
    recursive: bool = False,
    debug: Callable[[str], None] | None = None,
) -> TraceSource:
    """The parent's tasks and their children's whole transcripts (module docstring)."""
    shared = SharedDetails(client)
    got = read_parent_tasks(
        client, hints, parent, shared=shared, recursive=recursive, debug=debug, transcript=True
    )
    assert got.transcript is not None  # asked for: the parent's read always documents it
    reads = ChildReads(client, hints, pages=None, bound=RECOVER["report_bound"], shared=shared)
    children: dict[str, ChildRead | Unread] = {}
    _read_children(reads, got.doc.tasks, frozenset(got.paths.get(parent, (parent,))), children)
    return TraceSource(tasks=got.doc, parent=got.transcript, children=children)


def _read_children(
    reads: ChildReads,
    tasks: Sequence[TaskEntry],
    owners: frozenset[str],
    out: dict[str, ChildRead | Unread],
) -> None:
    """Each task's child read once (owned by a segment of `owners`), then its nested tasks',
    owned by the child's proven segments."""
    for task in tasks:
        child = task.child_session_id
        if child is None or child in out:
            continue
        got = out[child] = reads.read(task, owners)
        if task.children:
            segments = got.segments if isinstance(got, ChildRead) and got.segments else (child,)
            _read_children(reads, task.children, frozenset(segments), out)


__all__ = ["TraceSource", "read_trace"]
