"""Older paging (`hermes_task.reading.stream` over `TaskReader.read_older`) against an in-memory
dashboard that speaks both `/messages` contracts through the real `DashboardClient`: the
seed's append regression, --all/--pages/--min-text batches, canonical changes, stale
generations, detached pages and restarts."""

from __future__ import annotations

import json
from typing import Any, cast

import pytest

from hermes_task.core.documents import warning
from hermes_task.core.ui_strings import WarningCode
from hermes_task.core.window import MergeResult, Window, advance
from hermes_task.reading.reader import TaskReader, shown_rows
from hermes_task.reading.stream import MAX_RESTARTS, MIN_TEXT_PAGES, Plan, Progress, read_batches
from tests.support.dashboard import Call, Contract, Dashboard

PARENT = "20261130_170432_8e73a5"
CHILD = "20261130_170432_2a90b4"
TIP = "20261130_170433_c19500"


class Transcripts(Dashboard):
    """The in-memory dashboard with this suite's vocabulary: subagent children of PARENT whose
    first row is the goal and whose later rows alternate assistant and tool. `legacy`: 0.19.x
    pages (oldest first, `order` ignored); `paginated` False: 0.18.x's envelope, every row.
    `latest-descendant` knows no lineage (404)."""

    def __init__(self, *, legacy: bool, paginated: bool = True) -> None:
        contract: Contract = "unpaginated" if not paginated else "legacy" if legacy else "current"
        super().__init__(contract=contract, first_row_id=3, hints=False)
        self.legacy = legacy

    def add(self, sid: str, rows: int, *, parent: str = PARENT, **detail: Any) -> Transcripts:
        fields: dict[str, Any] = {
            "source": "subagent",
            "parent_session_id": parent,
            "model_config": json.dumps({"_delegate_from": PARENT}),
            "started_at": 1.0,
            "ended_at": None,
            "end_reason": None,
        }
        self.put(sid, **{**fields, **detail})
        self.append(sid, rows, goal=True)
        return self

    def append(self, sid: str, n: int, *, goal: bool = False, role: str | None = None) -> None:
        for _ in range(n):
            i = len(self.rows[sid])
            kind = role or ("user" if goal and i == 0 else ("assistant", "tool")[i % 2])
            content = "the goal" if goal and i == 0 else f"{sid[-6:]} row {i}"
            self.row(sid, role=kind, content=content, timestamp=float(i))

    def ids(self, sid: str = CHILD) -> list[int]:
        return super().ids(sid)


def reader_for(fake: Transcripts, sid: str = CHILD) -> TaskReader:
    reader = TaskReader(fake.client(), sid)
    reader.refresh()
    return reader


def window_ids(reader: TaskReader) -> list[int]:
    return [key[1] for key in reader.window.keys]


def append_before_messages(fake: Transcripts, n: int, sid: str = CHILD) -> None:
    def hook(call: Call) -> None:
        if call.kind == "messages":
            fake.append(sid, n)

    fake.before.append(hook)


# -- the seed's regression ------------------------------------------------------------------


class NaivePager:
    """The buggy design: the next older offset is the number of rows loaded so far, grown
    by raw older-page lengths and by the head rows each latest refresh added."""

    def __init__(self, fake: Transcripts) -> None:
        self.fake = fake
        self.loaded: dict[int, None] = {}
        self.offset = 0

    def _get(self, offset: int) -> list[int]:
        params = {"limit": "50", "offset": str(offset), "order": "latest", "inline_images": "false"}
        params["include_compacted"] = "true"
        page = self.fake.http().get(f"/api/sessions/{CHILD}/messages", params=params).json()
        return [row["id"] for row in page["messages"]]

    def latest(self) -> None:
        head = [i for i in self._get(0) if i not in self.loaded]
        self.offset += len(head)
        self.loaded.update(dict.fromkeys(head))

    def older(self) -> None:
        got = self._get(self.offset)
        self.offset += len(got)  # raw length: rows it already had are counted again
        self.loaded.update(dict.fromkeys(got))


