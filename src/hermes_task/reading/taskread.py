"""A delegated task's child read for what reports on it: `search`, `recover --format markdown`
and `recover --junit` (pure of typer and rich).

`read_child` reads one task's child: a `TaskReader` anchored at the child id, with the
latest-descendant hint and the local store (so a rotated child is followed into its newer
segments), gated by the ownership proof (`reading/ownership.py`: its detail must name a segment
of the parent's proven lineage before any of its messages is read); then its newest page,
filled from earlier segments as `show` fills it; then older pages: every one back to the start
of its first proven segment as `older --all` reads them (`pages` None, 500 rows a page and
`older --all`'s bounds), or `pages - 1` of them (`pages` 1: the newest page only).

`ChildReads` reads the children of a run, each once, at most `max_reads` of them; a task
without a known child, or past the bound, is `Unread` with a code and the words for it.
Invariant: a read's failure never escapes (Ctrl-C does): it is carried in its `ChildRead`
with the rows verified before it, so one child's failure never ends a run over many.
"""

from __future__ import annotations

from msgspec import Struct, field

from hermes_task.core.documents import Row, TaskEntry, TranscriptDoc, WarningItem
from hermes_task.core.ui_strings import SEARCH, UNAVAILABLE
from hermes_task.core.wire import MAX_LIMIT
from hermes_task.failures import HermesError
from hermes_task.reading.api import DashboardAPI
from hermes_task.reading.details import SharedDetails
from hermes_task.reading.hints import StoreHints
from hermes_task.reading.older_batches import Plan, combine_warnings, read_batches
from hermes_task.reading.ownership import admit
from hermes_task.reading.reader import TaskReader

# Warnings that say a transcript was not read whole, in the order a shortfall names them.
INCOMPLETE = ("bound_reached", "partial_history", "partial_ancestors", "gap")
# Warnings about the backend or the machine, not one child: said once for a run.
RUN_WIDE = frozenset({"legacy_backend", "store_unavailable"})
# Whole transcripts read for one search or report (the task tree's own bound, tasktree's
# MAX_CONVERSATIONS, counts reads of delegating conversations, which are smaller).
MAX_READS = 100


class ChildRead(Struct, frozen=True):
    """One child as read: its proven rows in order (also those verified before a failure),
    its document (None when a failure stopped the read before one), the warnings of the read,
    the failure, the proven segments and whether older rows remain unread."""

    child_id: str
    rows: list[Row]
    doc: TranscriptDoc | None
    failure: HermesError | None
    segments: tuple[str, ...]
    has_older: bool
    warnings: list[WarningItem] = field(default_factory=list)

    def shortfall(self) -> tuple[str, str] | None:
        """(code, message) of why fewer rows were read than asked for: the failure, else the
        first warning that says rows were not read; None when nothing fell short."""
        if self.failure is not None:
            return self.failure.code.value, self.failure.message
        for code in INCOMPLETE:
            for item in self.warnings:
                if item.code == code:
                    return item.code, item.message
        return None


class Unread(Struct, frozen=True):
    """A task whose child was not read: why (a code, and the words for it)."""

    code: str
    message: str


def read_child(
    client: DashboardAPI,
    child_id: str,
    parents: frozenset[str],
    hints: StoreHints | None,
    *,
    pages: int | None = None,
    shared: SharedDetails | None = None,
) -> ChildRead:
    """Read `child_id`, a delegated child of one of `parents` (module docstring); `shared`: the
    run's details (a detail the run read already is not read again)."""
    detail = shared or client.detail
    reader = TaskReader(client, child_id, hint=True, store=hints, admit=admit(parents, detail), shared=shared)
    try:
        snap = reader.refresh()
        reader.fill()
        paging = []
        if pages != 1:
            batches = None if pages is None else pages - 1
            paging = read_batches(reader, Plan(batches=batches, limit=MAX_LIMIT)).warnings
    except HermesError as exc:  # this child only (Ctrl-C is KeyboardInterrupt: it ends the run)
        return ChildRead(child_id, reader.rows(), None, exc, tuple(reader.path), True)
    doc = reader.document(combine_warnings(snap.warnings, paging))
    return ChildRead(
        child_id, doc.rows, doc, snap.failure, tuple(reader.path), doc.coverage.has_older, doc.warnings
    )


def unread(task: TaskEntry) -> Unread | None:
    """Why `task`'s child cannot be read (no child id is known), or None."""
    if task.child_session_id is not None:
        return None
    code = task.unavailable_reason or "no_durable_child_reference"
    return Unread(code, UNAVAILABLE.get(task.unavailable_reason or "", SEARCH["no_child"]))


class ChildReads:
    """The children of one run, each read once (`read_child` with `pages`), at most
    `max_reads`; `bound` is the words for a task past the bound."""

    def __init__(
        self,
        client: DashboardAPI,
        hints: StoreHints | None,
        *,
        pages: int | None = None,
        max_reads: int = MAX_READS,
        bound: str = "",
        shared: SharedDetails | None = None,
    ) -> None:
        self.client = client
        self.shared = shared
        self.hints = hints
        self.pages = pages
        self.max_reads = max_reads
        self.bound = bound
        self.done: dict[str, ChildRead] = {}

    def read(self, task: TaskEntry, parents: frozenset[str]) -> ChildRead | Unread:
        """`task`'s child read (once), or why it was not."""
        missing = unread(task)
        if missing is not None:
            return missing
        child = task.child_session_id
        assert child is not None
        if child in self.done:
            return self.done[child]
        if len(self.done) >= self.max_reads:
            return Unread("bound_reached", self.bound.format(n=self.max_reads))
        found = self.done[child] = read_child(
            self.client, child, parents, self.hints, pages=self.pages, shared=self.shared
        )
        return found


__all__ = ["INCOMPLETE", "MAX_READS", "RUN_WIDE", "ChildRead", "ChildReads", "Unread", "read_child", "unread"]
