"""Lineage on the real backends (issue 25): each durable row printed once across segments,
a plain chat rotated 39 times, and a fork the newest-child hint must not settle.

The chats are seeded through Hermes' own code (`seeding chain`: the real compressor; the
fork's second continuation through `SessionDB.create_session`), each test on a chat of its
own, so the shared session backend's other scenarios are untouched."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from tests.integration.test_whole import durable, own_uids
from tests.support.cli_runner import hermes_task

pytestmark = pytest.mark.integration


def codes(doc: dict[str, Any]) -> list[str]:
    return [w["code"] for w in doc["warnings"]]


@pytest.mark.parametrize("chain", ["c1", "c2", "c3"])
def test_older_all_prints_each_message_uid_once(backend: Any, chain: str) -> None:
    """iot re-anchors rows into the next segment under their `message_uid` (and in-place
    compaction leaves a pruned copy beside the archived original): each is printed once,
    the earliest copy. Without uids (0.18, 0.19, 0.20) this holds by (session_id, id)."""
    c = backend.manifest[chain]
    segments = [c[s] for s in ("root", "mid", "tip") if s in c]
    run = hermes_task(backend, "older", c["root"], "--tip", c["tip"], "--all", "--json")
    assert run.code == 0, run.stderr
    doc = run.json()
    rows = [row for sid in segments for row in own_uids(backend, sid)]
    uid_of = dict(rows)
    got = [(r["session_id"], r["id"]) for r in doc["rows"]]
    assert set(got) <= set(uid_of)
    shown = Counter(uid_of[k] for k in got if uid_of[k] is not None)
    assert [uid for uid, n in shown.items() if n > 1] == []
    truth = durable(rows)
    assert set(got) <= set(truth)
    assert doc["coverage"]["unique_rows"] == len(truth)  # counted once too (hidden rows included)
    if any(uid is not None for _key, uid in rows):
        assert len(truth) < len(rows)  # the seeded rotations did re-anchor rows
        assert [r["text"] for r in doc["rows"]].count(c["goal"]) == 1
    else:  # 0.19's rotation writes the goal again as a new row: a row of its own
        assert len(truth) == len(rows)


@pytest.fixture(scope="module")
def chain39(backend: Any) -> dict[str, Any]:
    seeded: dict[str, Any] = backend.chain(39)
    return seeded


def test_a_chat_rotated_39_times_is_proven_in_steps_and_shown(backend: Any, chain39: dict[str, Any]) -> None:
    """The root's messages answer for the newest of 40 segments, past one 32-node proof
    walk: the old code ended with identity_mismatch (exit 5) and no rows. The hint or the
    store names the segments in between, so the lineage is proven step by step."""
    segments = chain39["segments"]
    run = hermes_task(backend, "show", chain39["root"], "--json")
    assert run.code == 0, run.stderr
    doc = run.json()
    assert doc["task"]["lineage"] == segments
    assert doc["task"]["tip_id"] == chain39["tip"]
    assert doc["rows"][-1]["text"] == chain39["answer"]
    assert {r["session_id"] for r in doc["rows"]} <= set(segments)
    assert "partial_history" not in codes(doc)


def test_a_redirect_past_the_path_bound_is_bound_reached_not_exit_5(
    backend: Any, chain39: dict[str, Any]
) -> None:
    """With no source naming a segment in between (no hint, no store), nothing of the answer
    can be proven within the bound: `bound_reached` beside what is proven, exit 0."""
    run = hermes_task(backend, "show", chain39["root"], "--no-hint", "--no-store", "--json")
    assert run.code == 0, run.stderr
    doc = run.json()
    assert doc["kind"] == "transcript"
    assert "bound_reached" in codes(doc)
    assert doc["task"]["lineage"][0] == chain39["root"]
    assert {r["session_id"] for r in doc["rows"]} <= set(doc["task"]["lineage"])
    if doc["task"]["tip_id"] != chain39["tip"]:
        assert "partial_history" in codes(doc)  # the newest proven segment ended by compression


def test_two_continuations_of_one_segment_are_a_fork_whatever_the_hint_says(backend: Any) -> None:
    """One rotation, then a second continuation of the same segment (newer: 0.19's hint and
    the server's own redirect may pick either). With the store beside the dashboard both are
    proposed: fork_ambiguous, exit 5, and nothing of either branch is shown."""
    forked = backend.chain(1, fork=True)
    run = hermes_task(backend, "show", forked["root"], "--json")
    assert run.code == 5, run.stderr
    doc = run.json()
    assert doc["error"]["code"] == "fork_ambiguous"
    assert {r["session_id"] for r in doc["rows"]} <= {forked["root"]}
