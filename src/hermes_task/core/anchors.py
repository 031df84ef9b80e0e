"""Anchored older pages: where the next older page is read, and how its answer is merged.

Invariant: an older page always ends with the block's first known row (the anchor), so a
page that shifted because the task kept writing is detected instead of merged, and no row
is skipped or repeated.
"""

from __future__ import annotations

from collections.abc import Sequence

from msgspec import Struct
from msgspec.structs import replace

from hermes_task.core.merge import merge_older
from hermes_task.core.window import MergeResult, Window, key_of
from hermes_task.core.wire import WireMessage


class OlderRequest(Struct, frozen=True):
    """Where the next older page is read. Current backends count `offset` back from the
    newest row; legacy ones from the oldest. Either way the page ends with the block's
    first row (the anchor), so a shifted page is detected instead of merged."""

    offset: int
    limit: int
    generation: int
    legacy: bool

    def exhausted(self, returned: int) -> bool:
        """Did this read reach the segment's raw start?"""
        return self.offset == 0 if self.legacy else returned < self.limit


def older_request(window: Window, *, legacy: bool, limit: int, cap: int) -> OlderRequest | None:
    """The anchored read of up to `limit` rows older than the block (one more row, within
    `cap`, re-reads the anchor); None when the block reaches the start or is empty."""
    if window.fresh or window.at_start or not window.coverage:
        return None
    size = max(2, min(limit + 1, cap))
    if not legacy:
        offset = max(0, window.coverage - 1 + window.head)
        return OlderRequest(offset, size, window.generation, legacy=False)
    low = window.legacy_low
    if low is None or low <= 0:
        return None
    size = min(size, low + 1)
    return OlderRequest(low + 1 - size, size, window.generation, legacy=True)


def merge_anchored(window: Window, request: OlderRequest, page: Sequence[WireMessage]) -> MergeResult:
    """Merge the answer to `request` (see `merge_older`, anchored). On a current backend the
    anchor's place in the page measures how many rows were appended since the block's
    newest row was read (`head`), so the next offset still lands on the block's first
    row while the task keeps writing: progress per page is the page size minus the rows
    appended between two reads, never a skip."""
    exhausted = request.exhausted(len(page))
    if request.legacy:
        return merge_older(
            window,
            page,
            exhausted=exhausted,
            offset=request.offset,
            anchored=True,
            generation=request.generation,
        )
    result = merge_older(window, page, exhausted=exhausted, anchored=True, generation=request.generation)
    if result.stale or result.detached:
        return result
    anchor = window.keys[window.block_start]
    where = max(i for i, msg in enumerate(page) if key_of(msg) == anchor)
    anchor_offset = request.offset + len(page) - 1 - where
    merged = result.window
    known_after = len(merged.keys) - 1 - merged.keys.index(anchor)
    return replace(result, window=replace(merged, head=anchor_offset - known_after))
