"""Durable identity across segments (issue 25, item 8): where the backend gives rows a
`message_uid` (iot), a row re-anchored into a later segment (the goal and steer rows after a
rotation, the carried tail) is the same row: shown once (the earliest segment's copy) and
counted once, by `show`, `older` and `follow`; so is the pruned copy in-place compaction
leaves beside its archived original. A backend without uids keeps (`session_id`, `id`)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_task.core.lineage import compose
from hermes_task.core.window import Window, merge_latest
from hermes_task.core.wire import WireMessage
from hermes_task.reading.polling import Follower, PollConfig
from hermes_task.reading.reader import TaskReader
from hermes_task.reading.stream import Plan, read_batches
from tests.support.wirebody import decoded
from tests.unit.test_poll import Clock, Lineage, Recorder, X, Y, Z

W = "20260101_000009_ffffff"


def msg(sid: str, rid: int, uid: str | None = None, role: str = "assistant") -> WireMessage:
    body: dict[str, Any] = {"id": rid, "session_id": sid, "role": role, "content": f"{sid[-6:]} {rid}"}
    if uid is not None:
        body["message_uid"] = uid
    return decoded(body, WireMessage)


def window(canonical: str, rows: list[WireMessage]) -> Window:
    return merge_latest(Window(canonical=canonical), rows, exhausted=True).window


def test_a_re_anchored_row_is_shown_once_from_the_earliest_segment() -> None:
    earlier = {X: window(X, [msg(X, 1, "goal", "user"), msg(X, 2, "a"), msg(X, 3, "b")])}
    # Y's page: the goal and b re-anchored (same uids, new ids), one row of its own, one
    # without a uid, and an archived original (14) with its pruned copy (15) in Y itself
    tip = window(Y, [msg(Y, 10, "goal", "user"), msg(Y, 11, "b"), msg(Y, 12, "c"), msg(Y, 13),
                     msg(Y, 14, "d"), msg(Y, 15, "d"), msg(W, 16, "a")])  # fmt: skip
    view = compose((X, Y), tip, earlier)
    assert view.keys == ((X, 1), (X, 2), (X, 3), (Y, 12), (Y, 13), (Y, 14))
    assert view.foreign == 1  # W is not a segment: dropped and counted, its uid ignored
    without = compose((X, Y), tip, {})  # X not read: Y's copies are the earliest held
    assert without.keys == ((Y, 10), (Y, 11), (Y, 12), (Y, 13), (Y, 14))


@settings(max_examples=150, deadline=None)
@given(
    data=st.lists(st.tuples(st.integers(0, 2), st.one_of(st.none(), st.sampled_from("abcdef"))), max_size=25)
)
def test_every_durable_row_is_shown_once_its_earliest_copy(
    data: list[tuple[int, str | None]],
) -> None:
    path = (X, Y, Z)
    rows = [msg(path[seg], i + 1, uid) for i, (seg, uid) in enumerate(data)]
    tip = window(Z, [m for m in rows if m.session_id == Z])
    earlier = {sid: window(sid, [m for m in rows if m.session_id == sid]) for sid in (X, Y)}
    view = compose(path, tip, earlier)
    shown = [view.messages[k] for k in view.keys]
    assert len(view.keys) == len(set(view.keys))
    for uid in {m.message_uid for m in rows} - {None}:
        earliest = min(path.index(m.session_id) for m in rows if m.message_uid == uid)
        copies = [m for m in shown if m.message_uid == uid]
        assert len(copies) == 1
        assert copies[0] == next(
            m for m in rows if m.message_uid == uid and path.index(m.session_id) == earliest
        )
    assert [m for m in shown if m.message_uid is None] == [
        m for sid in path for m in rows if m.session_id == sid and m.message_uid is None
    ]


def re_anchoring_chain() -> tuple[Lineage, list[tuple[str, int]]]:
    """X -> Y by compression on a backend whose pages merge the lineage and whose rows carry
    uids; the rotation re-anchored X's goal into Y under its uid (a new row id), so Y's page
    holds both copies, as iot's merged view can, and X's own page holds the original."""
    client = Lineage(legacy=False)
    client.add(X)
    goal = client.row(X, role="user", content="Count the TODOs", message_uid="u-goal")
    first = client.row(X, role="assistant", content="looking", message_uid="u-1")
    client.rotate(X, Y)
    client.row(Y, role="user", content="Count the TODOs", message_uid="u-goal")  # re-anchored
    rest = [client.row(Y, role="assistant", content=f"step {i}", message_uid=f"u-y{i}") for i in range(3)]
    client.end(Y, "agent_close", at=9.0)
    return client, [goal, first, *rest]


def test_older_all_shows_and_counts_the_goal_once() -> None:
    """The old code showed the re-anchored goal twice (`older ROOT --tip TIP --all` on iot)."""
    client, expected = re_anchoring_chain()
    reader = TaskReader(client.client(), X, tips=[Y])
    reader.refresh()
    read_batches(reader, Plan(batches=None, limit=500))
    doc = reader.document([])
    assert [(r.session_id, r.id) for r in doc.rows] == expected
    assert [r.text for r in doc.rows].count("Count the TODOs") == 1
    assert doc.coverage.unique_rows == len(expected)
    assert [s.rows_shown for s in doc.task.segments] == [2, 3]


def test_a_backend_without_uids_keeps_every_row_by_session_and_id() -> None:
    client, expected = re_anchoring_chain()
    for rows in client.rows.values():
        for row in rows:
            row.pop("message_uid", None)
    reader = TaskReader(client.client(), X, tips=[Y])
    reader.refresh()
    read_batches(reader, Plan(batches=None, limit=500))
    assert len(reader.document([]).rows) == len(expected) + 1  # two rows: two ids


def test_follow_reports_a_durable_row_once_across_segments() -> None:
    """Y's page brings the re-anchored goal first; X's original arrives later (an earlier
    segment read on its own). The old follow reported the goal again."""
    client, expected = re_anchoring_chain()
    client.merged[Y] = [Y]  # Y's page: its own rows only (the goal copy among them)
    copy = (Y, client.rows[Y][0]["id"])
    goals = {expected[0], copy}
    reader = TaskReader(client.client(), X, tips=[Y])
    recorder = Recorder()
    follower = Follower(reader, recorder, PollConfig(interval=1.0), clock=Clock(), sleep=lambda s: None)
    follower.cycle()
    assert [k for k in recorder.row_keys if k in goals] == [copy]
    reader.fill()  # X's own page: the original goal, now the earliest copy held
    follower.cycle()
    assert [k for k in recorder.row_keys if k in goals] == [copy]
    assert expected[1] in recorder.row_keys  # X's other row is new: reported
    assert len(recorder.row_keys) == len(set(recorder.row_keys)) == len(expected)


def test_show_fills_its_newest_page_with_distinct_rows() -> None:
    """Y carries copies of X's last ten rows (same uids): Y's page and X's newest page hold
    ten rows twice. `show` still shows the newest 50 distinct rows (it showed 40)."""
    client = Lineage(legacy=False)
    client.add(X)
    xs = [client.row(X, role="assistant", content=f"x {i}", message_uid=f"x{i}") for i in range(60)]
    client.rotate(X, Y)
    client.merged[Y] = [Y]  # a `tool` chain on iot: Y's pages hold Y's rows only
    for i in range(50, 60):
        client.row(Y, role="assistant", content=f"x {i}", message_uid=f"x{i}")
    ys = [client.row(Y, role="assistant", content=f"y {i}", message_uid=f"y{i}") for i in range(5)]
    reader = TaskReader(client.client(), X, tips=[Y])
    reader.refresh()
    reader.fill()
    assert [(r.session_id, r.id) for r in reader.rows()] == xs[-45:] + ys
