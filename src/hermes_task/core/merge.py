"""Merging pages into the transcript window (pure): where a page's rows go, and which
neighbours are known adjacent.

A merge places new rows beside the rows they share with the window, never by sorting ids or
comparing content; a row identity appears at most once; merging the same page again changes
nothing; a later read of a row replaces its content but not its place. The window's paging
state (`Window.block_start`, coverage, the start mark) is defined in `core/window.py`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import pairwise

from msgspec.structs import replace

from hermes_task.core.window import MergeResult, RowKey, Window, key_of
from hermes_task.core.wire import WireMessage


def _dedupe(page: Sequence[WireMessage]) -> list[WireMessage]:
    """The page without repeated identities (the first occurrence keeps its place)."""
    first: dict[RowKey, WireMessage] = {}
    for msg in page:
        first.setdefault(key_of(msg), msg)
    return list(first.values())


def _splice(
    keys: tuple[RowKey, ...], index: Mapping[RowKey, int], page: list[RowKey], insert_at: int
) -> tuple[RowKey, ...]:
    """Place the page's unknown keys next to the keys it shares with `keys`; a page that
    shares none goes in at `insert_at`. Known keys keep their places."""
    new = [k for k in page if k not in index]
    if not new:
        return keys
    if all(k not in index for k in page):
        return keys[:insert_at] + tuple(new) + keys[insert_at:]
    head: list[RowKey] = []
    after: dict[int, list[RowKey]] = {}
    first: int | None = None
    anchor: int | None = None
    for k in page:
        if k in index:
            anchor = index[k]
            first = anchor if first is None else first
        elif anchor is None:
            head.append(k)
        else:
            after.setdefault(anchor, []).append(k)
    out: list[RowKey] = []
    for i, k in enumerate(keys):
        if i == first:
            out.extend(head)
        out.append(k)
        out.extend(after.get(i, ()))
    return tuple(out)


def _breaks(
    old: Window, keys: tuple[RowKey, ...], page: list[RowKey], extra: tuple[RowKey, RowKey] | None
) -> frozenset[RowKey]:
    """Every key whose predecessor is known adjacent by no evidence: neither this page,
    nor the old order (where it was not a break), nor the `extra` pair."""
    page_pred = dict(zip(page[1:], page, strict=False))
    old_pred = dict(zip(old.keys[1:], old.keys, strict=False))
    out: set[RowKey] = set()
    for prev, key in pairwise(keys):
        if page_pred.get(key) == prev:
            continue
        if old_pred.get(key) == prev and key not in old.breaks:
            continue
        if extra == (prev, key):
            continue
        out.add(key)
    return frozenset(out)


def _low(window: Window, page: list[RowKey], offset: int | None, fallback: int | None) -> int | None:
    """The legacy offset of the block's first row, from a page read at `offset`."""
    if offset is None or not page:
        return fallback
    first = window.keys.index(page[0])
    if first < window.block_start:
        return fallback
    return offset - (first - window.block_start)


def _first_read(
    window: Window, msgs: list[WireMessage], *, exhausted: bool, offset: int | None
) -> MergeResult:
    """The first read of a canonical segment: its page defines the block and the order of
    its rows; retained rows (other segments, earlier generations) stay before it, each its
    own run, because their old adjacency says nothing about this segment's offsets."""
    page = [key_of(m) for m in msgs]
    new = tuple(k for k in page if k not in window.messages)
    if not page:
        return MergeResult(replace(window, empty=exhausted), new)
    in_page = set(page)
    rest = tuple(k for k in window.keys if k not in in_page)
    messages = {**window.messages, **{key_of(m): m for m in msgs}}
    breaks = frozenset(rest[1:] + ((page[0],) if rest else ()))
    merged = Window(
        keys=rest + tuple(page),
        messages=messages,
        breaks=breaks,
        start=page[0] if exhausted else None,
        empty=False,
        canonical=window.canonical,
        generation=window.generation,
        fresh=False,
        legacy_low=offset,
        head=0,
    )
    return MergeResult(merged, new)


