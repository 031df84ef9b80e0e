"""`older --all` of a lineage of several segments, streamed (`reading/stream.py`) on
the in-memory dashboard: byte for byte the windowed path's output in every page shape.

Shapes: `legacy` (0.19.x: each segment's pages are its own rows, oldest first, `order`
ignored), `own` (a current backend paging each segment's own rows), `merged` (a current
backend whose pages hold the whole lineage, root to the segment, every row), `iot` (the
lineage merged as iot measured it: an ancestor row with a newer copy replaced by that copy,
some copies placed before the rows they follow, one row kept beside its copy). Pages are
`LIMIT` rows (`STREAM_LIMIT` lowered); the windowed path pages 500 at a time, so a page read
with `limit=LIMIT` proves the stream ran.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_task.cli import older as run_older
from hermes_task.reading import stream as stream_mod
from hermes_task.reading.reader import TaskReader
from hermes_task.reading.stream import LineageRows, StreamStats, lineage_streamable
from tests.support.cli_runner import invoke
from tests.support.dashboard import Call, serving
from tests.unit.test_poll import Lineage, X, Y, Z

LIMIT = 40
SHAPES = ["legacy", "own", "merged", "iot"]


class Task(Lineage):
    """X -> Y -> Z (or X -> Y) rotated by compression, rows with `message_uid`s (none on
    `legacy`); `sizes` rows of each segment's own (the goal first in X)."""

    def __init__(self, shape: str, sizes: tuple[int, ...] = (60, 70, 90), goal_at: int = 0) -> None:
        super().__init__(legacy=shape == "legacy")
        self.shape = shape
        path = [X, Y, Z][: len(sizes)]
        self.path = path
        self.add(path[0])
        self.own(path[0], sizes[0], goal=True, goal_at=goal_at)
        for old, new, size in zip(path, path[1:], sizes[1:], strict=False):
            self.rotate(old, new)
            self.copies(old, new)
            self.own(new, size)
            if shape == "own":
                self.merged[new] = [new]
        self.end(path[-1], "agent_close", at=9.0)
        if shape == "iot":
            for sid in path[1:]:
                self.iot_view(sid)

    def own(self, sid: str, n: int, *, goal: bool = False, goal_at: int = 0) -> None:
        for i in range(n):
            if goal and i == goal_at:
                self.put_row(sid, "user", "Count the TODO markers", "u-goal")
                continue
            rid = self.next_id
            role = "tool" if rid % 5 == 0 else "assistant"
            self.put_row(sid, role, f"{sid[-6:]} step {rid}", f"u-{rid}")

    def put_row(self, sid: str, role: str, content: str, uid: str) -> None:
        extra: dict[str, Any] = {"tool_call_id": "c1", "tool_name": "terminal"} if role == "tool" else {}
        if self.shape != "legacy":
            extra["message_uid"] = uid
        self.row(sid, role=role, content=content, active=1, compacted=0, **extra)

    def copies(self, old: str, new: str) -> None:
        """The rotation re-anchors the goal and carries the old segment's last two rows."""
        for row in [self.rows[self.path[0]][0], *self.rows[old][-2:]]:
            extra = {k: row[k] for k in ("tool_call_id", "tool_name", "message_uid") if k in row}
            self.row(new, role=row["role"], content=row["content"], active=1, compacted=0, **extra)

    def iot_view(self, sid: str) -> None:
        """`sid`'s pages as iot merges them: the lineage root to `sid`, an ancestor row whose
        uid a newer segment holds replaced in place by the newest copy, except the goal,
        whose copy comes first and whose original stays."""
        upto = self.path[: self.path.index(sid) + 1]
        rows = [row for seg in upto for row in self.rows[seg]]
        newest: dict[str, dict[str, Any]] = {}
        for row in rows:
            newest[row["message_uid"]] = row
        goal = newest.pop("u-goal")
        view, placed = [goal], {goal["id"]}
        for row in rows:
            copy = newest.get(row["message_uid"], row)
            if copy["id"] not in placed:
                placed.add(copy["id"])
                view.append(copy)
        view.insert(1, self.rows[self.path[0]][0])  # the goal's original, after its copy
        key = f"view-{sid}"
        self.rows[key] = view
        self.merged[sid] = [key]

    def asked(self, limit: int = LIMIT) -> list[str]:
        """The sessions whose pages were read with `limit` (the stream's page size)."""
        return [c.sid for c in self.log if c.kind == "messages" and c.params["limit"] == str(limit)]


