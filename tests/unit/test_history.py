"""One window over the proven lineage (`core/lineage.py`, `TaskReader.fill`/`read_older`):
earlier segments are read only when the newer windows do not already hold their rows, every
row of every segment arrives exactly once, no page is requested twice, foreign rows are
dropped and counted, and a cold open of a later segment discloses what it cannot include."""

from __future__ import annotations

import pytest

from hermes_task.core.lineage import compose, cursor, earliest, shown_once
from hermes_task.core.window import Window, merge_latest
from hermes_task.core.wire import WireMessage
from hermes_task.reading.reader import TaskReader
from hermes_task.reading.stream import Plan, read_batches
from tests.support.wirebody import decoded
from tests.unit.test_poll import Lineage, X, Y, Z

W = "20260101_000009_ffffff"


def pages(client: Lineage) -> list[tuple[str, int, int, str]]:
    """(session id, offset, limit, order) of every messages request."""
    return [
        (c.sid, int(c.params["offset"]), int(c.params["limit"]), c.params["order"])
        for c in client.log
        if c.kind == "messages"
    ]


def chain(mode: str, sizes: tuple[int, int, int] = (60, 70, 10)) -> tuple[Lineage, list[tuple[str, int]]]:
    """X -> Y -> Z rotated twice, ended; `mode`: legacy, merged (iot subagent) or unmerged."""
    client = Lineage(legacy=mode == "legacy")
    client.add(X)
    keys = client.append(X, sizes[0])
    client.rotate(X, Y)
    keys += client.append(Y, sizes[1])
    client.rotate(Y, Z)
    keys += client.append(Z, sizes[2])
    client.end(Z, "agent_close", at=9.0)
    if mode == "unmerged":
        client.merged[Y], client.merged[Z] = [Y], [Z]
    return client, keys


def shown(reader: TaskReader) -> list[tuple[str, int]]:
    return [(r.session_id, r.id) for r in reader.document([]).rows]


@pytest.mark.parametrize("mode", ["legacy", "merged", "unmerged"])
def test_older_all_reads_every_row_of_every_segment_once_and_no_page_twice(mode: str) -> None:
    client, keys = chain(mode)
    reader = TaskReader(client.client(), X, tips=[Z])
    reader.refresh()
    reader.fill()
    read_batches(reader, Plan(batches=None, limit=500))
    assert shown(reader) == keys
    doc = reader.document([])
    assert doc.coverage.at_start is True
    assert doc.coverage.has_older is False
    assert [w.code for w in doc.warnings if w.code != "legacy_backend"] == []
    assert len(pages(client)) == len(set(pages(client)))
    read = {sid for sid, *_ in pages(client)}
    assert read == ({Z} if mode == "merged" else {X, Y, Z})  # a merging backend: the tip only
    assert [s.rows_shown for s in doc.task.segments] == [60, 70, 10]


@pytest.mark.parametrize("mode", ["legacy", "unmerged"])
def test_show_fills_its_newest_page_from_the_previous_segment(mode: str) -> None:
    client, keys = chain(mode)
    reader = TaskReader(client.client(), X, tips=[Z])
    reader.refresh()
    reader.fill()
    assert shown(reader) == keys[-50:]  # 10 of Z, the newest 40 of Y
    doc = reader.document([])
    assert doc.coverage.has_older is True
    assert doc.coverage.at_start is False
    assert [p[0] for p in pages(client)].count(Y) == 1
    assert X not in {p[0] for p in pages(client)}
    # older continues in Y (one page: the rest of Y), then X, down to X's first row
    read_batches(reader, Plan(batches=1))
    assert shown(reader) == keys[-80:]
    read_batches(reader, Plan(batches=None, limit=500))
    assert shown(reader) == keys
    assert len(pages(client)) == len(set(pages(client)))


def test_a_merged_tip_page_is_never_filled_from_earlier_segments() -> None:
    client, keys = chain("merged", (5, 5, 5))
    reader = TaskReader(client.client(), X, tips=[Z])
    reader.refresh()
    reader.fill()
    assert shown(reader) == keys
    assert {p[0] for p in pages(client)} == {Z}


def test_rows_of_a_session_outside_the_lineage_are_dropped_and_counted() -> None:
    client, keys = chain("merged", (3, 3, 3))
    client.add(W)
    foreign = client.append(W, 2)
    client.merged[Z] = [X, W, Y, Z]  # the tip page carries two rows of an unproven session
    reader = TaskReader(client.client(), X, tips=[Z])
    snap = reader.refresh()
    doc = reader.document(snap.warnings)
    assert shown(reader) == keys
    assert not set(foreign) & set(shown(reader))
    warning = next(w for w in doc.warnings if w.code == "foreign_rows")
    assert warning.message.endswith("(2 rows)")
    assert "foreign_rows" in [w.code for w in snap.warnings]