def test_appends_between_reads_make_a_raw_length_pager_skip_the_old_tail_but_not_ours() -> None:
    # The interleaving: 100 rows; the newest page is read; the task appends 10 rows; an
    # older page is read (it overlaps the newest page by those 10 rows); a refresh adds
    # the 10 new head rows; the next older page is read.
    naive_fake = Transcripts(legacy=False).add(CHILD, 100)
    naive = NaivePager(naive_fake)
    naive.latest()
    naive_fake.append(CHILD, 10)
    naive.older()
    naive.latest()
    naive.older()
    truth = naive_fake.ids()
    assert naive.offset == 110  # it believes it has read everything
    assert sorted(set(truth) - set(naive.loaded)) == truth[:10]  # but the old tail was skipped

    fake = Transcripts(legacy=False).add(CHILD, 100)
    reader = reader_for(fake)
    fake.append(CHILD, 10)
    first = reader.read_older()
    assert first is not None
    assert first.returned == 51
    assert len(first.new_keys) == 40
    reader.refresh()
    assert reader.window.coverage == 100  # unique ids: the overlap is counted once
    second = reader.read_older()
    assert second is not None
    assert len(second.new_keys) == 10
    assert window_ids(reader) == fake.ids() == truth  # every row once, in server order
    assert reader.window.at_start
    assert reader.window.coverage == 110
    assert reader.read_older() is None


# -- batches --------------------------------------------------------------------------------


@pytest.mark.parametrize("legacy", [False, True], ids=["current", "legacy"])
def test_all_reads_every_row_once_in_server_order_with_the_largest_pages(legacy: bool) -> None:
    fake = Transcripts(legacy=legacy).add(CHILD, 241)
    reader = reader_for(fake)
    seen: list[Progress] = []
    outcome = read_batches(reader, Plan(batches=None, limit=500), on_page=seen.append)
    assert window_ids(reader) == fake.ids()
    assert reader.window.at_start
    assert outcome.stop == "start"
    assert outcome.pages == 1
    assert outcome.warnings == []
    assert outcome.new_rows == 191
    assert seen == [Progress(page=1, rows=241, new=191)]
    if legacy:
        assert fake.reads() == [
            ("messages", CHILD, "191", "50"),
            ("messages", CHILD, "241", "50"),
            ("messages", CHILD, "0", "192"),
        ]
    else:
        assert fake.reads() == [("messages", CHILD, "0", "50"), ("messages", CHILD, "49", "500")]


@pytest.mark.parametrize("legacy", [False, True], ids=["current", "legacy"])
def test_all_on_a_long_task_pages_500_rows_at_a_time_and_stops_at_the_start(legacy: bool) -> None:
    fake = Transcripts(legacy=legacy).add(CHILD, 2000)
    reader = reader_for(fake)
    outcome = read_batches(reader, Plan(batches=None, limit=500))
    assert window_ids(reader) == fake.ids()
    assert outcome.stop == "start"
    assert outcome.pages == 4
    older = [r for r in fake.reads() if r[3] != "50"]
    if legacy:
        assert older == [
            ("messages", CHILD, "1451", "500"),
            ("messages", CHILD, "952", "500"),
            ("messages", CHILD, "453", "500"),
            ("messages", CHILD, "0", "454"),
        ]
    else:
        assert older == [
            ("messages", CHILD, "49", "500"),
            ("messages", CHILD, "548", "500"),
            ("messages", CHILD, "1047", "500"),
            ("messages", CHILD, "1546", "500"),
        ]