def _merge(
    window: Window,
    msgs: list[WireMessage],
    *,
    insert_at: int,
    extra: tuple[RowKey, RowKey] | None,
    start: RowKey | None,
    offset: int | None,
) -> tuple[Window, tuple[RowKey, ...]]:
    page = [key_of(m) for m in msgs]
    new = tuple(k for k in page if k not in window.messages)
    messages = {**window.messages, **{key_of(m): m for m in msgs}}
    at = window.block_start
    if new and len(new) < len(page) and page[len(new) :] == list(window.keys[at : at + len(page) - len(new)]):
        # The common older page: unknown rows, then the block's first rows. Same result
        # as the general rule below, without walking the whole window per page.
        keys = window.keys[:at] + new + window.keys[at:]
        breaks = (window.breaks - {window.keys[at]}) | ({new[0]} if at else set())
    else:
        keys = _splice(window.keys, window.position, page, insert_at)
        breaks = _breaks(window, keys, page, extra)
    merged = replace(window, keys=keys, messages=messages, breaks=frozenset(breaks))
    low = _low(merged, page, offset, window.legacy_low)
    if low == 0 and merged.block_start < len(keys):
        start = start or keys[merged.block_start]
    merged = replace(merged, start=start or window.start, legacy_low=low)
    return merged, new


def merge_latest(
    window: Window,
    page: Sequence[WireMessage],
    *,
    exhausted: bool,
    offset: int | None = None,
    generation: int | None = None,
) -> MergeResult:
    """Merge the newest page of the canonical segment; known older rows are kept.

    The first read of a segment (a new window, or after `advance`) starts its block; an
    exhausted read shows the segment's start. A later page that shares no row with the
    block is a gap: its rows go after the known ones, coverage restarts at the page and
    older reads fill the gap. A page of another generation changes nothing (`stale`).
    """
    if generation is not None and generation != window.generation:
        return MergeResult(window, (), stale=True)
    msgs = _dedupe(page)
    if window.fresh:
        return _first_read(window, msgs, exhausted=exhausted, offset=offset)
    block = set(window.keys[window.block_start :])
    gap = bool(msgs) and not any(key_of(m) in block for m in msgs)
    start = key_of(msgs[0]) if exhausted and msgs else None
    merged, new = _merge(window, msgs, insert_at=len(window.keys), extra=None, start=start, offset=offset)
    return MergeResult(replace(merged, head=0), new, gap=gap)


def merge_older(
    window: Window,
    page: Sequence[WireMessage],
    *,
    exhausted: bool,
    offset: int | None = None,
    anchored: bool = False,
    generation: int | None = None,
) -> MergeResult:
    """Merge a page read towards the segment's start, ending at or after the block's first
    row. `anchored`: the read re-reads that row, and a page without it is `detached`
    (rows were added or removed meanwhile) and changes nothing; otherwise the page is
    taken to end right before the block (read at offset == coverage). An exhausted read
    reached the segment's raw start. A page of another generation changes nothing.
    """
    if generation is not None and generation != window.generation:
        return MergeResult(window, (), stale=True)
    msgs = _dedupe(page)
    if window.fresh:
        return _first_read(window, msgs, exhausted=exhausted, offset=offset)
    keys = [key_of(m) for m in msgs]
    anchor = window.keys[window.block_start] if window.coverage else None
    if anchored and (anchor is None or anchor not in keys):
        return MergeResult(window, (), detached=True)
    extra = (keys[-1], anchor) if keys and anchor is not None and not anchored else None
    start: RowKey | None = None
    if exhausted:
        start = keys[0] if keys else anchor
    merged, new = _merge(window, msgs, insert_at=window.block_start, extra=extra, start=start, offset=offset)
    return MergeResult(merged, new)
