"""Forks are never resolved by recency (issue 25, item 3): every source of continuation
candidates (`--tip`, the `/latest-descendant` hint, the local store) is asked about every
compressed segment before the reader settles on a path, and two proven continuations of one
segment are `fork_ambiguous` whatever their start times; the hint alone stays usable.

The in-memory dashboard plays 0.19's hint (the newest child by `started_at`, walked); the
store is one that knows exactly the dashboard's sessions (`DashboardStore`)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_task.core.delegations import LedgerRecord
from hermes_task.core.lineage import StoreSession
from hermes_task.failures import Code, HermesError
from hermes_task.reading.hints import StoreHints
from hermes_task.reading.reader import TaskReader
from tests.support.dashboard import Dashboard

P = "20261201_100000_aaaaaa"
R = "20261201_100010_bbbbbb"
A = "20261201_100020_cccccc"
A2 = "20261201_100030_dddddd"
B = "20261201_100021_eeeeee"
CONFIG = json.dumps({"max_iterations": 90, "_delegate_from": P})


class DashboardStore:
    """A local store that holds the dashboard's own sessions (what a real store beside the
    dashboard is): children by `parent_session_id`, every id known."""

    def __init__(self, dash: Dashboard) -> None:
        self.dash = dash
        self.asked: list[str] = []

    def children(self, sid: str) -> list[StoreSession]:
        self.asked.append(sid)
        return [
            StoreSession(d["id"], d["parent_session_id"], d["model_config"], d["started_at"], d["ended_at"],
                         d["end_reason"], d["source"], None)
            for d in self.dash.details.values()
            if d["parent_session_id"] == sid
        ]  # fmt: skip

    def knows(self, sid: str) -> bool:
        return sid in self.dash.details

    def first_user_text(self, sid: str) -> str | None:
        return None

    def delegation(self, delegation_id: str) -> LedgerRecord | None:
        return None  # no background unit recorded

    def close(self) -> None:
        pass


def segment(dash: Dashboard, sid: str, parent: str, started: float, *, ended: float | None = None) -> None:
    """A `subagent` segment of task R; `ended` set: it ended by compression at that time."""
    dash.put(
        sid,
        source="subagent",
        parent_session_id=parent,
        model_config=CONFIG,
        started_at=started,
        ended_at=ended,
        end_reason="compression" if ended is not None else None,
    )
    dash.row(sid, role="assistant", content=f"{sid[-6:]} says hello")


def newest_child_hints(dash: Dashboard) -> None:
    """0.19.0's `/latest-descendant`: from any session, the newest child by `started_at`,
    again and again; the path walked and its end."""
    for sid in dash.details:
        path = [sid]
        while kids := [d for d in dash.details.values() if d["parent_session_id"] == path[-1]]:
            path.append(max(kids, key=lambda d: d["started_at"])["id"])
        dash.paths[sid] = path


def two_branches(*, b_started: float) -> Dashboard:
    """R compressed into A (which compressed into A2) and, on another branch, into B."""
    dash = Dashboard(contract="legacy")
    segment(dash, R, P, 10.0, ended=20.0)
    segment(dash, A, R, 15.0, ended=30.0)
    segment(dash, A2, A, 25.0)
    segment(dash, B, R, b_started)
    newest_child_hints(dash)
    return dash


def read(dash: Dashboard, *, tips: tuple[str, ...] = (), hint: bool = True, store: bool = True) -> Any:
    hints = StoreHints(DashboardStore(dash)) if store else None
    reader = TaskReader(dash.client(), R, tips=tips, hint=hint, store=hints)
    return reader, reader.refresh()


def test_a_hint_into_the_newer_branch_is_not_adopted_over_a_sibling_the_store_knows() -> None:
    """The old code adopted the hint's newest child B, then asked the store only about B
    (not compressed: never), and showed B's branch silently."""
    dash = two_branches(b_started=18.0)  # B is R's newest child: the hint's answer
    assert dash.paths[R] == [R, B]
    reader, snap = read(dash)
    assert snap.failure is not None
    assert snap.failure.code is Code.FORK_AMBIGUOUS
    assert reader.path == (R,)
    assert reader.candidate.status == "rejected"
    assert {r.session_id for r in reader.rows()} == {R}


