"""The lineage proof: one accept/reject case per rule and direction, and properties."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_task.core.lineage import (
    BoundReached,
    ForkAmbiguous,
    LineageRejected,
    combine,
    continues_parent,
    prove,
)
from hermes_task.core.wire import SessionDetail
from tests.support.wirebody import decoded

P = "20261130_163359_a4d16b"


def detail(sid: str, **over: Any) -> SessionDetail:
    body: dict[str, Any] = {
        "id": sid,
        "source": "subagent",
        "parent_session_id": None,
        "model_config": json.dumps({"max_iterations": 90, "_delegate_from": P}),
        "started_at": 100.0,
        "ended_at": None,
        "end_reason": None,
    }
    body.update(over)
    return decoded(body, SessionDetail)


def chain(n: int, **tip_over: Any) -> list[SessionDetail]:
    """root -> s1 -> ... -> s(n-1): a valid rotated delegated chain (iot-like timestamps)."""
    out = []
    for i in range(n):
        sid = f"seg{i}"
        last = i == n - 1
        out.append(
            detail(
                sid,
                parent_session_id=P if i == 0 else f"seg{i - 1}",
                started_at=100.0 + i * 10,
                # iot inserts the child ~1 ms before it stamps the parent's closure
                ended_at=None if last else 100.0 + (i + 1) * 10 + 0.001,
                end_reason=None if last else "compression",
            )
        )
    if tip_over:
        out[-1] = decoded({**_raw(out[-1]), **tip_over}, SessionDetail)
    return out


def _raw(d: SessionDetail) -> dict[str, Any]:
    return {
        "id": d.id,
        "source": d.source,
        "parent_session_id": d.parent_session_id,
        "model_config": d.model_config_raw,
        "started_at": d.started_at,
        "ended_at": d.ended_at,
        "end_reason": d.end_reason,
        "profile_name": d.profile_name,
    }


def reader(nodes: list[SessionDetail]) -> Callable[[str], SessionDetail]:
    by_id = {n.id: n for n in nodes}
    by_id.setdefault(P, detail(P, source="cli", model_config=None))

    def read(sid: str) -> SessionDetail:
        if sid not in by_id:
            raise LineageRejected("unknown", sid)
        return by_id[sid]

    return read


def test_valid_chain_proves_tip_to_root() -> None:
    nodes = chain(3)
    proof = prove(nodes[0], "seg2", reader(nodes), rewrites_source=False)
    assert proof.path == ("seg0", "seg1", "seg2")
    assert proof.notes == ()


def test_candidate_equal_to_anchor_is_trivially_proven() -> None:
    nodes = chain(1)
    assert prove(nodes[0], "seg0", reader(nodes), rewrites_source=False).path == ("seg0",)


def _mutate(nodes: list[SessionDetail], index: int, **over: Any) -> list[SessionDetail]:
    out = list(nodes)
    out[index] = decoded({**_raw(out[index]), **over}, SessionDetail)
    return out


REJECTIONS = [
    # (description, node index to change, override, expected reason)
    ("parent ended normally, not by compression", 1, {"end_reason": "agent_close"}, "not_compression_edge"),
    ("parent still running", 1, {"end_reason": None}, "not_compression_edge"),
    ("child created before its parent", 2, {"started_at": 50.0}, "bad_timestamps"),
    ("parent closed before it started", 1, {"ended_at": 10.0}, "bad_timestamps"),
    ("non-finite timestamp", 2, {"started_at": float("nan")}, "bad_timestamps"),
    ("parent closure missing", 1, {"ended_at": None}, "bad_timestamps"),
    ("source changed subagent -> cli", 2, {"source": "cli"}, "source_changed"),
    ("source missing", 2, {"source": None}, "missing_field"),
    (
        "inherited marker changed",
        2,
        {"model_config": json.dumps({"_delegate_from": "someone_else"})},
        "marker_changed",
    ),
    ("inherited marker dropped", 2, {"model_config": json.dumps({"max_iterations": 90})}, "marker_changed"),
    (
        "marker added on a hop",
        2,
        {"model_config": json.dumps({"_delegate_from": P, "_branched_from": "x"})},
        "marker_changed",
    ),
    ("model config is not JSON", 2, {"model_config": "{not json"}, "bad_model_config"),
    ("model config is a list", 2, {"model_config": "[1, 2]"}, "bad_model_config"),
    ("profile changed", 2, {"profile_name": "work"}, "profile_changed"),
    ("a sibling task root, not a continuation", 2, {"parent_session_id": P}, "foreign_root"),
    ("cycle", 1, {"parent_session_id": "seg2"}, "cycle"),
]


@pytest.mark.parametrize(("what", "index", "override", "reason"), REJECTIONS, ids=[r[0] for r in REJECTIONS])
def test_each_rule_rejects(what: str, index: int, override: dict[str, Any], reason: str) -> None:
    nodes = chain(3)
    if what == "profile changed":
        nodes = [decoded({**_raw(n), "profile_name": "default"}, SessionDetail) for n in nodes]
    nodes = _mutate(nodes, index, **override)
    read = reader(nodes)
    with pytest.raises(LineageRejected) as info:
        prove(nodes[0], "seg2", read, rewrites_source=False)
    assert info.value.reason == reason


def test_missing_model_config_key_is_rejected() -> None:
    nodes = chain(3)
    raw = _raw(nodes[2])
    del raw["model_config"]
    nodes[2] = decoded(raw, SessionDetail)
    with pytest.raises(LineageRejected) as info:
        prove(nodes[0], "seg2", reader(nodes), rewrites_source=False)
    assert info.value.reason == "missing_field"


def test_marker_naming_the_direct_parent_is_a_delegation_not_a_continuation() -> None:
    nodes = chain(3)
    # seg2 delegated from seg1 (a grandchild task), and seg1's config says the same: equal
    # markers, but the marker names the direct parent.
    nodes = _mutate(nodes, 1, model_config=json.dumps({"_delegate_from": "seg1"}))
    nodes = _mutate(nodes, 2, model_config=json.dumps({"_delegate_from": "seg1"}))
    with pytest.raises(LineageRejected) as info:
        prove(nodes[0], "seg2", reader(nodes), rewrites_source=False)
    assert info.value.reason == "foreign_root"
    # the same against the anchor itself: a child delegated by the anchor is not its continuation
    direct = chain(2)
    direct = _mutate(direct, 0, end_reason="compression", ended_at=200.0)
    direct = _mutate(direct, 1, model_config=json.dumps({"_delegate_from": "seg0"}))
    with pytest.raises(LineageRejected) as info:
        prove(direct[0], "seg1", reader(direct), rewrites_source=False)
    assert info.value.reason in ("marker_changed", "direct_parent_marker")


def test_another_tasks_tip_is_rejected() -> None:
    ours = chain(2)
    p2 = "other_parent"
    marker = json.dumps({"_delegate_from": p2})
    other = [
        detail(p2, source="cli", model_config=None),
        detail("o0", parent_session_id=p2, model_config=marker, ended_at=120.0, end_reason="compression"),
        detail("o1", parent_session_id="o0", model_config=marker, started_at=115.0, ended_at=None),
    ]
    with pytest.raises(LineageRejected) as info:
        prove(ours[0], "o1", reader(ours + other), rewrites_source=False)
    # o1 -> o0 is a fine compression edge; o0 is the other task's delegation root
    assert info.value.reason == "foreign_root"
    assert info.value.at == "o0"


def test_tool_to_subagent_rewrite_is_accepted_only_where_rotation_rewrites_the_source() -> None:
    nodes = chain(2)
    nodes = _mutate(nodes, 0, source="tool")
    with pytest.raises(LineageRejected):
        prove(nodes[0], "seg1", reader(nodes), rewrites_source=False)
    proof = prove(nodes[0], "seg1", reader(nodes), rewrites_source=True)
    assert proof.path == ("seg0", "seg1")
    assert proof.notes == ("legacy_source_rewrite",)
    # the reverse direction (subagent -> tool) is never accepted
    reverse = _mutate(chain(2), 1, source="tool")
    with pytest.raises(LineageRejected):
        prove(reverse[0], "seg1", reader(reverse), rewrites_source=True)


def test_rewrite_thunk_is_asked_only_when_the_exception_could_apply() -> None:
    asked: list[str] = []

    def rewrites(child: SessionDetail) -> bool:
        asked.append(child.id)
        return True

    prove(chain(3)[0], "seg2", reader(chain(3)), rewrites_source=rewrites)
    assert asked == []
    tool_root = _mutate(chain(3), 0, source="tool")
    proof = prove(tool_root[0], "seg2", reader(tool_root), rewrites_source=rewrites)
    assert asked == ["seg1"]  # the child of the rewritten hop, nothing else
    assert proof.notes == ("legacy_source_rewrite",)

    def copies(child: SessionDetail) -> bool:
        return False

    with pytest.raises(LineageRejected) as info:
        prove(tool_root[0], "seg2", reader(tool_root), rewrites_source=copies)
    assert info.value.reason == "source_changed"
    # any other source change is still rejected, whatever the backend does
    other = _mutate(chain(2), 0, source="tui")
    with pytest.raises(LineageRejected) as info:
        prove(other[0], "seg1", reader(other), rewrites_source=True)
    assert info.value.reason == "source_changed"


def test_path_bound() -> None:
    nodes = chain(40)
    with pytest.raises(BoundReached):
        prove(nodes[0], "seg39", reader(nodes), rewrites_source=False)
    assert prove(nodes[0], "seg31", reader(nodes), rewrites_source=False).path[-1] == "seg31"


@pytest.mark.parametrize(
    "over",
    [{"ended_at": 90.0}, {"ended_at": float("inf")}, {"started_at": float("nan"), "ended_at": 200.0}],
    ids=["ended-before-it-started", "infinite-end", "no-finite-start"],
)
def test_the_candidates_own_end_must_be_coherent(over: dict[str, Any]) -> None:
    # seg2 starts at 120: ending at 90 is before its own start. The walk used to check only
    # the hops' parents, never the candidate's own closure.
    nodes = chain(3, end_reason="agent_close", **over)
    with pytest.raises(LineageRejected) as info:
        prove(nodes[0], "seg2", reader(nodes), rewrites_source=False)
    assert (info.value.reason, info.value.at) == ("bad_timestamps", "seg2")
    ended = chain(3, end_reason="agent_close", ended_at=130.0)
    assert prove(ended[0], "seg2", reader(ended), rewrites_source=False).path[-1] == "seg2"


def test_a_walk_ends_at_an_already_verified_segment() -> None:
    nodes = chain(40)
    asked: list[str] = []
    read = reader(nodes)

    def counted(sid: str) -> SessionDetail:
        asked.append(sid)
        return read(sid)

    verified = tuple(n.id for n in nodes[:32])
    proof = prove(nodes[0], "seg39", counted, rewrites_source=False, verified=verified)
    assert proof.path == tuple(n.id for n in nodes)
    assert asked == [f"seg{i}" for i in range(39, 30, -1)]  # seg39 .. seg31: not the proven part
    # a late reference to a verified segment is its verified prefix, with no read
    asked.clear()
    assert prove(nodes[0], "seg5", counted, rewrites_source=False, verified=verified).path == verified[:6]
    assert asked == []
    # a verified path that is not this anchor's is not used
    with pytest.raises(BoundReached):
        prove(nodes[0], "seg39", read, rewrites_source=False, verified=("other", *verified[1:]))


def test_a_delegation_of_a_verified_segment_is_not_its_continuation() -> None:
    nodes = chain(3)
    grandchild = detail(
        "g0", parent_session_id="seg1", started_at=125.0, model_config=json.dumps({"_delegate_from": "seg1"})
    )
    with pytest.raises(LineageRejected) as info:
        prove(nodes[0], "g0", reader([*nodes, grandchild]), rewrites_source=False, verified=("seg0", "seg1"))
    assert info.value.reason == "foreign_root"


@settings(max_examples=80, deadline=None)
@given(length=st.integers(min_value=2, max_value=70), data=st.data())
def test_a_proof_in_steps_is_the_whole_walk_each_step_bounded(length: int, data: st.DataObject) -> None:
    """Proving from a verified prefix gives the same path as one walk from the anchor; only
    the walk from the candidate to the prefix counts against the 32-node bound."""
    nodes = chain(length)
    whole = tuple(n.id for n in nodes)
    k = data.draw(st.integers(min_value=1, max_value=length), label="verified prefix length")
    walk = length - k + 1  # candidate .. the newest verified segment
    if walk > 32 and k < length:
        with pytest.raises(BoundReached):
            prove(nodes[0], whole[-1], reader(nodes), rewrites_source=False, verified=whole[:k])
    else:
        assert (
            prove(nodes[0], whole[-1], reader(nodes), rewrites_source=False, verified=whole[:k]).path == whole
        )
    if length <= 32:
        assert prove(nodes[0], whole[-1], reader(nodes), rewrites_source=False).path == whole


def test_combine_extends_keeps_newer_and_refuses_forks() -> None:
    assert combine(("r",), ("r", "a")) == ("r", "a")
    assert combine(("r", "a", "b"), ("r", "a")) == ("r", "a", "b")  # late ancestor reference
    with pytest.raises(ForkAmbiguous):
        combine(("r", "a"), ("r", "b"))


def test_continues_parent_distinguishes_delegation_roots_from_continuations() -> None:
    nodes = chain(2)
    assert continues_parent(nodes[1], nodes[0], rewrites_source=False)
    chat = detail(P, source="cli", model_config=None, ended_at=300.0, end_reason="compression")
    assert not continues_parent(nodes[0], chat, rewrites_source=False)


@settings(max_examples=60, deadline=None)
@given(length=st.integers(min_value=2, max_value=12), data=st.data())
def test_every_valid_chain_proves_and_any_single_corruption_rejects(length: int, data: st.DataObject) -> None:
    nodes = chain(length)
    tip = nodes[-1].id
    assert prove(nodes[0], tip, reader(nodes), rewrites_source=False).path == tuple(n.id for n in nodes)
    hop = data.draw(st.integers(min_value=1, max_value=length - 1), label="hop child index")
    corruptions: list[tuple[str, dict[str, Any]]] = [
        ("parent", {"end_reason": "agent_close"}),
        ("parent", {"ended_at": None}),
        ("child", {"started_at": 0.0}),
        ("child", {"source": "tool"}),
        ("child", {"model_config": json.dumps({"_delegate_from": "elsewhere"})}),
        ("child", {"model_config": "nope"}),
        ("child", {"parent_session_id": "stranger"}),
    ]
    corruption = data.draw(st.sampled_from(corruptions), label="corruption")
    which, override = corruption
    index = hop - 1 if which == "parent" else hop
    broken = _mutate(nodes, index, **override)
    with pytest.raises(LineageRejected):
        prove(broken[0], tip, reader(broken), rewrites_source=False)


@pytest.mark.parametrize(
    "config",
    [None, "null", {"_delegate_from": P, "max_iterations": 90}],
    ids=["json-null", "string-null", "decoded-object"],
)
def test_a_null_or_decoded_model_config_is_read_as_it_is(config: object) -> None:
    """A null config (a plain chat's segments) has no markers; a config the backend sends
    already decoded is read like its JSON string. Both prove a valid chain."""
    nodes = [_raw(n) for n in chain(3)]
    for raw in nodes:
        raw["model_config"] = config
    proof = prove(
        decoded(nodes[0], SessionDetail),
        "seg2",
        reader([decoded(n, SessionDetail) for n in nodes]),
        rewrites_source=False,
    )
    assert proof.path == ("seg0", "seg1", "seg2")


@pytest.mark.parametrize(
    "profiles",
    [("work", "work", "work"), (None, None, "work"), ("work", None, None)],
    ids=["same-everywhere", "only-the-tip-records-one", "only-the-root-records-one"],
)
def test_the_profile_is_compared_only_where_both_segments_record_one(
    profiles: tuple[str | None, ...],
) -> None:
    nodes = [
        decoded({**_raw(n), "profile_name": p}, SessionDetail)
        for n, p in zip(chain(3), profiles, strict=True)
    ]
    assert prove(nodes[0], "seg2", reader(nodes), rewrites_source=False).path == ("seg0", "seg1", "seg2")


def test_a_candidate_with_no_parent_is_unrelated_and_nothing_more_is_read() -> None:
    nodes = _mutate(chain(3), 2, parent_session_id=None)
    asked: list[str] = []
    read = reader(nodes)

    def counted(sid: str) -> SessionDetail:
        asked.append(sid)
        return read(sid)

    with pytest.raises(LineageRejected) as info:
        prove(nodes[0], "seg2", counted, rewrites_source=False)
    assert info.value.reason == "unrelated"
    assert info.value.at == "seg2"
    assert asked == ["seg2"]


def test_a_rejection_reads_as_its_reason_and_where() -> None:
    assert str(LineageRejected("cycle")) == "cycle"
    assert str(LineageRejected("cycle", "seg1")) == "cycle at seg1"