@pytest.fixture(autouse=True)
def small_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stream_mod, "STREAM_LIMIT", LIMIT)


@pytest.fixture(params=SHAPES)
def task(request: pytest.FixtureRequest) -> Iterator[Task]:
    dash = Task(request.param)
    with serving(dash.handle):
        yield dash


def _windowed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(run_older, "stream", lambda *a, **k: False)


def _both(*args: str) -> tuple[Any, Any]:
    return invoke("older", *args, "--all", "--json"), invoke("older", *args, "--all")


def _same_as_windowed(
    monkeypatch: pytest.MonkeyPatch, dash: Task, *args: str, streams: bool = True
) -> dict[str, Any]:
    """Both outputs streamed (`streams`; else declined, read the windowed way: pages of 500)
    equal the windowed path's, byte for byte."""
    streamed_json, streamed_plain = _both(*args)
    assert bool(dash.asked(500)) != streams
    _windowed(monkeypatch)
    windowed_json, windowed_plain = _both(*args)
    monkeypatch.undo()
    assert streamed_json.exit_code == windowed_json.exit_code, streamed_json.output
    assert streamed_plain.exit_code == windowed_plain.exit_code, streamed_plain.output
    assert streamed_json.stdout == windowed_json.stdout
    assert streamed_json.stderr == windowed_json.stderr
    assert streamed_plain.stdout == windowed_plain.stdout
    assert streamed_plain.stderr == windowed_plain.stderr
    data: dict[str, Any] = json.loads(streamed_json.stdout)
    return data