@pytest.mark.parametrize("legacy", [False, True], ids=["current", "legacy"])
def test_pages_reads_that_many_pages_and_a_later_run_goes_on_from_there(legacy: bool) -> None:
    fake = Transcripts(legacy=legacy).add(CHILD, 241)
    reader = reader_for(fake)
    outcome = read_batches(reader, Plan(batches=1))
    assert outcome.pages == 1
    assert outcome.stop == "page"
    assert outcome.new_rows == 50
    assert window_ids(reader) == fake.ids()[-100:]
    assert reader.window.coverage == 100
    assert not reader.window.at_start
    outcome = read_batches(reader, Plan(batches=2))
    assert outcome.pages == 2
    assert outcome.new_rows == 100
    assert window_ids(reader) == fake.ids()[-200:]
    outcome = read_batches(reader, Plan(batches=5))
    assert outcome.stop == "start"
    assert outcome.pages == 1
    assert outcome.new_rows == 41
    assert window_ids(reader) == fake.ids()
    assert reader.window.at_start


def test_a_current_page_that_exactly_reaches_the_start_needs_one_anchor_read_to_know_it() -> None:
    fake = Transcripts(legacy=False).add(CHILD, 100)
    reader = reader_for(fake)
    outcome = read_batches(reader, Plan(batches=None))
    assert window_ids(reader) == fake.ids()
    assert outcome.stop == "start"
    assert outcome.pages == 2
    assert fake.reads()[-1] == ("messages", CHILD, "99", "51")  # returned only the anchor


def prose_then_tools(fake: Transcripts, prose: int, tools: int) -> None:
    """Text rows at the start, then tool activity (tool rows and reasoning-only rows)."""
    fake.append(CHILD, prose - 1, role="assistant")
    for i in range(tools):
        if i % 2:
            fake.append(CHILD, 1, role="tool")
        else:
            row_id = fake.next_id
            fake.rows[CHILD].append(
                {
                    "id": row_id,
                    "session_id": CHILD,
                    "role": "assistant",
                    "content": "",
                    "reasoning": "thinking",
                }
            )
            fake.next_id += 1


def test_min_text_keeps_reading_raw_pages_until_enough_text_rows_arrived() -> None:
    fake = Transcripts(legacy=False).add(CHILD, 1)
    prose_then_tools(fake, prose=100, tools=200)
    reader = reader_for(fake)
    outcome = read_batches(reader, Plan(batches=1, min_text=30))
    # pages of tool activity first (no text), then prose until 30 text rows arrived
    assert outcome.stop == "target"
    assert outcome.text_rows >= 30
    assert outcome.pages == 4  # 150 tool rows, then 50 prose rows
    assert window_ids(reader) == fake.ids()[-250:]
    tool_rows = [r for r in shown_rows(reader.window) if r.role == "tool" or not r.text]
    assert len(tool_rows) == 200  # activity rows are kept and shown, they just don't count


def test_min_text_stops_at_the_visible_start() -> None:
    fake = Transcripts(legacy=True).add(CHILD, 1)
    prose_then_tools(fake, prose=10, tools=100)
    reader = reader_for(fake)
    outcome = read_batches(reader, Plan(batches=3, min_text=50))
    assert outcome.stop == "start"
    assert outcome.batches == 1
    assert window_ids(reader) == fake.ids()
    assert outcome.warnings == []


def test_min_text_batches_are_bounded_to_ten_pages() -> None:
    fake = Transcripts(legacy=False).add(CHILD, 1)
    prose_then_tools(fake, prose=10, tools=1000)
    reader = reader_for(fake)
    outcome = read_batches(reader, Plan(batches=1, min_text=5))
    assert outcome.stop == "page_bound"
    assert outcome.pages == MIN_TEXT_PAGES
    assert outcome.text_rows == 0
    assert [w.code for w in outcome.warnings] == ["bound_reached"]
    assert "10 pages without 5 text rows" in outcome.warnings[0].message
    assert not reader.window.at_start
    # a second batch goes on where the first stopped
    outcome = read_batches(reader, Plan(batches=2, min_text=5))
    assert outcome.stop == "start"
    assert window_ids(reader) == fake.ids()


# -- a task that keeps writing -----------------------------------------------------------------


