"""core/lineage.py: a task's child by goal and order, never a guess; continuation rows."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hermes_task.core.lineage import (
    AMBIGUOUS,
    Spawn,
    StoreSession,
    is_continuation,
    is_delegated_child,
    match,
    normalise_goal,
    spawn_times,
)

P = "20261201_100000_aaaaaa"
P2 = "20261201_100500_dddddd"


def row(sid: str, parent: str | None = P, started: float = 10.0, **cfg: object) -> StoreSession:
    config = {"max_iterations": 90, "_delegate_from": parent, **cfg}
    return StoreSession(
        id=sid,
        parent_session_id=parent,
        model_config=json.dumps(config),
        started_at=started,
        ended_at=None,
        end_reason=None,
        source="subagent",
        profile_name=None,
    )


def spawn(key: int, goal: str | None, at: float | None, segments: frozenset[str] = frozenset({P})) -> Spawn:
    return Spawn(key=key, goal=goal, segments=segments, spawned_at=at)


def test_goal_normalisation() -> None:
    assert normalise_goal("  Count\tTODO \n markers ") == "Count TODO markers"
    assert normalise_goal("   ") is None
    assert normalise_goal(["not text"]) is None


def test_each_task_gets_its_own_child_by_goal() -> None:
    kids = [row("c-a", started=11), row("c-b", started=12)]
    goals = {"c-a": "Count TODO", "c-b": "Check the build"}
    got = match([spawn(0, "Count  TODO", 10), spawn(1, "Check the build", 10)], kids, goals)
    assert got == {0: "c-a", 1: "c-b"}


def test_a_child_started_before_its_spawn_call_matches_nothing() -> None:
    assert match([spawn(0, "G", 20)], [row("c", started=19.999)], {"c": "G"}) == {}
    assert match([spawn(0, "G", None)], [row("c", started=30)], {"c": "G"}) == {}


def test_same_goal_told_apart_by_order_or_ambiguous_never_swapped() -> None:
    # The second call came after the first child started: the first child cannot be the
    # second task's; but the second child could be either task's, so both are ambiguous.
    kids = [row("c1", started=11), row("c2", started=21)]
    goals = {"c1": "G", "c2": "G"}
    got = match([spawn(0, "G", 10), spawn(1, "G", 20)], kids, goals)
    assert got == {0: AMBIGUOUS, 1: AMBIGUOUS}
    # Only the later child exists: still not guessed.
    assert match([spawn(0, "G", 10), spawn(1, "G", 20)], kids[1:], goals) == {0: AMBIGUOUS, 1: AMBIGUOUS}
    # Only the earlier call's child can exist before the later call: matched.
    assert match([spawn(0, "G", 10), spawn(1, "G", 20)], kids[:1], goals) == {0: "c1"}


def test_a_synchronous_task_without_a_child_never_borrows_one() -> None:
    background, sync = spawn(0, "G", 10), spawn(1, "G", 20)
    assert match([background, sync], [row("c", started=11)], {"c": "G"}) == {0: "c"}


def test_children_of_another_segment_or_not_delegated_are_ignored() -> None:
    foreign = row("c-x", parent=P2, started=11)
    continuation = row("c-y", started=11, _delegate_from="20261201_090000_eeeeee")
    goals = {"c-x": "G", "c-y": "G"}
    assert match([spawn(0, "G", 10)], [foreign, continuation], goals) == {}
    assert match([spawn(0, "G", 10, frozenset({P, P2}))], [foreign], goals) == {0: "c-x"}
    bad = StoreSession("c-z", P, "{not json", 11.0, None, None, "subagent", None)
    assert match([spawn(0, "G", 10)], [bad], {"c-z": "G"}) == {}


def test_unknown_goals_match_nothing() -> None:
    assert match([spawn(0, None, 10)], [row("c", started=11)], {"c": "G"}) == {}
    assert match([spawn(0, "G", 10)], [row("c", started=11)], {}) == {}


def test_delegated_child_and_continuation_rows() -> None:
    child = row("c", started=11)
    assert is_delegated_child(child, P)
    assert not is_delegated_child(child, P2)
    seg = "20261201_100001_bbbbbb"
    segment_markers = {"_delegate_from": P}
    cont = row("n", parent=seg, started=12)
    assert cont.parent_session_id == seg
    cont = StoreSession("n", seg, json.dumps({"_delegate_from": P}), 12.0, None, None, "subagent", None)
    assert is_continuation(cont, seg, segment_markers)
    assert not is_continuation(cont, seg, {"_delegate_from": P2})  # markers changed
    grandchild = StoreSession(
        "g", seg, json.dumps({"_delegate_from": seg}), 12.0, None, None, "subagent", None
    )
    assert not is_continuation(grandchild, seg, {"_delegate_from": seg})  # names the segment
    assert not is_continuation(cont, P, segment_markers)  # not its parent


@pytest.mark.parametrize("config", [None, "null"], ids=["NULL", "json-null"])
def test_a_null_config_is_a_continuation_with_no_markers(config: str | None) -> None:
    """A plain chat's segments may record no model config: no markers, as the lineage proof
    reads it, so its continuations are proposed (they were not)."""
    seg = "20261201_100001_bbbbbb"
    cont = StoreSession("n", seg, config, 12.0, None, None, "cli", None)
    assert is_continuation(cont, seg, {})
    assert not is_continuation(cont, seg, {"_delegate_from": P})
    assert not is_delegated_child(cont, seg)
    assert not is_continuation(StoreSession("n", seg, "[1]", 12.0, None, None, "cli", None), seg, {})


def test_spawn_times_take_the_earliest_row_carrying_the_call() -> None:
    def msg(ts: float | None, calls: object, role: str = "assistant") -> SimpleNamespace:
        return SimpleNamespace(role=role, timestamp=ts, tool_calls=calls)

    rows = [
        msg(12.0, [{"id": "call_1", "function": {"name": "delegate_task"}}]),
        msg(10.0, json.dumps([{"id": "call_1"}, {"id": "call_2"}])),
        msg(9.0, [{"id": "call_3"}], role="tool"),
        msg(None, [{"id": "call_4"}]),
        msg(11.0, "not json"),
    ]
    assert spawn_times(rows) == {"call_1": 10.0, "call_2": 10.0}


@given(
    st.lists(st.tuples(st.sampled_from("GHK"), st.integers(0, 50)), max_size=6),
    st.lists(st.tuples(st.sampled_from("GHK"), st.integers(0, 60)), max_size=6),
)
def test_a_match_is_always_unique_both_ways(
    tasks: list[tuple[str, int]], kids: list[tuple[str, int]]
) -> None:
    spawns = [spawn(i, goal, float(at)) for i, (goal, at) in enumerate(tasks)]
    children = [row(f"c{i}", started=float(at)) for i, (_, at) in enumerate(kids)]
    goals = {f"c{i}": goal for i, (goal, _) in enumerate(kids)}
    got = match(spawns, children, goals)
    matched = [v for v in got.values() if v != AMBIGUOUS]
    assert len(matched) == len(set(matched))  # no child is given to two tasks
    for key, value in got.items():
        fitting = [
            c for c in children if goals[c.id] == tasks[key][0] and (c.started_at or 0) >= tasks[key][1]
        ]
        assert fitting  # a reported task always has a fitting child
        if value != AMBIGUOUS:
            assert [c.id for c in fitting] == [value]
            claimants = [
                k
                for k, (g, at) in enumerate(tasks)
                if g == goals[value] and at <= (fitting[0].started_at or 0)
            ]
            assert claimants == [key]


def test_rows_of_another_profile_are_never_proposed() -> None:
    from hermes_task.core.lineage import same_profile

    mine = row("c", started=11)
    assert same_profile(mine, None)
    assert same_profile(StoreSession("c", P, None, 1.0, None, None, "x", "default"), None)
    other = StoreSession("c", P, None, 1.0, None, None, "x", "work")
    assert not same_profile(other, None)
    assert same_profile(other, "work")


# -- cost: linear in tasks (issue 29) ----------------------------------------------------------


def _fan_out(n: int) -> tuple[list[Spawn], list[StoreSession], dict[str, str | None]]:
    spawns = [spawn(i, f"Check shard {i:04d}", 10.0) for i in range(n)]
    kids = [row(f"c-{i:04d}", started=11.0 + i) for i in range(n)]
    return spawns, kids, {f"c-{i:04d}": f"Check shard {i:04d}" for i in range(n)}


@pytest.mark.parametrize("n", [50, 500])
def test_matching_compares_each_task_with_its_own_children_only(
    n: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """N tasks with N distinct goals cost N (task, child) comparisons, not N * N: each task
    asks the index of its own (segment, goal) (the quadratic match compared 250,000 at 500)."""
    import hermes_task.core.lineage as children

    compared: list[int] = []
    real = children._finite

    def counting(value: object) -> bool:
        compared.append(1)
        return real(value)

    monkeypatch.setattr(children, "_finite", counting)
    spawns, kids, goals = _fan_out(n)
    assert match(spawns, kids, goals) == {i: f"c-{i:04d}" for i in range(n)}
    assert len(compared) == 2 * n  # the spawn's and the child's times, once per comparison


def test_each_model_config_text_is_parsed_once() -> None:
    from hermes_task.core.lineage import config_markers

    spawns, kids, goals = _fan_out(300)
    config_markers.cache_clear()
    match(spawns, kids, goals)
    match(spawns, kids, goals)
    info = config_markers.cache_info()
    assert info.misses == 1  # the children of one parent share one config text
    assert info.hits >= 300


def test_identical_goals_are_still_ambiguous_through_the_index() -> None:
    spawns = [spawn(i, "Run the suite", 10.0) for i in range(3)]
    kids = [row(f"c-{i}", started=11.0 + i) for i in range(3)]
    assert match(spawns, kids, dict.fromkeys((k.id for k in kids), "Run the suite")) == dict.fromkeys(
        range(3), AMBIGUOUS
    )
