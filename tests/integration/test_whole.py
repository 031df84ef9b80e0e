"""The whole task against both real backends: one window over every proven segment (older
and show reach back through rotations, each row once, no page read twice), the goal, segment
boundaries, foreign rows, follow through a rotation, and a cold open of a later segment."""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from urllib.parse import quote

import pytest
from tests.support import harness
from tests.support.cli_runner import hermes_task
from tests.support.fault_proxy import FaultProxy

pytestmark = pytest.mark.integration

CHAINS = ["c1", "c3"]  # c1: `subagent` source; c3: `tool` source; both rotated twice
PAGE_LINE = re.compile(r"debug: start messages (?:GET \S+ )?id=(\S+) limit=(\d+) offset=(\d+) order=(\w+)")


def own_rows(backend: Any, sid: str) -> list[tuple[str, int]]:
    """Every row of segment `sid` itself, read directly (a merging backend's page also carries
    ancestors' rows: only rows naming `sid` are its own)."""
    return [key for key, _uid in own_uids(backend, sid)]


def own_uids(backend: Any, sid: str) -> list[tuple[tuple[str, int], str | None]]:
    """`own_rows` with each row's `message_uid` (None where the backend gives none)."""
    out: list[tuple[tuple[str, int], str | None]] = []
    offset = 0
    while True:
        query = f"limit=500&offset={offset}&order=oldest&include_compacted=true&inline_images=false"
        status, body = backend.get(f"/api/sessions/{quote(sid)}/messages?{query}")
        assert status == 200, body
        assert body["session_id"] == sid
        out += [
            ((m["session_id"], m["id"]), m.get("message_uid"))
            for m in body["messages"]
            if m["session_id"] == sid
        ]
        offset += len(body["messages"])
        if len(body["messages"]) < 500:
            return out


def durable(rows: list[tuple[tuple[str, int], str | None]]) -> list[tuple[str, int]]:
    """The rows, oldest segment first, each durable row once: a row whose `message_uid` an
    earlier row carries is a copy of it (a rotation re-anchored it, or a compaction pruned
    it); without uids every (session_id, id) is its own row."""
    seen: set[str] = set()
    out: list[tuple[str, int]] = []
    for key, uid in rows:
        if uid is None or uid not in seen:
            out.append(key)
        if uid is not None:
            seen.add(uid)
    return out


def pages(stderr: str) -> list[tuple[str, ...]]:
    return [m.groups() for m in PAGE_LINE.finditer(stderr)]


@pytest.mark.parametrize("chain", CHAINS)
def test_older_all_returns_every_row_of_every_segment_exactly_once(backend: Any, chain: str) -> None:
    c = backend.manifest[chain]
    run = hermes_task(backend, "older", c["root"], "--tip", c["tip"], "--all", "--json", "--debug")
    assert run.code == 0, run.stderr
    doc = run.json()
    got = [(r["session_id"], r["id"]) for r in doc["rows"]]
    assert len(got) == len(set(got))
    # each durable row once (iot: by message_uid; elsewhere by (session_id, id))
    truth = set(durable([row for seg in ("root", "mid", "tip") for row in own_uids(backend, c[seg])]))
    shown_hidden = doc["coverage"]["unique_rows"] - len(got)  # server-hidden rows (iot)
    assert set(got) <= truth
    assert len(truth) - len(got) == shown_hidden
    assert doc["rows"][0]["text"] == c["goal"] == doc["task"]["goal"]
    assert doc["coverage"]["at_start"] is True
    assert doc["coverage"]["has_older"] is False
    assert "partial_ancestors" not in [w["code"] for w in doc["warnings"]]
    assert [s["id"] for s in doc["task"]["segments"]] == [c["root"], c["mid"], c["tip"]]
    assert [s["end_reason"] for s in doc["task"]["segments"]] == ["compression", "compression", "agent_close"]
    read = pages(run.stderr)
    assert read, run.stderr
    assert len(read) == len(set(read))  # no segment page read twice