@pytest.mark.parametrize("legacy", [False, True], ids=["current", "legacy"])
@pytest.mark.parametrize("per_read", [1, 7, 49])
def test_all_while_the_task_appends_between_every_read_never_skips_or_repeats(
    legacy: bool, per_read: int
) -> None:
    fake = Transcripts(legacy=legacy).add(CHILD, 1000)
    reader = reader_for(fake)
    append_before_messages(fake, per_read)
    outcome = read_batches(reader, Plan(batches=None))
    ids = window_ids(reader)
    assert ids == fake.ids()[: len(ids)]  # a prefix of the server's rows: nothing skipped
    assert len(ids) >= 1000
    assert ids[0] == fake.ids()[0]
    assert outcome.stop == "start"
    assert outcome.restarts == 0
    assert outcome.warnings == []


def test_a_page_missing_its_anchor_is_retried_after_a_refresh_that_reports_and_fills_the_gap() -> None:
    fake = Transcripts(legacy=False).add(CHILD, 300)
    reader = reader_for(fake)
    burst = {"left": 1}

    def hook(call: Call) -> None:
        if call.kind == "messages" and call.params["offset"] == "49" and burst["left"]:
            burst["left"] -= 1
            fake.append(CHILD, 120)  # more than a page: the older page misses its anchor

    fake.before.append(hook)
    result = reader.read_older()
    assert result is not None
    assert result.restarted
    assert result.gap
    assert result.returned == 51
    # the refresh read the new head (disjoint: a gap) and the retried page joined it
    assert reader.window.coverage == 100
    outcome = read_batches(reader, Plan(batches=None))
    assert window_ids(reader) == fake.ids()
    assert outcome.warnings == []  # the gap was filled before the paging ended


def test_an_unfilled_gap_is_reported_when_paging_stops_before_the_known_rows() -> None:
    fake = Transcripts(legacy=False).add(CHILD, 300)
    reader = reader_for(fake)
    burst = {"left": 1}

    def hook(call: Call) -> None:
        if call.kind == "messages" and call.params["offset"] == "49" and burst["left"]:
            burst["left"] -= 1
            fake.append(CHILD, 120)

    fake.before.append(hook)
    outcome = read_batches(reader, Plan(batches=1))
    assert outcome.restarts == 1
    assert outcome.pages == 1
    assert [w.code for w in outcome.warnings] == ["gap"]
    ids = window_ids(reader)
    assert len(ids) == len(set(ids))


def test_a_task_writing_faster_than_pages_are_read_stops_with_a_bound() -> None:
    fake = Transcripts(legacy=False).add(CHILD, 300)
    reader = reader_for(fake)
    append_before_messages(fake, 60)
    outcome = read_batches(reader, Plan(batches=None))
    assert outcome.stop == "restart_bound"
    assert outcome.restarts == MAX_RESTARTS + 1
    assert [w.code for w in outcome.warnings] == ["gap", "bound_reached"]
    ids = window_ids(reader)
    assert len(ids) == len(set(ids))
    truth = fake.ids()
    assert [truth.index(i) for i in ids] == sorted(truth.index(i) for i in ids)  # server order


class ScriptedReader:
    """`read_older`'s results in the order given, for a stop the in-memory dashboard cannot
    bring about: a page that returned rows the window already held."""

    reached_start = False

    def __init__(self, results: list[MergeResult]) -> None:
        self.results = results
        self.window = Window()

    def read_older(self, limit: int) -> MergeResult | None:
        result = self.results.pop(0)
        self.window = result.window
        return result


def test_a_page_that_brought_no_new_row_stops_the_paging_with_a_bound() -> None:
    reader = ScriptedReader([MergeResult(Window(fresh=False), (), returned=5)])
    seen: list[Progress] = []
    outcome = read_batches(cast(TaskReader, reader), Plan(batches=3), on_page=seen.append)
    assert (outcome.stop, outcome.batches, outcome.pages, outcome.new_rows) == ("no_progress", 1, 1, 0)
    assert seen == [Progress(page=1, rows=0, new=0)]
    assert [(w.code, w.message) for w in outcome.warnings] == [
        ("bound_reached", warning(WarningCode.bound_reached, "an older page brought no new row").message)
    ]


