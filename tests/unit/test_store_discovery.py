"""reading/proof.py with store candidates: proven like --tip, failures ignored with a
--debug reason, forks refused, nothing looked up while the newest segment did not compress."""

from __future__ import annotations

import json
from typing import Any

from hermes_task.core.lineage import StoreSession
from hermes_task.failures import Code
from hermes_task.reading.api import DetailReader
from hermes_task.reading.hints import StoreHints
from hermes_task.reading.reader import TaskReader
from tests.support.dashboard import Dashboard

P = "20261201_100000_aaaaaa"
R = "20261201_100010_bbbbbb"
M1 = "20261201_100020_cccccc"
M2 = "20261201_100021_dddddd"
T = "20261201_100030_eeeeee"
X = "20261201_100005_ffffff"
GHOST = "20261201_100022_999999"
CONFIG = json.dumps({"max_iterations": 90, "_delegate_from": P})


def session(sid: str, parent: str, started: float, ended: float | None, reason: str | None) -> dict[str, Any]:
    return {"id": sid, "source": "subagent", "parent_session_id": parent, "model_config": CONFIG,
            "started_at": started, "ended_at": ended, "end_reason": reason}  # fmt: skip


class FakeStore:
    def __init__(self, rows: dict[str, list[dict[str, Any]]]) -> None:
        self.rows = rows
        self.asked: list[str] = []

    def children(self, sid: str) -> list[StoreSession]:
        self.asked.append(sid)
        return [
            StoreSession(r["id"], r["parent_session_id"], r["model_config"], r["started_at"], r["ended_at"],
                         r["end_reason"], r["source"], None)
            for r in self.rows.get(sid, [])
        ]  # fmt: skip

    def knows(self, sid: str) -> bool:
        return True

    def first_user_text(self, sid: str) -> str | None:
        return None

    def delegation(self, delegation_id: str) -> None:
        return None

    def close(self) -> None:
        pass


def discover(sessions: dict[str, dict[str, Any]], store_rows: dict[str, list[dict[str, Any]]]) -> Any:
    dash = Dashboard(serves=frozenset({"detail"}))  # hints are off in these tests
    for sid, detail in sessions.items():
        dash.put(sid, **{k: v for k, v in detail.items() if k != "id"})
    client = dash.client()
    lines: list[str] = []
    store = FakeStore(store_rows)
    hints = StoreHints(store, debug=lines.append)
    reader = TaskReader(client, R, hint=False, store=hints)
    failure = reader.proof.discover(DetailReader(client))
    return reader, failure, lines, store


ROOT = session(R, P, 10, 20, "compression")
MID = session(M1, R, 20, 30, "compression")
TIP = session(T, M1, 30, 40, "agent_close")
BEFORE = session(X, R, 5, None, None)  # started before its parent


def test_the_store_walks_forward_and_each_step_is_proven() -> None:
    sessions = {R: ROOT, M1: MID, T: TIP, X: BEFORE}
    ghost = session(GHOST, R, 22, None, None)  # unknown to the dashboard
    reader, failure, lines, _ = discover(sessions, {R: [BEFORE, MID, ghost], M1: [TIP]})
    assert failure is None
    assert reader.path == (R, M1, T)
    assert (reader.candidate.id, reader.candidate.status, reader.candidate.source) == (T, "proven", "store")
    assert "store: continuation candidate ignored (bad_timestamps)" in lines
    assert "store: continuation candidate ignored (not_found)" in lines
    assert not any(sid in line for line in lines for sid in (R, M1, T, X, GHOST))


def test_two_proven_continuations_are_a_fork() -> None:
    other = session(M2, R, 21, 31, "agent_close")
    reader, failure, _, _ = discover({R: ROOT, M1: MID, M2: other}, {R: [MID, other]})
    assert failure is not None
    assert failure.code is Code.FORK_AMBIGUOUS
    assert reader.candidate.status == "rejected"
    assert reader.path == (R,)


def test_rows_that_are_not_continuations_are_never_proposed() -> None:
    grandchild = {**session(M2, R, 21, None, None), "model_config": json.dumps({"_delegate_from": R})}
    branched = {
        **session(X, R, 21, None, None),
        "model_config": json.dumps({"_delegate_from": P, "_branched_from": R}),
    }
    client_sessions = {R: ROOT, M2: grandchild, X: branched}
    reader, failure, _, _ = discover(client_sessions, {R: [grandchild, branched]})
    assert (failure, reader.path) == (None, (R,))


def test_no_lookup_while_the_newest_segment_did_not_compress() -> None:
    running = session(R, P, 10, None, None)
    reader, failure, _, store = discover({R: running}, {R: [MID]})
    assert (failure, reader.path, store.asked) == (None, (R,), [])