def test_the_fork_does_not_depend_on_which_branch_is_newer() -> None:
    dash = two_branches(b_started=12.0)  # now A is the newest: the hint walks R, A, A2
    assert dash.paths[R] == [R, A, A2]
    reader, snap = read(dash)
    assert snap.failure is not None
    assert snap.failure.code is Code.FORK_AMBIGUOUS
    assert reader.path == (R,)


def test_an_explicit_tip_does_not_hide_a_sibling_the_store_knows() -> None:
    dash = two_branches(b_started=12.0)
    reader, snap = read(dash, tips=(A2,), hint=False)
    assert snap.failure is not None
    assert snap.failure.code is Code.FORK_AMBIGUOUS
    assert reader.path == (R,)


def test_an_explicit_tip_does_not_hide_a_newer_sibling_the_hint_names() -> None:
    dash = two_branches(b_started=18.0)
    reader, snap = read(dash, tips=(A2,), store=False)
    assert snap.failure is not None
    assert snap.failure.code is Code.FORK_AMBIGUOUS
    assert reader.path == (R,)


def test_the_hint_alone_with_no_sibling_evidence_stays_usable() -> None:
    dash = two_branches(b_started=18.0)
    reader, snap = read(dash, store=False)
    assert snap.failure is None
    assert reader.path == (R, B)
    assert (reader.candidate.id, reader.candidate.source) == (B, "latest_descendant")
    del dash.details[B], dash.rows[B]  # one branch only: the store agrees with the hint
    newest_child_hints(dash)
    reader, snap = read(dash)
    assert snap.failure is None
    assert reader.path == (R, A, A2)


def test_a_settled_segment_is_not_asked_again() -> None:
    dash = two_branches(b_started=12.0)
    del dash.details[B], dash.rows[B]
    newest_child_hints(dash)
    store = DashboardStore(dash)
    reader = TaskReader(dash.client(), R, store=StoreHints(store))
    reader.refresh()
    assert reader.path == (R, A, A2)
    assert store.asked == [R, A]
    hints = [c for c in dash.calls() if c[0] == "latest-descendant"]
    assert hints == [("latest-descendant", R)]  # its path already named A: asked once
    dash.log.clear()
    reader.refresh()
    assert store.asked == [R, A]
    assert [c for c in dash.calls() if c[0] != "detail"] == [("messages", A2)]


@settings(max_examples=60, deadline=None)
@given(
    b_started=st.sampled_from([11.0, 12.0, 16.0, 18.0, 19.5]),
    with_b=st.booleans(),
    tips=st.sampled_from([(), (A2,), (B,), (A2, B)]),
    hint=st.booleans(),
    store=st.booleans(),
)
def test_the_outcome_is_a_fork_exactly_when_two_branches_are_known(
    b_started: float, with_b: bool, tips: tuple[str, ...], hint: bool, store: bool
) -> None:
    """Whatever the start times and whichever sources are on: the reader settles on one
    branch only when no source names the other; a tip of a branch that does not exist is
    simply not readable."""
    dash = two_branches(b_started=b_started)
    if not with_b:
        del dash.details[B], dash.rows[B]
        newest_child_hints(dash)
        tips = tuple(t for t in tips if t != B)
    known = set()
    for tip in tips:
        known.add("b" if tip == B else "a")
    if hint:
        known.add("b" if B in dash.paths[R] else "a")
    if store:
        known |= {"a", "b"} if with_b else {"a"}
    reader, snap = read(dash, tips=tips, hint=hint, store=store)
    if known == {"a", "b"}:
        assert isinstance(snap.failure, HermesError)
        assert snap.failure.code is Code.FORK_AMBIGUOUS
        assert reader.path == (R,)
    else:
        assert snap.failure is None
        assert (
            reader.path
            == {frozenset(): (R,), frozenset("a"): (R, A, A2), frozenset("b"): (R, B)}[frozenset(known)]
        )
