"""The transcript window: rows keyed by durable identity, display order and paging coverage.

Identity is (`session_id`, `id`). Row ids are a global AUTOINCREMENT, and a current
backend's tip page merges earlier segments' rows with their own `session_id`s and
non-monotonic ids, so the pair is unique across segments while `message_uid` exists on one
backend only. Order is the server's order: every page is a contiguous chronological slice,
and a merge places new rows beside the rows they share with the window, never by sorting
ids or comparing content.

Adjacency is evidence, never assumed: two neighbouring keys are known adjacent only when
one page carried them next to each other, or an anchored older read re-read the block's
first row at its end (`core/anchors.py`). Every other neighbour starts a new run (`breaks`). The newest run
is the *block*; paging coverage counts its unique fetched identities (hidden rows
included), so the next older offset never double-counts rows appended meanwhile (raw page
lengths plus head growth would skip the old tail).

Invariants (hypothesis-tested): a row identity appears at most once; merging the same page
again changes nothing; a later read of a row replaces its content but not its place; once
every page of one true sequence is merged the order is that sequence.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property

from msgspec import Struct, field
from msgspec.structs import replace

from hermes_task.core.documents import Row, WarningItem
from hermes_task.core.projection import project
from hermes_task.core.wire import WireMessage

RowKey = tuple[str, int]


def key_of(msg: WireMessage) -> RowKey:
    return (msg.session_id, msg.id)


class Window(Struct, frozen=True, dict=True):  # dict: room for the cached properties
    """Rows of one task as known so far, and the paging state of its canonical segment.

    `breaks` holds the keys whose predecessor is not known to be adjacent (a gap, or a
    segment boundary after advancement). `start` is the canonical segment's first row once
    an exhausted read showed it; `empty` records an exhausted first read with no rows.
    `fresh` means no read of the canonical segment has been merged since `advance`: the
    block is empty and the next read is the newest page (offset 0). `legacy_low` is the
    oldest-first offset of the block's first row on legacy backends; `head` is the number
    of rows the last anchored read found newer than the window's newest row (rows the task
    appended since the last refresh), which newest-first offsets must skip.
    """

    keys: tuple[RowKey, ...] = ()
    messages: Mapping[RowKey, WireMessage] = field(default_factory=dict)
    breaks: frozenset[RowKey] = frozenset()
    start: RowKey | None = None
    empty: bool = False
    canonical: str | None = None
    generation: int = 0
    fresh: bool = True
    legacy_low: int | None = None
    head: int = 0

    @cached_property
    def position(self) -> dict[RowKey, int]:
        return {k: i for i, k in enumerate(self.keys)}

    @cached_property
    def block_start(self) -> int:
        """Index of the first key of the newest block (len(keys) while `fresh`)."""
        if self.fresh:
            return len(self.keys)
        if not self.breaks:
            return 0
        position = self.position
        return max((position[k] for k in self.breaks if k in position), default=0)

    @property
    def coverage(self) -> int:
        """Unique fetched identities in the newest block: what the next older read skips."""
        return len(self.keys) - self.block_start

    @property
    def at_start(self) -> bool:
        """The block reaches the canonical segment's first row (its visible start)."""
        if self.fresh:
            return self.empty
        if self.start is None or self.start not in self.messages:
            return False
        return self.block_start == 0 or self.position[self.start] >= self.block_start

    @property
    def has_older(self) -> bool:
        """Rows older than the block may exist (paging the canonical segment can add rows)."""
        return not self.at_start

    def rows(self) -> list[Row]:
        """Displayed rows in order (server-hidden rows omitted)."""
        out: list[Row] = []
        for key in self.keys:
            row = project(self.messages[key])
            if row is not None:
                out.append(row)
        return out


class MergeResult(Struct, frozen=True):
    """The window after a merge. `stale`: the response belonged to an older generation and
    was dropped; `detached`: an anchored older page missed its anchor and was dropped;
    `gap`: a latest page shared no row with the block. `TaskReader.read_older` fills in
    `returned` (raw rows of the merged older page; 0 when none was merged), `restarted`
    (a refresh was needed during the read) and `warnings` (that refresh's)."""

    window: Window
    new_keys: tuple[RowKey, ...]
    gap: bool = False
    stale: bool = False
    detached: bool = False
    returned: int = 0
    restarted: bool = False
    warnings: tuple[WarningItem, ...] = ()


def advance(window: Window, canonical: str) -> Window:
    """Verified advancement to a new canonical segment (or a restart of the same one):
    rows of the same branch are kept, generation moves on, coverage and the start mark
    reset together, and the next read is the newest page at offset 0."""
    return replace(
        window,
        canonical=canonical,
        generation=window.generation + 1,
        fresh=True,
        start=None,
        empty=False,
        legacy_low=None,
        head=0,
    )