@pytest.mark.parametrize("chain", CHAINS)
def test_every_row_once_against_each_segments_own_rows_including_hidden(backend: Any, chain: str) -> None:
    # The same as above on the rows the backend shows: every shown row of every segment.
    c = backend.manifest[chain]
    doc = hermes_task(backend, "older", c["root"], "--tip", c["tip"], "--all", "--json").json()
    per_segment = {s["id"]: s["rows_shown"] for s in doc["task"]["segments"]}
    for seg in ("root", "mid", "tip"):
        assert per_segment[c[seg]] == sum(1 for r in doc["rows"] if r["session_id"] == c[seg])
        assert per_segment[c[seg]] > 0


def test_show_root_where_the_hint_moves_fills_50_rows_from_tip_and_mid(backend: Any) -> None:
    if not backend.features.hint_follows_delegates:
        pytest.skip("latest-descendant does not move for delegated chains here (show --tip below)")
    c3 = backend.manifest["c3"]
    run = hermes_task(backend, "show", c3["root"], "--json", "--debug")
    assert run.code == 0, run.stderr
    doc = run.json()
    assert doc["task"]["lineage"] == [c3["root"], c3["mid"], c3["tip"]]
    rows = [(r["session_id"], r["id"]) for r in doc["rows"]]
    tip, mid = own_rows(backend, c3["tip"]), own_rows(backend, c3["mid"])
    # 50 rows; where one answer is a whole segment (0.18.x), mid's whole answer is one page
    expected = (mid + tip)[-50:] if backend.features.pagination else mid + tip
    assert rows == expected
    assert doc["coverage"] == {"unique_rows": len(expected), "has_older": True, "at_start": False}
    assert doc["task"]["goal"] == c3["goal"]
    # the root's rows are not in the window: one one-row read of it gives the goal
    assert [p for p in pages(run.stderr) if p[0] == c3["root"]] == [(c3["root"], "1", "0", "oldest")]
    # no row of mid is read before mid is proven (the old proof read one, oldest first, in
    # the middle of the walk): where the rule needs it, after the tip's page was read
    reads = pages(run.stderr)
    if (c3["mid"], "1", "0", "oldest") in reads:
        first_tip_page = next(i for i, p in enumerate(reads) if p[0] == c3["tip"])
        assert reads.index((c3["mid"], "1", "0", "oldest")) > first_tip_page
    if backend.features.rewrites_source:
        # the tool -> subagent hop is proven under the rewrite rule; the tip's page, read
        # from its start with no earlier row in it, confirms the backend does not merge
        assert doc["task"]["notes"] == ["legacy_source_rewrite"]
        assert doc["backend"]["capabilities"]["source_rewrite"] is True
    terminal = hermes_task(backend, "show", c3["root"])
    assert terminal.code == 0, terminal.stderr
    assert terminal.stdout.splitlines()[0] == f"goal: {c3['goal']}"
    boundary = f"── segment {c3['tip']} · previous segment {c3['mid']} ended: compression ──"
    # shown where mid's rows are in the window (a rotation may carry 50 rows into the tip)
    assert (boundary in terminal.stdout) is any(k[0] == c3["mid"] for k in expected)


def test_show_root_with_tip_fills_from_mid_on_every_backend(backend: Any) -> None:
    c3 = backend.manifest["c3"]
    doc = hermes_task(backend, "show", c3["root"], "--tip", c3["tip"], "--json").json()
    rows = [(r["session_id"], r["id"]) for r in doc["rows"]]
    # the newest 50 durable rows: the tip's copies of mid's rows (iot) are mid's rows
    whole = durable(own_uids(backend, c3["mid"]) + own_uids(backend, c3["tip"]))
    assert rows == (whole[-50:] if backend.features.pagination else whole)