def test_streamed_lineage_is_byte_for_byte_the_windowed_output(
    task: Task, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _same_as_windowed(monkeypatch, task, X)
    assert Z in task.asked()  # the tip was streamed oldest-first
    assert data["task"]["lineage"] == [X, Y, Z]
    assert data["task"]["goal"] == "Count the TODO markers"
    assert data["coverage"]["has_older"] is False
    assert data["coverage"]["at_start"] is True
    goals = [r for r in data["rows"] if r["text"] == "Count the TODO markers"]
    assert len(goals) == (1 if task.shape != "legacy" else 3)  # one durable row where uids exist
    shown = {s["id"]: s["rows_shown"] for s in data["task"]["segments"]}
    assert sum(shown.values()) == len(data["rows"])
    assert all(shown.values())


def test_which_segments_are_read_on_their_own_follows_the_windowed_rule(task: Task) -> None:
    invoke("older", X, "--all", "--json")
    own = {sid for sid in task.asked() if sid != Z}
    # every ancestor row in the tip's pages (merged): none read on its own; iot replaced
    # rows by newer copies, so each ancestor holds fewer rows there than its detail counts
    assert own == ({X, Y} if task.shape != "merged" else set())


@pytest.mark.parametrize("shape", SHAPES)
def test_two_segments(shape: str, monkeypatch: pytest.MonkeyPatch) -> None:
    dash = Task(shape, sizes=(45, 120))
    with serving(dash.handle):
        data = _same_as_windowed(monkeypatch, dash, X)
        assert Y in dash.asked()
    assert data["task"]["lineage"] == [X, Y]


def test_a_later_copy_placed_first_in_a_merged_window_is_not_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tip's pages hold every ancestor row (nothing read on its own), and a newer copy of
    a row comes before its original there: the original (the earliest segment's) is shown,
    at its own place, as the windowed path shows it."""
    dash = Task("merged", sizes=(30, 40, 80))
    view = [row for seg in dash.path for row in dash.rows[seg]]
    copy = next(r for r in dash.rows[Y] if r["message_uid"] == "u-goal")
    view.remove(copy)
    view.insert(0, copy)
    dash.rows["view"] = view
    dash.merged[Z] = ["view"]
    with serving(dash.handle):
        data = _same_as_windowed(monkeypatch, dash, X)
        assert set(dash.asked()) == {Z}  # nothing read on its own
    assert data["rows"][0]["session_id"] == X
    assert data["rows"][0]["text"] == "Count the TODO markers"


@pytest.mark.parametrize("hints", [True, False])
def test_a_redirected_ancestor_is_blocked_as_in_the_windowed_path(
    hints: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """X's pages answer for the tip (a backend that redirects an ancestor): X cannot be read
    on its own, so the history stops there with `partial_ancestors`, streamed or not. Seen
    when X's pages are asked (the hint named the tip), or already in the read cycle (no
    hint: X's newest page answered for the tip), when X is not asked again."""
    dash = Task("own")
    dash.redirect[X] = Z
    dash.hints = hints
    with serving(dash.handle):
        data = _same_as_windowed(monkeypatch, dash, X)
        assert (X in dash.asked()) == hints
        assert Y in dash.asked()
    assert data["coverage"]["at_start"] is False
    assert "partial_ancestors" in [w["code"] for w in data["warnings"]]
    assert {s["id"]: s["rows_shown"] for s in data["task"]["segments"]}[X] == 0
    assert data["task"]["goal"] is None  # the root's first row answers for the tip


def test_the_goal_is_the_roots_first_user_row(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows without uids, every one in the tip's pages, a newer segment's user row first:
    the goal is still the root's first user row."""
    dash = Task("merged", sizes=(30, 40, 80))
    for rows in dash.rows.values():
        for row in rows:
            row.pop("message_uid", None)
    steer = next(r for r in dash.rows[Y] if r["role"] == "user")
    view = [row for seg in dash.path for row in dash.rows[seg]]
    view.remove(steer)
    dash.rows["view"] = [{**steer, "content": "Skip tests/"}, *view]
    dash.rows[Y][dash.rows[Y].index(steer)] = dash.rows["view"][0]
    dash.merged[Z] = ["view"]
    with serving(dash.handle):
        data = _same_as_windowed(monkeypatch, dash, X)
    assert data["rows"][0]["text"] == "Skip tests/"
    assert data["task"]["goal"] == "Count the TODO markers"


def test_the_window_held_is_bounded(task: Task) -> None:
    reader = TaskReader(task.client(), X)
    reader.refresh()
    reader.fill()
    assert lineage_streamable(reader)
    stats = StreamStats()
    lineage = LineageRows(reader, stats)
    try:
        lineage.read()
        lineage.count()
        rows = [row for page in lineage.pages() for row in page]
    finally:
        lineage.close()
    assert len(rows) == sum(stats.shown.values())
    assert stats.held_max <= LIMIT + 50 < len(rows)
    del reader.details[Y]
    assert not lineage_streamable(reader)  # the windowed path would read Y's detail


def test_a_failure_while_reading_writes_no_row_and_keeps_the_rows_read(task: Task) -> None:
    """A page fails after others were read (Y read on its own; the tip's second page where
    nothing is): nothing was written, so piped stdout stays empty; `--json` is one error
    document with the rows read so far."""
    failing = (Y, "0") if task.shape != "merged" else (Z, str(LIMIT - 1))

    def fail(call: Call) -> httpx.Response | None:
        if (
            call.kind == "messages"
            and (call.sid, call.params["offset"]) == failing
            and call.params["limit"] == str(LIMIT)
        ):
            return httpx.Response(500, json={"detail": "Internal Server Error"})
        return None

    task.before.append(fail)
    as_json, plain = _both(X)
    assert as_json.exit_code == plain.exit_code != 0
    data = json.loads(as_json.stdout)
    assert data["kind"] == "error"
    assert data["error"]["code"] == "server_error"
    served = sum(len(task.rows[s]) for s in task.merged[Z])
    read = LIMIT if task.shape == "merged" else served  # the tip's first page, or all of it
    assert len({(r["session_id"], r["id"]) for r in data["rows"]}) <= read
    assert len(data["rows"]) > LIMIT // 2
    assert plain.stdout == ""
    assert plain.stderr.startswith("error: ")


def test_an_ancestor_that_does_not_page_oldest_first_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    dash = Task("own")

    def unpaginated(call: Call) -> httpx.Response | None:
        if call.kind == "messages" and call.sid == Y and call.params["limit"] == str(LIMIT):
            return httpx.Response(200, json={"session_id": Y, "messages": dash.rows[Y]})
        return None

    dash.before.append(unpaginated)
    with serving(dash.handle):
        _same_as_windowed(monkeypatch, dash, X, streams=False)
        assert dash.asked().count(Y) == 2  # asked once per run, then the windowed path
        assert X not in dash.asked()


@pytest.mark.parametrize("extra", [0, 1])
def test_a_tip_page_of_its_anchor_alone_goes_on_to_the_earlier_segments(
    extra: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The windowed path pages the tip 499 new rows at a time; 499 older rows end on a page
    holding only its anchor. That page reached the tip's start: the paging goes on to X and
    Y (it stopped there with `bound_reached` before), and the stream matches it."""
    dash = Task("own", sizes=(10, 10, 50 + 499 - 3 + extra))  # 3 copies carried
    with serving(dash.handle):
        data = _same_as_windowed(monkeypatch, dash, X)
        assert X in dash.asked()
    assert "bound_reached" not in [w["code"] for w in data["warnings"]]
    assert data["coverage"]["at_start"] is True


@pytest.mark.parametrize("rows", [500, 501, 999])
def test_an_earlier_segments_page_of_its_anchor_alone_goes_on_to_the_one_before(
    rows: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An earlier segment read on its own, newest page first (500 rows), then 499 new rows a
    page: 500 or 999 rows end on a page of its anchor alone, which reached its start: X is
    read next (the paging stopped before it), streamed as the windowed path shows it."""
    dash = Task("own", sizes=(10, rows - 3, 60))  # 3 copies carried into Y
    with serving(dash.handle):
        data = _same_as_windowed(monkeypatch, dash, X)
        assert X in dash.asked()
    assert "bound_reached" not in [w["code"] for w in data["warnings"]]
    assert data["coverage"]["at_start"] is True


def test_the_roots_own_anchor_page_ends_the_history(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same page of its anchor alone in the root is the lineage's start: streamed."""
    dash = Task("own", sizes=(500, 10, 60))
    with serving(dash.handle):
        data = _same_as_windowed(monkeypatch, dash, X)
    assert data["coverage"]["at_start"] is True


def test_offsets_from_the_oldest_row_never_stop_early(monkeypatch: pytest.MonkeyPatch) -> None:
    """0.19.x's windowed paging counts offsets from the oldest row: no page of an anchor
    alone, so the tip length that stops a current backend streams there."""
    dash = Task("legacy", sizes=(10, 10, 50 + 499 - 3))
    with serving(dash.handle):
        data = _same_as_windowed(monkeypatch, dash, X)
    assert "bound_reached" not in [w["code"] for w in data["warnings"]]


def test_a_row_read_twice_with_different_contents_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """The windowed path shows the newest read of a row; the stream, which has let the
    earlier read go, leaves that case to it."""
    dash = Task("iot")
    original = dash.rows[X][3]
    changed = {**original, "content": "edited in the merged view"}
    dash.rows[f"view-{Z}"] = [changed if r is original else r for r in dash.rows[f"view-{Z}"]]
    with serving(dash.handle):
        data = _same_as_windowed(monkeypatch, dash, X, streams=False)
    assert "edited in the merged view" in [r["text"] for r in data["rows"]]


def test_a_failure_on_the_first_page_keeps_the_newest_page(task: Task) -> None:
    """Nothing streamed yet: the error document holds the rows the read cycle showed."""
    task.before.append(
        lambda call: (
            httpx.Response(500, json={"detail": "boom"})
            if call.kind == "messages" and call.params["limit"] == str(LIMIT)
            else None
        )
    )
    as_json = invoke("older", X, "--all", "--json")
    data = json.loads(as_json.stdout)
    assert data["kind"] == "error"
    assert len(data["rows"]) == 50
    assert [r["id"] for r in data["rows"]][-1] == task.rows[Z][-1]["id"]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    shape=st.sampled_from(SHAPES),
    sizes=st.lists(st.integers(min_value=1, max_value=110), min_size=2, max_size=3),
    goal=st.floats(min_value=0, max_value=1, exclude_max=True),
)
def test_streamed_lineage_piped_text_is_the_windowed_text(
    shape: str, sizes: list[int], goal: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Property (issue 35): for any lineage shape, segment sizes and goal position in the
    root, `older --all` piped (stdout and stderr) and `--json` are the windowed path's."""
    dash = Task(shape, tuple(sizes), goal_at=int(goal * sizes[0]))
    with serving(dash.handle), monkeypatch.context() as patch:
        patch.setattr(stream_mod, "STREAM_LIMIT", LIMIT)
        streamed_json, streamed_plain = _both(X)
        patch.setattr(run_older, "stream", lambda *a, **k: False)
        windowed_json, windowed_plain = _both(X)
    assert streamed_plain.exit_code == windowed_plain.exit_code == 0, streamed_plain.output
    assert (streamed_plain.stdout, streamed_plain.stderr) == (windowed_plain.stdout, windowed_plain.stderr)
    assert (streamed_json.stdout, streamed_json.stderr) == (windowed_json.stdout, windowed_json.stderr)