# -- identity and generations -------------------------------------------------------------


def rotated(legacy: bool) -> Transcripts:
    fake = Transcripts(legacy=legacy)
    fake.add(CHILD, 120, end_reason="compression", ended_at=2.0)
    fake.add(TIP, 150, parent=CHILD, started_at=1.5)
    return fake


@pytest.mark.parametrize("legacy", [False, True], ids=["current", "legacy"])
def test_a_canonical_change_during_an_older_read_restarts_at_offset_zero(legacy: bool) -> None:
    fake = rotated(legacy)
    reader = reader_for(fake)
    assert reader.window.canonical == CHILD
    generation = reader.window.generation
    fake.redirect[CHILD] = TIP  # the root's messages now answer for the tip
    before = len(fake.log)
    result = reader.read_older()
    assert result is not None
    assert result.restarted
    assert result.returned == 0
    window = reader.window
    assert window.canonical == TIP
    assert window.generation > generation
    assert reader.path == (CHILD, TIP)
    reads = [
        (k, s, p.get("offset", ""), p.get("limit", "")) for k, s, p in fake.log[before:] if k == "messages"
    ]
    tip_reads = [r for r in reads if r[1] == TIP]
    if legacy:  # the redirected answer's offset was the old segment's: the tip's page is read
        assert tip_reads[0] == ("messages", TIP, str(150 - 50), "50")
    else:  # the redirected answer to offset 0 is the tip's newest page: used, never read again
        assert tip_reads == []
        assert reads[-1] == ("messages", CHILD, "0", "50")
    # the answer to the old segment's offset was never merged: the tip's block is its newest page
    tip_keys = [k for k in window.keys if k[0] == TIP]
    assert [k[1] for k in tip_keys] == fake.ids(TIP)[-50:]
    assert window.coverage == 50
    assert [k[1] for k in window.keys[: window.block_start]] == fake.ids(CHILD)[-50:]


def test_a_response_held_across_a_new_generation_never_changes_the_new_window() -> None:
    fake = Transcripts(legacy=False).add(CHILD, 200)
    reader = reader_for(fake)

    def hook(call: Call) -> None:
        if call.kind == "messages" and call.params["offset"] == "49":
            reader.window = advance(reader.window, CHILD)  # a newer generation committed meanwhile

    fake.before.append(hook)
    result = reader.read_older()
    assert result is not None
    assert result.stale
    assert result.new_keys == ()
    assert reader.window is result.window
    assert reader.window.fresh
    assert len(reader.window.keys) == 50  # the held page's 50 older rows were dropped


def test_read_older_after_advance_reads_the_newest_page_first() -> None:
    fake = Transcripts(legacy=False).add(CHILD, 200)
    reader = reader_for(fake)
    reader.window = advance(reader.window, CHILD)
    before = len(fake.log)
    result = reader.read_older()
    assert result is not None
    assert result.restarted
    assert [r for r in fake.reads()[len([x for x in fake.log[:before] if x[0] == "messages"]) :]] == [
        ("messages", CHILD, "0", "50")
    ]
    assert reader.window.coverage == 50
    assert not reader.window.fresh


def test_a_legacy_newest_page_that_keeps_growing_is_bounded_and_says_so() -> None:
    fake = Transcripts(legacy=True).add(CHILD, 100)
    grown = {"done": False}

    def hook(call: Call) -> None:
        if call.kind == "messages" and not grown["done"]:
            grown["done"] = True
            fake.append(CHILD, 5100)  # appended after the detail said 100 rows

    fake.before.append(hook)
    reader = TaskReader(fake.client(), CHILD)
    snap = reader.refresh()
    forward = [r for r in fake.reads() if r[2] != "50"]
    assert len(forward) == 100  # MAX_LEGACY_FORWARD_PAGES forward reads, then it stops
    assert "bound_reached" in [w.code for w in snap.warnings]
    ids = window_ids(reader)
    assert ids == fake.ids()[50 : 50 + len(ids)]  # contiguous from where it started: no skip