def test_a_cold_open_of_a_later_segment_discloses_partial_ancestors(backend: Any) -> None:
    c1 = backend.manifest["c1"]
    run = hermes_task(backend, "show", c1["tip"], "--json", "--debug")
    assert run.code == 0, run.stderr
    doc = run.json()
    codes = [w["code"] for w in doc["warnings"]]
    assert "partial_ancestors" in codes  # also where the tip's page carried earlier rows (iot)
    assert {r["session_id"] for r in doc["rows"]} == {c1["tip"]}
    assert {p[0] for p in pages(run.stderr)} == {c1["tip"]}  # no ancestor messages read
    assert doc["coverage"]["at_start"] is False
    if backend.features.merges_ancestors:
        assert "foreign_rows" in codes  # the page named root and mid, which this open did not prove
    else:
        assert "foreign_rows" not in codes  # the tip's page holds the tip's rows only


class ForeignRow(FaultProxy):
    """Forwards everything; a messages page of `sid` gains one row of an unproven session."""

    def __init__(self, upstream: str, sid: str) -> None:
        super().__init__(upstream)
        self.sid = sid

    def _forward(self, handler: Any) -> tuple[int, list[tuple[str, str]], bytes]:
        status, headers, body = super()._forward(handler)
        if status == 200 and f"/api/sessions/{self.sid}/messages" in handler.path:
            data = json.loads(body)
            data["messages"].append(
                {
                    "id": 999999,
                    "session_id": "20200101_000000_f0f0f0",
                    "role": "assistant",
                    "content": "FOREIGN",
                }
            )
            if "pagination" in data:  # 0.18.x sends none
                data["pagination"]["returned"] = len(data["messages"])
            body = json.dumps(data).encode()
            headers = [(k, str(len(body)) if k.lower() == "content-length" else v) for k, v in headers]
        return status, headers, body


def test_a_foreign_session_row_is_dropped_and_counted(backend: Any) -> None:
    c1 = backend.manifest["c1"]
    with ForeignRow(backend.url, c1["tip"]) as proxy:
        front = SimpleNamespace(url=proxy.url, token=backend.token)
        run = hermes_task(front, "show", c1["root"], "--tip", c1["tip"], "--json")
        assert run.code == 0, run.stderr
        doc = run.json()
        text = hermes_task(front, "show", c1["root"], "--tip", c1["tip"])
    assert "FOREIGN" not in json.dumps(doc["rows"])
    warning = next(w for w in doc["warnings"] if w["code"] == "foreign_rows")
    assert warning["message"].endswith("(1 row)")
    assert "FOREIGN" not in text.stdout
    assert "rows naming a session outside the proven lineage were dropped (1 row)" in text.stderr


@pytest.fixture
def official(seeded_home: Any, tmp_path: Path) -> Iterator[Any]:
    with harness.start(
        "official", seeded_home("official", tmp_path / "home"), secrets.token_urlsafe(32)
    ) as server:
        yield server


def test_follow_through_a_rotation_prints_the_old_segments_last_rows(official: Any) -> None:
    from tests.integration.test_follow import Follow, keys

    running = official.manifest["running"]
    sid, seeded = running["id"], running["rows"]
    follow = Follow(official, sid, "--interval", "3")
    try:
        follow.rows_until(seeded)
        rotated = official.rotate(sid, before=3, after=2, how="by-hand")  # one process: no poll between
        new = rotated["new"]
        follow.rows_until(seeded + 5, timeout=60)
        official.end_session(new, "agent_close")
        code, events, stderr = follow.finish(timeout=90)
    finally:
        follow.close()
    assert code == 0, stderr
    rows = keys(events)
    assert len(rows) == len(set(rows)) == seeded + 5
    old = own_rows(official, sid)
    assert rows[: len(old)] == old  # the three rows written just before the rotation included
    assert rows[len(old) :] == own_rows(official, new)
    assert events[-1] == {
        "type": "result",
        "state": "ended",
        "end_reason": "agent_close",
        "exit_code": 0,
        "last_read_age": None,
        "unreported": None,
    }