@pytest.mark.parametrize("mode", ["legacy", "merged", "unmerged"])
def test_a_cold_open_of_a_later_segment_reads_one_parent_detail_and_no_ancestor_rows(mode: str) -> None:
    client, _ = chain(mode, (4, 4, 4))
    reader = TaskReader(client.client(), Z)
    snap = reader.refresh()
    reader.fill()
    doc = reader.document(snap.warnings)
    assert "partial_ancestors" in [w.code for w in doc.warnings]  # even where X, Y rows were held
    assert {r.session_id for r in doc.rows} == {Z}
    assert {p[0] for p in pages(client)} == {Z}
    assert [c for c in client.calls() if c[0] == "detail" and c[1] == Y] == [("detail", Y)]
    assert doc.coverage.at_start is False
    assert reader.read_goal() is None  # the root of a cold open is not the task's first segment


def test_the_goal_is_read_with_one_one_row_read_when_the_window_lacks_it() -> None:
    client, _ = chain("unmerged")
    client.rows[X][0]["role"] = "user"
    client.rows[X][0]["content"] = "Do the thing"
    reader = TaskReader(client.client(), X, tips=[Z])
    reader.refresh()
    reader.fill()
    before = len(pages(client))
    assert reader.read_goal() == "Do the thing"
    assert pages(client)[before:] == [(X, 0, 1, "oldest")]
    assert reader.document([]).task.goal == "Do the thing"


def _msg(sid: str, i: int) -> WireMessage:
    return decoded({"id": i, "session_id": sid, "role": "user", "content": str(i)}, WireMessage)


def test_the_cursor_reads_a_segment_only_when_newer_windows_hold_fewer_of_its_rows() -> None:
    path = (X, Y, Z)
    tip = merge_latest(Window(canonical=Z), [_msg(Y, 1), _msg(Z, 2)], exhausted=True).window
    # Y counts one row and the tip's sequence holds it: Y is not read, X is next
    assert cursor(path, tip, {}, counts={Y: 1, X: 1}) == cursor(path, tip, {}, counts={X: 1})
    first = cursor(path, tip, {}, counts={Y: 1, X: 1})
    assert (first.kind, first.sid) == ("first", X)
    # Y counts three rows: the tip's merged view left two out, so Y is read
    partial_y = cursor(path, tip, {}, counts={Y: 3, X: 1})
    assert (partial_y.kind, partial_y.sid) == ("first", Y)
    held = merge_latest(Window(canonical=X), [_msg(X, 0)], exhausted=True).window
    assert cursor(path, tip, {X: held}, counts={Y: 1}).kind == "start"
    assert cursor(path, tip, {}, frozenset({X}), counts={Y: 1}).kind == "blocked"
    view = compose(path, tip, {X: held})
    assert view.keys == ((X, 0), (Y, 1), (Z, 2))
    assert view.foreign == 0
    partial = merge_latest(Window(canonical=Z), [_msg(Z, 2)], exhausted=False).window
    assert cursor(path, partial, {}).kind == "page"


def test_follow_rows_draw_one_dim_line_where_the_task_moves_to_a_newer_segment() -> None:
    import io

    from hermes_task.core.documents import Row, SegmentInfo, TaskInfo
    from hermes_task.render import Target, terminal_rows
    from hermes_task.render.rows import Segments, View

    task = TaskInfo(
        root_id=X,
        tip_id=Y,
        lineage=[X, Y],
        segments=[SegmentInfo(id=X, end_reason="compression"), SegmentInfo(id=Y)],
    )
    sink = io.StringIO()
    out = Target(sink.write, tty=True, color=True, columns=100)

    def row(sid: str, i: int) -> Row:
        return Row(id=i, session_id=sid, role="assistant", text=f"row {i}")

    segments = Segments(task)
    terminal_rows.rows(out, [row(X, 1)], View(), segments)
    terminal_rows.rows(out, [row(X, 2), row(Y, 3)], View(), segments)
    terminal_rows.rows(out, [row(Y, 4)], View(), segments)
    text = sink.getvalue()
    line = f"\x1b[2m── segment {Y} · previous segment {X} ended: compression ──\x1b[0m"
    assert text.count(line) == 1
    assert text.index("row 2") < text.index(line) < text.index("row 3")
    assert segments.newest == Y


def test_shown_once_keeps_each_identity_once_at_its_earliest_copy() -> None:
    """`shown_once`, the de-duplication `compose` and the spooled lineage stream share: a key
    once; a `message_uid` at its earliest segment's first copy, wherever that comes in display
    order (an ancestor's row merged late into the tip's pages); a foreign row counted once."""
    owned = {"root": 0, "tip": 1}
    entries: list[tuple[tuple[str, int], str | None]] = [
        (("tip", 1), "goal"),  # a rotation's copy of the root's goal: the root's copy is shown
        (("root", 5), "steer"),
        (("root", 6), "steer"),  # compaction's pruned copy beside the original: shown once
        (("root", 5), "steer"),  # the same key again
        (("other", 9), None),
        (("other", 9), None),
        (("tip", 2), None),
        (("root", 1), "goal"),
        (("tip", 3), "tail"),
    ]
    first: dict[str, int] = {}
    for key, uid in entries:
        earliest(first, uid, owned.get(key[0]))
    assert first == {"goal": 0, "steer": 0, "tail": 1}
    assert list(shown_once(entries, owned, first)) == [
        (("root", 5), True),
        (("other", 9), False),
        (("tip", 2), True),
        (("root", 1), True),
        (("tip", 3), True),
    ]
