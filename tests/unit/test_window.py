"""The transcript window (`hermes_task.core.window`): hypothesis properties of the merge and
deterministic cases for gaps, advancement, generations, anchors and legacy offsets."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from hermes_task.core.window import (
    MergeResult,
    OlderRequest,
    RowKey,
    Window,
    advance,
    key_of,
    merge_anchored,
    merge_latest,
    older_request,
)
from hermes_task.core.wire import JSON, WireMessage
from hermes_task.reading.reader import shown_rows
from tests.support.wirebody import decoded

SID = "20261130_170432_2a90b4"


def msg(key: RowKey, content: str = "text", role: str = "assistant", **extra: JSON) -> WireMessage:
    return decoded(
        {"id": key[1], "session_id": key[0], "role": role, "content": content, **extra}, WireMessage
    )


def page(keys: Sequence[RowKey], content: str = "text") -> list[WireMessage]:
    return [msg(k, content) for k in keys]


def seq(n: int, sid: str = SID, first: int = 1) -> list[RowKey]:
    return [(sid, first + i) for i in range(n)]


def older(window: Window, keys: Sequence[RowKey], *, exhausted: bool, offset: int = 0) -> MergeResult:
    """`keys` merged as the answer to an anchored read (a current backend's) at `offset`."""
    request = OlderRequest(offset, len(keys) + exhausted, window.generation, legacy=False)
    return merge_anchored(window, request, page(keys))


def first_window(keys: Sequence[RowKey], *, exhausted: bool = False, offset: int | None = None) -> Window:
    return merge_latest(advance(Window(), SID), page(keys), exhausted=exhausted, offset=offset).window


# Row keys of one true sequence: several segments' session ids and non-monotonic ids, as a
# current backend's lineage-merged tip page has them.
true_sequences = st.lists(
    st.tuples(st.sampled_from(["seg_a", "seg_b", "seg_c"]), st.integers(1, 5000)),
    unique=True,
    min_size=1,
    max_size=80,
)


def state(window: Window) -> tuple[object, ...]:
    return (
        window.keys,
        window.breaks,
        window.start,
        window.coverage,
        window.at_start,
        window.legacy_low,
        window.head,
        window.fresh,
        {k: m.content for k, m in window.messages.items()},
    )


# -- properties ---------------------------------------------------------------------------


@st.composite
def paged_reads(draw: st.DrawFn) -> tuple[list[RowKey], list[tuple[int, int, int]]]:
    """A true sequence and newest-first reads: (newest page size, then (size, overlap) pairs)."""
    truth = draw(true_sequences)
    first = draw(st.integers(1, 20))
    steps = draw(st.lists(st.tuples(st.integers(1, 15), st.integers(0, 3)), min_size=1, max_size=40))
    return truth, [(first, 0, 0), *[(size, overlap, 0) for size, overlap in steps]]


@settings(max_examples=300, deadline=None)
@given(paged_reads())
def test_paging_one_true_sequence_restores_it_whatever_the_page_sizes_and_overlaps(
    data: tuple[list[RowKey], list[tuple[int, int, int]]],
) -> None:
    truth, steps = data
    n = len(truth)
    first = steps[0][0]
    newest = truth[max(0, n - first) :]
    window = first_window(newest, exhausted=first >= n)
    low = n - len(newest)  # the true index of the block's first row
    assert window.coverage == len(newest)
    for size, overlap, _ in steps[1:]:
        if window.at_start:
            break
        back = max(1, min(overlap, window.coverage))
        offset = window.coverage - back
        size = max(size, back)  # an overlapping read ends inside the block: it holds the anchor
        rows = truth[max(0, n - offset - size) : n - offset]
        exhausted = n - offset - size <= 0
        result = older(window, rows, exhausted=exhausted, offset=offset)
        assert not result.detached
        again = older(result.window, rows, exhausted=exhausted, offset=offset)
        assert again.detached or state(again.window) == state(result.window)
        window = result.window
        low = min(low, n - offset - len(rows))
        # coverage == unique keys in the newest contiguous block; order == the truth's
        assert window.coverage == n - low
        assert list(window.keys) == truth[low:]
    if not window.at_start:
        rest = truth[: n - window.coverage + 1]
        window = older(window, rest, exhausted=True, offset=window.coverage - 1).window
    assert list(window.keys) == truth
    assert window.at_start
    assert window.coverage == n == len(set(window.keys))
    assert window.breaks == frozenset()


@st.composite
def chained_pages(draw: st.DrawFn) -> tuple[list[RowKey], list[list[RowKey]], list[int]]:
    """A true sequence covered by slices that each share a row with the next, and an order
    to merge them in."""
    truth = draw(
        st.lists(st.tuples(st.just("seg"), st.integers(1, 5000)), unique=True, min_size=2, max_size=40)
    )
    n = len(truth)
    starts = [0, *sorted(set(draw(st.lists(st.integers(1, n - 1), max_size=6))))]
    pages = []
    for i, lo in enumerate(starts):
        hi = draw(st.integers(starts[i + 1] + 1, n)) if i + 1 < len(starts) else n
        pages.append(truth[lo:hi])
    order = draw(st.permutations(range(len(pages))))
    return truth, pages, list(order)


def merge_connected(pages: list[list[RowKey]], order: list[int]) -> Window:
    """Merge every page, taking from `order` the first one that shares a row with the window."""
    waiting = list(order)
    first = waiting.pop(0)
    window = first_window(pages[first], exhausted=False)
    while waiting:
        index = next(i for i in waiting if set(pages[i]) & set(window.keys))
        waiting.remove(index)
        window = merge_latest(window, page(pages[index]), exhausted=False).window
    return window


@settings(max_examples=300, deadline=None)
@given(chained_pages(), st.randoms(use_true_random=False))
def test_overlapping_pages_merge_to_the_true_sequence_in_any_connected_order(
    data: tuple[list[RowKey], list[list[RowKey]], list[int]], rnd: random.Random
) -> None:
    truth, pages, order = data
    window = merge_connected(pages, order)
    assert list(window.keys) == truth
    assert window.coverage == len(truth)
    other = list(order)
    rnd.shuffle(other)
    again = merge_connected(pages, other)
    assert again.keys == window.keys
    assert again.coverage == window.coverage


ops = st.lists(
    st.tuples(
        st.sampled_from(["latest", "anchored", "advance"]),
        st.lists(st.tuples(st.sampled_from(["a", "b"]), st.integers(1, 30)), max_size=12),
        st.booleans(),
        st.text(max_size=3),
    ),
    max_size=25,
)


@settings(max_examples=400, deadline=None)
@given(ops)
def test_any_merges_never_lose_or_duplicate_an_identity(
    script: list[tuple[str, list[RowKey], bool, str]],
) -> None:
    window = Window()
    seen: set[RowKey] = set()
    for op, keys, exhausted, content in script:
        before = window
        if op == "advance":
            window = advance(window, f"seg{window.generation}")
            assert window.coverage == 0
            assert window.fresh
            assert not window.at_start
            continue
        if op == "latest":
            result = merge_latest(window, page(keys, content), exhausted=exhausted)
        else:
            request = OlderRequest(0, len(keys) + exhausted, window.generation, legacy=False)
            result = merge_anchored(window, request, page(keys, content))
        window = result.window
        if not result.detached:
            seen |= set(keys)
        assert len(window.keys) == len(set(window.keys))
        assert set(window.keys) == set(window.messages) == seen
        assert (
            set(result.new_keys) == set(keys) - set(before.keys)
            if not result.detached
            else not result.new_keys
        )
        assert 0 <= window.block_start <= len(window.keys)
        assert window.breaks <= set(window.keys)
        # a later read replaces content but not the order of the rows known before
        kept = [k for k in window.keys if k in before.position]
        if not before.fresh:
            assert kept == list(before.keys)
        if not result.detached:
            for k in keys:
                assert window.messages[k].content == content


@settings(max_examples=300, deadline=None)
@given(ops, st.lists(st.tuples(st.sampled_from(["a", "b"]), st.integers(1, 30)), max_size=12), st.booleans())
def test_merging_the_same_page_again_changes_nothing(
    script: list[tuple[str, list[RowKey], bool, str]], keys: list[RowKey], exhausted: bool
) -> None:
    window = Window()
    for op, script_keys, script_exhausted, _ in script:
        if op == "advance":
            window = advance(window, "seg")
        elif op == "latest":
            window = merge_latest(window, page(script_keys), exhausted=script_exhausted).window
        else:
            window = older(window, script_keys, exhausted=script_exhausted).window
    once = merge_latest(window, page(keys), exhausted=exhausted).window
    twice = merge_latest(once, page(keys), exhausted=exhausted)
    assert state(twice.window) == state(once)
    assert twice.new_keys == ()
    once = older(window, keys, exhausted=exhausted).window
    twice = older(once, keys, exhausted=exhausted)
    # `head` aside: it measures where the anchor sat in a page read at the request's offset
    assert state(replace(twice.window, head=once.head)) == state(once)
    assert twice.new_keys == ()


@st.composite
def growing_server(draw: st.DrawFn) -> tuple[int, list[tuple[int, int]], int]:
    """Rows at the first read, then (rows appended, older page size) per older read."""
    start = draw(st.integers(1, 120))
    steps = draw(st.lists(st.tuples(st.integers(0, 12), st.integers(1, 20)), min_size=1, max_size=80))
    newest = draw(st.integers(1, 30))
    return start, steps, newest


@settings(max_examples=300, deadline=None)
@given(growing_server())
def test_anchored_older_reads_never_skip_while_rows_are_appended(
    data: tuple[int, list[tuple[int, int]], int],
) -> None:
    start, steps, newest = data
    server = seq(start)
    first = server[max(0, len(server) - newest) :]
    window = first_window(first, exhausted=len(first) == len(server))
    for appended, size in steps:
        request = older_request(window, legacy=False, limit=size, cap=500)
        if request is None:
            break
        server += seq(appended, first=len(server) + 1)
        n = len(server)
        got = server[max(0, n - request.offset - request.limit) : max(0, n - request.offset)]
        result = merge_anchored(window, request, page(got))
        unknown = n - (server.index(window.keys[-1]) + 1)  # rows newer than the window
        if result.detached:  # more rows appended than the page holds: not merged, nothing lost
            assert unknown - window.head >= request.limit
            assert result.window is window
            continue
        window = result.window
        block = list(window.keys[window.block_start :])
        low = server.index(block[0])
        # the block is one contiguous run of the server's rows, coverage counts it exactly,
        # and `head` says how many newer rows it lacks
        assert block == server[low : low + len(block)]
        assert window.coverage == len(block)
        assert window.head == n - (low + len(block))
        assert window.keys == tuple(server[low : low + len(block)])
    if window.at_start:
        assert window.keys[0] == server[0]


# -- deterministic cases ------------------------------------------------------------------


def test_a_first_read_starts_the_block_and_an_exhausted_one_shows_the_start() -> None:
    window = first_window(seq(5), exhausted=True)
    assert window.coverage == 5
    assert window.at_start
    assert window.start == (SID, 1)
    partial = first_window(seq(5, first=10))
    assert partial.coverage == 5
    assert not partial.at_start


def test_a_fresh_window_has_no_coverage_and_no_older_request() -> None:
    window = advance(Window(), SID)
    assert window.fresh
    assert window.coverage == 0
    assert window.block_start == 0
    assert older_request(window, legacy=False, limit=50, cap=500) is None
    empty = merge_latest(window, [], exhausted=True).window
    assert empty.fresh
    assert empty.at_start


def test_latest_refreshes_keep_older_rows_and_extend_the_block() -> None:
    window = first_window(seq(50, first=51))
    window = older(window, seq(51), exhausted=True, offset=49).window
    assert window.at_start
    assert window.coverage == 100
    result = merge_latest(window, page(seq(50, first=61)), exhausted=False)
    assert not result.gap
    assert result.new_keys == tuple(seq(10, first=101))
    assert list(result.window.keys) == seq(110)
    assert result.window.coverage == 110
    assert result.window.at_start


def test_a_disjoint_latest_page_is_a_gap_that_resets_coverage_until_older_reads_fill_it() -> None:
    window = first_window(seq(20), exhausted=True)
    result = merge_latest(window, page(seq(10, first=41)), exhausted=False)
    assert result.gap
    window = result.window
    assert window.coverage == 10
    assert not window.at_start
    assert list(window.keys) == seq(20) + seq(10, first=41)
    request = older_request(window, legacy=False, limit=5, cap=500)
    assert request == OlderRequest(offset=9, limit=6, generation=window.generation, legacy=False)
    window = merge_anchored(window, request, page(seq(6, first=36))).window
    assert window.coverage == 15
    assert not window.at_start
    # the last read overlaps the old rows: the runs join and the block reaches the start
    request = older_request(window, legacy=False, limit=20, cap=500)
    assert request is not None
    window = merge_anchored(window, request, page(seq(21, first=16))).window
    assert list(window.keys) == seq(50)
    assert window.breaks == frozenset()
    assert window.coverage == 50
    assert window.at_start


def test_hidden_rows_count_in_coverage_but_are_not_displayed() -> None:
    keys = seq(4)
    msgs = [msg(k) for k in keys[:3]] + [msg(keys[3], display_kind="hidden")]
    window = merge_latest(advance(Window(), SID), msgs, exhausted=True).window
    assert window.coverage == 4
    assert [r.id for r in shown_rows(window)] == [1, 2, 3]


def test_advance_resets_identity_generation_and_coverage_and_keeps_rows_before_the_new_segment() -> None:
    window = first_window(seq(30, sid="root"), exhausted=True)
    moved = advance(window, "tip")
    assert (moved.canonical, moved.generation) == ("tip", window.generation + 1)
    assert moved.fresh
    assert moved.coverage == 0
    assert not moved.at_start
    assert moved.head == 0
    assert moved.keys == window.keys
    tip_rows = seq(3, sid="root", first=29) + seq(5, sid="tip")  # a lineage page shares two rows
    result = merge_latest(moved, page(tip_rows), exhausted=False)
    assert not result.gap
    window = result.window
    assert list(window.keys) == seq(28, sid="root") + tip_rows
    assert window.coverage == len(tip_rows)
    # each retained row is its own run: the old segment's adjacency says nothing here
    assert window.breaks == frozenset([*seq(27, sid="root", first=2), tip_rows[0]])


def test_an_old_generation_response_never_changes_the_new_window() -> None:
    window = first_window(seq(10, first=11))
    old_generation = window.generation
    moved = advance(window, "tip")
    late = merge_anchored(moved, OlderRequest(9, 11, old_generation, legacy=False), page(seq(11)))
    assert late.stale
    assert late.window is moved
    assert late.new_keys == ()


def test_an_anchored_page_without_its_anchor_is_detached_and_not_merged() -> None:
    window = first_window(seq(10, first=101))
    request = older_request(window, legacy=False, limit=10, cap=500)
    assert request is not None
    result = merge_anchored(window, request, page(seq(11, first=200)))  # all newer rows
    assert result.detached
    assert result.window is window
    assert result.new_keys == ()


def test_the_anchor_measures_rows_appended_since_the_block_was_read() -> None:
    window = first_window(seq(10, first=91))  # rows 91..100 of 100
    request = older_request(window, legacy=False, limit=10, cap=500)
    assert request == OlderRequest(offset=9, limit=11, generation=window.generation, legacy=False)
    # 4 rows were appended before the read: the page ends 4 rows newer than planned
    result = merge_anchored(window, request, page(seq(11, first=85)))
    window = result.window
    assert list(window.keys) == seq(16, first=85)
    assert window.head == 4
    request = older_request(window, legacy=False, limit=10, cap=500)
    assert request is not None
    assert request.offset == 16 - 1 + 4
    # the next read lands exactly on the anchor again: nothing skipped, nothing repeated
    result = merge_anchored(window, request, page(seq(11, first=75)))
    assert list(result.window.keys) == seq(26, first=75)
    # a refresh reads the head again: the appended rows join and `head` is 0
    refreshed = merge_latest(result.window, page(seq(10, first=95)), exhausted=False).window
    assert list(refreshed.keys) == seq(30, first=75)
    assert refreshed.head == 0


def test_current_older_requests_cap_the_page_and_count_the_anchor() -> None:
    window = first_window(seq(50, first=1000))
    assert older_request(window, legacy=False, limit=500, cap=500) == OlderRequest(
        offset=49, limit=500, generation=window.generation, legacy=False
    )
    assert older_request(window, legacy=False, limit=50, cap=500) == OlderRequest(
        offset=49, limit=51, generation=window.generation, legacy=False
    )


def test_legacy_older_requests_count_from_the_oldest_row_and_end_at_the_anchor() -> None:
    window = first_window(seq(50, first=192), offset=191)
    assert window.legacy_low == 191
    request = older_request(window, legacy=True, limit=500, cap=500)
    assert request == OlderRequest(offset=0, limit=192, generation=window.generation, legacy=True)
    result = merge_anchored(window, request, page(seq(192)))
    assert result.window.legacy_low == 0
    assert result.window.at_start
    assert list(result.window.keys) == seq(241)
    request = older_request(window, legacy=True, limit=50, cap=500)
    assert request == OlderRequest(offset=141, limit=51, generation=window.generation, legacy=True)


def test_legacy_offset_follows_the_block_when_it_absorbs_an_older_run() -> None:
    rows = seq(150)
    window = first_window(rows[20:70], offset=20)  # an older run at offsets 20..69
    window = merge_latest(window, page(rows[100:150]), exhausted=False, offset=100).window
    assert window.legacy_low == 100
    assert window.coverage == 50
    request = older_request(window, legacy=True, limit=50, cap=500)
    assert request is not None
    assert (request.offset, request.limit) == (50, 51)
    window = merge_anchored(window, request, page(rows[50:101])).window
    assert list(window.keys) == rows[20:150]
    assert window.legacy_low == 20
    assert window.coverage == 130
    assert not window.at_start


@pytest.mark.parametrize("legacy", [False, True])
def test_no_older_request_once_the_block_reaches_the_start(legacy: bool) -> None:
    window = first_window(seq(10), exhausted=True, offset=0 if legacy else None)
    assert window.at_start
    assert older_request(window, legacy=legacy, limit=50, cap=500) is None


def test_a_page_repeating_rows_is_deduplicated_by_identity() -> None:
    keys = seq(3)
    window = merge_latest(advance(Window(), SID), page([*keys, keys[1]]), exhausted=True).window
    assert list(window.keys) == keys
    assert key_of(msg(keys[0])) == keys[0]
