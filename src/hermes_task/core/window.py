"""The transcript window (pure): rows keyed by (`session_id`, `id`) in the server's order
(docs/identity.md, "Row identity"), paging coverage, how a page merges into it (beside the rows
it shares with the window), and where the next anchored older page is read.

Adjacency is evidence, never assumed: two neighbouring keys are adjacent only when one page
carried them side by side, or an anchored older read re-read the block's first row at its end;
every other neighbour starts a new run (`breaks`). The newest run is the *block*; coverage
counts its unique fetched identities, so the next older offset never double-counts rows appended
meanwhile, and an older page that misses the block's first row (the anchor) is never merged.
Invariants (hypothesis-tested): a row identity appears at most once; merging the same page
again changes nothing; a later read of a row replaces its content but not its place; once
every page of one true sequence is merged the order is that sequence.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cached_property
from itertools import pairwise

from msgspec import Struct, field
from msgspec.structs import replace

from hermes_task.core.documents import WarningItem
from hermes_task.core.wire import WireMessage

RowKey = tuple[str, int]


def key_of(msg: WireMessage) -> RowKey:
    return (msg.session_id, msg.id)


class Window(Struct, frozen=True, dict=True):  # dict: room for the cached properties
    """Rows of one task as known so far, and the paging state of its canonical segment."""

    keys: tuple[RowKey, ...] = ()
    messages: Mapping[RowKey, WireMessage] = field(default_factory=dict)
    breaks: frozenset[RowKey] = frozenset()  # keys whose predecessor is not known adjacent
    start: RowKey | None = None  # the canonical segment's first row, once an exhausted read showed it
    empty: bool = False  # an exhausted first read had no rows
    canonical: str | None = None
    generation: int = 0
    fresh: bool = True  # nothing of the canonical segment merged since `advance` (the block is empty)
    legacy_low: int | None = None  # the oldest-first offset of the block's first row (legacy backends)
    head: int = 0  # rows the last anchored read found newer than the newest row (offsets skip them)

    @cached_property
    def position(self) -> dict[RowKey, int]:
        return {k: i for i, k in enumerate(self.keys)}

    @cached_property
    def block_start(self) -> int:
        """Index of the first key of the newest block (len(keys) while `fresh`)."""
        if self.fresh:
            return len(self.keys)
        return max((self.position[k] for k in self.breaks if k in self.position), default=0)

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


class MergeResult(Struct, frozen=True):
    """The window after a merge; `TaskReader.read_older` fills in the last three fields."""

    window: Window
    new_keys: tuple[RowKey, ...]
    gap: bool = False  # a latest page shared no row with the block
    stale: bool = False  # dropped: the answer of an older generation
    detached: bool = False  # dropped: an older page missed its anchor
    returned: int = 0  # raw rows of the merged older page
    restarted: bool = False  # a refresh was needed
    warnings: tuple[WarningItem, ...] = ()  # that refresh's


def advance(window: Window, canonical: str) -> Window:
    """Move to a new canonical segment (or restart it): rows kept, every paging field back to its
    default (the next read the newest page)."""
    return Window(
        window.keys, window.messages, window.breaks, canonical=canonical, generation=window.generation + 1
    )


def dedupe(page: Sequence[WireMessage]) -> list[WireMessage]:
    """The page without repeated identities (the first occurrence keeps its place)."""
    first: dict[RowKey, WireMessage] = {}
    for msg in page:
        first.setdefault(key_of(msg), msg)
    return list(first.values())


def _splice(keys: tuple[RowKey, ...], index: Mapping[RowKey, int], page: list[RowKey]) -> tuple[RowKey, ...]:
    """Place the page's unknown keys next to the keys it shares with `keys` (none: at the end)."""
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
    if first is None:
        return keys + tuple(head)
    out: list[RowKey] = []
    for i, k in enumerate(keys):
        if i == first:
            out.extend(head)
        out.append(k)
        out.extend(after.get(i, ()))
    return tuple(out)


def _breaks(old: Window, keys: tuple[RowKey, ...], page: list[RowKey]) -> frozenset[RowKey]:
    """Every key whose predecessor neither this page nor the old order shows adjacent."""
    page_pred = dict(zip(page[1:], page, strict=False))
    old_pred = dict(zip(old.keys[1:], old.keys, strict=False))
    return frozenset(
        key
        for prev, key in pairwise(keys)
        if page_pred.get(key) != prev and (old_pred.get(key) != prev or key in old.breaks)
    )


