"""The transcript window: rows keyed by durable identity, display order and paging coverage.

Identity is (`session_id`, `id`). Row ids are a global AUTOINCREMENT, and a current
backend's tip page merges earlier segments' rows with their own `session_id`s and
non-monotonic ids, so the pair is unique across segments while `message_uid` exists on one
backend only. Order is the server's order: every page is a contiguous chronological slice,
and a merge places new rows beside the rows they share with the window, never by sorting
ids or comparing content.

Invariants (hypothesis-tested): a row identity appears at most once; merging the same page
again changes nothing; a later read of a row replaces its content but not its place.
Coverage counts unique fetched identities (hidden rows included) in the contiguous newest
block, so the next older offset never double-counts rows appended meanwhile (the seed's
regression: raw page lengths plus head growth would skip the old tail).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from hermes_task.model import Row
from hermes_task.project import project
from hermes_task.wire import WireMessage

RowKey = tuple[str, int]


def key_of(msg: WireMessage) -> RowKey:
    return (msg.session_id, msg.id)


@dataclass(frozen=True)
class Window:
    """Rows of one task as known so far. `breaks` holds the keys whose predecessor is not
    known to be adjacent (a gap, or a segment boundary after advancement)."""

    keys: tuple[RowKey, ...] = ()
    messages: dict[RowKey, WireMessage] = field(default_factory=dict)
    breaks: frozenset[RowKey] = frozenset()
    at_start: bool = False
    canonical: str | None = None
    generation: int = 0
    fresh: bool = True
    legacy_low: int | None = None

    @property
    def block_start(self) -> int:
        """Index of the first key of the contiguous newest block."""
        if not self.breaks:
            return 0
        return max(i for i, k in enumerate(self.keys) if k in self.breaks)

    @property
    def coverage(self) -> int:
        """Unique fetched identities in the contiguous newest block: the next older offset."""
        return len(self.keys) - self.block_start

    @property
    def has_older(self) -> bool:
        return not self.at_start or bool(self.breaks)

    def rows(self) -> list[Row]:
        """Displayed rows in order (server-hidden rows omitted)."""
        out: list[Row] = []
        for key in self.keys:
            row = project(self.messages[key])
            if row is not None:
                out.append(row)
        return out


@dataclass(frozen=True)
class MergeResult:
    window: Window
    new_keys: tuple[RowKey, ...]
    gap: bool = False


def _dedupe(page: Sequence[WireMessage]) -> list[WireMessage]:
    seen: set[RowKey] = set()
    out: list[WireMessage] = []
    for msg in page:
        key = key_of(msg)
        if key not in seen:
            seen.add(key)
            out.append(msg)
    return out


def _splice(
    keys: tuple[RowKey, ...], page: list[RowKey], insert_at: int
) -> tuple[tuple[RowKey, ...], list[RowKey]]:
    """Place the page's unknown keys next to the keys it shares with `keys`; a page that
    shares none goes in at `insert_at`. Returns the new order and the inserted keys."""
    index = {k: i for i, k in enumerate(keys)}
    new = [k for k in page if k not in index]
    if not new:
        return keys, []
    shared = [index[k] for k in page if k in index]
    if not shared:
        return keys[:insert_at] + tuple(new) + keys[insert_at:], new
    head: list[RowKey] = []
    after: dict[int, list[RowKey]] = {}
    anchor: int | None = None
    for k in page:
        if k in index:
            anchor = index[k]
        elif anchor is None:
            head.append(k)
        else:
            after.setdefault(anchor, []).append(k)
    first = shared[0]
    out: list[RowKey] = []
    for i, k in enumerate(keys):
        if i == first:
            out.extend(head)
        out.append(k)
        out.extend(after.get(i, ()))
    return tuple(out), new


def _merge(
    window: Window, page: Sequence[WireMessage], insert_at: int, *, older: bool
) -> tuple[Window, list[RowKey]]:
    msgs = _dedupe(page)
    page_keys = [key_of(m) for m in msgs]
    keys, new = _splice(window.keys, page_keys, insert_at)
    messages = dict(window.messages)
    for msg in msgs:
        messages[key_of(msg)] = msg
    breaks = set(window.breaks)
    position = {k: i for i, k in enumerate(keys)}
    in_page = set(page_keys)
    for prev, cur in itertools.pairwise(page_keys):
        if cur in breaks and position[cur] > 0 and keys[position[cur] - 1] == prev:
            breaks.discard(cur)
    new_set = set(new)
    if page_keys:
        first = page_keys[0]
        pos = position[first]
        if first in new_set and pos > 0 and keys[pos - 1] not in in_page:
            breaks.add(first)
        last = page_keys[-1]
        after = position[last] + 1
        if older and last in new_set and after < len(keys) and keys[after] not in in_page:
            # An older page is read at offset == coverage: it ends right before the block.
            breaks.discard(keys[after])
    return replace(window, keys=keys, messages=messages, breaks=frozenset(breaks)), new


def merge_latest(
    window: Window, page: Sequence[WireMessage], *, exhausted: bool, offset: int | None = None
) -> MergeResult:
    """Merge the newest page of the canonical segment; known older rows are kept.

    The first read of a segment (a new window, or after `advance`) starts its block; the
    start is known when that read was exhausted. A later page that shares no row with the
    window is a gap: its rows go after the known ones, coverage restarts at the page and
    older reads fill the gap.
    """
    first_read = window.fresh
    gap = bool(page) and not first_read and not any(key_of(m) in window.messages for m in page)
    merged, new = _merge(window, page, len(window.keys), older=False)
    if first_read:
        at_start, legacy_low = exhausted, offset
    elif gap:
        at_start, legacy_low = False, offset
    else:
        at_start, legacy_low = window.at_start, window.legacy_low
    merged = replace(merged, at_start=at_start, legacy_low=legacy_low, fresh=False)
    return MergeResult(merged, tuple(new), gap)


def merge_older(
    window: Window, page: Sequence[WireMessage], *, exhausted: bool, offset: int | None = None
) -> MergeResult:
    """Merge a page read at offset == coverage, i.e. ending at or after the block's oldest
    row. An exhausted read has reached the segment's raw start."""
    merged, new = _merge(window, page, window.block_start, older=True)
    legacy_low = offset if offset is not None else merged.legacy_low
    merged = replace(merged, at_start=window.at_start or exhausted, legacy_low=legacy_low)
    return MergeResult(merged, tuple(new))


def advance(window: Window, canonical: str) -> Window:
    """Verified advancement to a new canonical segment: rows of the same branch are kept,
    generation moves on, coverage and the start mark reset, the next read is offset 0."""
    return replace(
        window,
        canonical=canonical,
        generation=window.generation + 1,
        fresh=True,
        at_start=False,
        legacy_low=None,
    )