def _merge(
    window: Window,
    msgs: list[WireMessage],
    *,
    start: RowKey | None,
    offset: int | None,
) -> tuple[Window, tuple[RowKey, ...]]:
    page = [key_of(m) for m in msgs]
    new = tuple(k for k in page if k not in window.messages)
    messages = {**window.messages, **{key_of(m): m for m in msgs}}
    at = window.block_start
    if new and len(new) < len(page) and page[len(new) :] == list(window.keys[at : at + len(page) - len(new)]):
        # The common older page (unknown rows, then the block's first ones), without a full walk
        keys = window.keys[:at] + new + window.keys[at:]
        breaks = (window.breaks - {window.keys[at]}) | ({new[0]} if at else set())
    else:
        keys = _splice(window.keys, window.position, page)
        breaks = _breaks(window, keys, page)
    merged = replace(window, keys=keys, messages=messages, breaks=frozenset(breaks))
    low = window.legacy_low  # the legacy offset of the block's first row, from a page read at `offset`
    first = merged.keys.index(page[0]) if offset is not None and page else -1
    if offset is not None and first >= merged.block_start:
        low = offset - (first - merged.block_start)
    if low == 0 and merged.block_start < len(keys):
        start = start or keys[merged.block_start]
    merged = replace(merged, start=start or window.start, legacy_low=low)
    return merged, new


def merge_latest(
    window: Window, page: Sequence[WireMessage], *, exhausted: bool, offset: int | None = None
) -> MergeResult:
    """Merge the newest page of the canonical segment. A first read defines the block; retained rows
    stay before it, each its own run (their adjacency says nothing about this segment's offsets)."""
    msgs = dedupe(page)
    keys = [key_of(m) for m in msgs]
    start = keys[0] if exhausted and keys else None
    if not window.fresh:
        gap = bool(keys) and set(window.keys[window.block_start :]).isdisjoint(keys)
        merged, new = _merge(window, msgs, start=start, offset=offset)
        return MergeResult(replace(merged, head=0), new, gap=gap)
    new = tuple(k for k in keys if k not in window.messages)
    if not keys:
        return MergeResult(replace(window, empty=exhausted), new)
    in_page = set(keys)
    rest = tuple(k for k in window.keys if k not in in_page)
    merged = replace(
        window,
        keys=rest + tuple(keys),
        messages={**window.messages, **dict(zip(keys, msgs, strict=True))},
        breaks=frozenset(rest[1:] + ((keys[0],) if rest else ())),
        start=start,
        empty=False,
        fresh=False,
        legacy_low=offset,
    )
    return MergeResult(merged, new)


class OlderRequest(Struct, frozen=True):
    """The next older page: `offset` counts back from the newest row (`legacy`: the oldest)."""

    offset: int
    limit: int
    generation: int
    legacy: bool


def older_request(window: Window, *, legacy: bool, limit: int, cap: int) -> OlderRequest | None:
    """Up to `limit` rows older than the block, plus the anchor (within `cap`); None: nothing to read."""
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
    """Merge the answer to `request` unless it is `stale` or `detached`. On a current backend the
    anchor's place measures the rows appended meanwhile (`head`), so the next offset lands on it."""
    if request.generation != window.generation:
        return MergeResult(window, (), stale=True)
    msgs = dedupe(page)
    keys = [key_of(m) for m in msgs]
    anchor = window.keys[window.block_start] if window.coverage else None
    if anchor is None or anchor not in keys:
        return MergeResult(window, (), detached=True)
    exhausted = request.offset == 0 if request.legacy else len(page) < request.limit  # the raw start
    start = keys[0] if exhausted else None
    merged, new = _merge(window, msgs, start=start, offset=request.offset if request.legacy else None)
    if not request.legacy:
        where = max(i for i, msg in enumerate(page) if key_of(msg) == anchor)
        known_after = len(merged.keys) - 1 - merged.keys.index(anchor)
        merged = replace(merged, head=request.offset + len(page) - 1 - where - known_after)
    return MergeResult(merged, new)
