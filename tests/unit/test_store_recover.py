"""recover with a local store: ids proposed by the store are printed only once the dashboard
confirms them; ambiguity, forged rows, a foreign store and an unreadable one never guess."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from msgspec.structs import replace

from hermes_task.core.delegations import recover as recover_tasks
from hermes_task.core.lineage import StoreSession, StoreUnavailable
from hermes_task.core.wire import WireMessage
from hermes_task.reading.hints import StoreHints, find_children
from tests.support.conversations import Conversations
from tests.support.dashboard import Dashboard, serving
from tests.support.wirebody import decoded
from tests.unit.conftest import SCHEMA
from tests.unit.test_recover_cli import run

P = "20261130_170000_aaaaaa"
A = "20261130_170001_bbbbbb"
B = "20261130_170002_cccccc"
C = "20261130_170003_dddddd"
OTHER = "20261130_165000_ffffff"


def call(fake: Conversations, call_id: str, goals: list[str], at: float) -> None:
    args = json.dumps({"tasks": [{"goal": g} for g in goals]})
    tool_call = {"id": call_id, "type": "function", "function": {"name": "delegate_task", "arguments": args}}
    fake.add(P, "assistant", "", tool_calls=[tool_call], timestamp=at)
    payload = {
        "status": "dispatched",
        "mode": "background",
        "count": len(goals),
        "delegation_id": "deleg_0a0b0c0d",
        "goals": goals,
    }
    fake.add(
        P, "tool", json.dumps(payload), tool_call_id=call_id, tool_name="delegate_task", timestamp=at + 0.001
    )


def child(fake: Conversations, sid: str, goal: str, parent: str = P, started: float | None = None) -> None:
    """A delegated child as the dashboard shows it: its detail and its first row, the goal."""
    fake.session(sid, parent=parent)
    if started is not None:
        fake.details[sid]["started_at"] = started
    fake.add(sid, "user", goal)


def store_with(tmp_path: Path, children: list[tuple[str, str, float]], parent: str = P) -> Path:
    path = tmp_path / "state.db"
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA)
    config = json.dumps({"max_iterations": 90, "_delegate_from": parent})
    for sid, goal, started in children:
        conn.execute(
            "INSERT INTO sessions (id, source, parent_session_id, model_config, started_at) VALUES (?,?,?,?,?)",
            (sid, "subagent", parent, config, started),
        )
        conn.execute(
            "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?,?,?,?)",
            (sid, "user", goal, started + 0.01),
        )
    conn.commit()
    conn.close()
    return path


def recover(store: Path, *args: str) -> dict[str, Any]:
    result = run(P, "--json", *args, env={"HERMES_TASK_STORE": str(store)})
    assert result.exit_code == 0, result.output
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


def refs(doc: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [(t["child_session_id"], t["child_ref_source"], t["unavailable_reason"]) for t in doc["tasks"]]


def test_each_child_is_found_and_confirmed(fake: Conversations, tmp_path: Path) -> None:
    fake.session(P)
    call(fake, "call_1", ["Count TODO markers", "Check  the\nbuild"], 100.0)
    child(fake, A, "Count TODO markers")
    child(fake, B, "Check the build")
    store = store_with(tmp_path, [(A, "Count TODO markers", 100.5), (B, "Check the build", 100.6)])
    doc = recover(store)
    assert refs(doc) == [(A, "store", None), (B, "store", None)]
    assert doc["warnings"] == []
    # per proposal: one exact-id detail read (the ownership proof), then its oldest row; the
    # child's state and usage (reading/proof.py) take the same detail (issue 29: the run's
    # details are shared, so no session is read twice in one run)
    for sid in (A, B):
        asked = [(c.kind, c.params.get("limit"), c.params.get("order")) for c in fake.log if c.sid == sid]
        assert asked == [("detail", None, None), ("messages", "1", "oldest")]


def test_the_assignment_is_decided_by_what_http_shows_not_by_the_store(
    fake: Conversations, tmp_path: Path
) -> None:
    """The store proposes A for the first task and B for the second; the dashboard shows
    A's first row is the second goal and B started before its call: A goes to the second
    task, and nothing to the first (issue 25)."""
    fake.session(P)
    call(fake, "call_1", ["Count TODO markers"], 100.0)
    call(fake, "call_2", ["Check the build"], 200.0)
    child(fake, A, "Check the build", started=200.5)
    child(fake, B, "Count TODO markers", started=99.0)
    store = store_with(tmp_path, [(A, "Count TODO markers", 100.5), (B, "Check the build", 200.5)])
    assert refs(recover(store)) == [(None, None, "no_durable_child_reference"), (A, "store", None)]


def test_a_proposal_whose_goal_row_is_not_written_yet_is_not_assigned(
    fake: Conversations, tmp_path: Path
) -> None:
    fake.session(P)
    call(fake, "call_1", ["Count TODO markers"], 100.0)
    fake.session(A, parent=P)  # no row over HTTP yet
    store = store_with(tmp_path, [(A, "Count TODO markers", 100.5)])
    assert refs(recover(store)) == [(None, None, "no_durable_child_reference")]


def test_the_same_goal_twice_is_ambiguous_never_swapped(fake: Conversations, tmp_path: Path) -> None:
    fake.session(P)
    call(fake, "call_1", ["Run the tests"], 100.0)
    call(fake, "call_2", ["Run the tests"], 200.0)
    child(fake, A, "Run the tests")
    child(fake, B, "Run the tests")
    store = store_with(tmp_path, [(A, "Run the tests", 100.5), (B, "Run the tests", 200.5)])
    assert refs(recover(store)) == [(None, None, "ambiguous_match"), (None, None, "ambiguous_match")]


def test_a_child_started_before_its_call_or_of_another_parent_is_never_used(
    fake: Conversations, tmp_path: Path
) -> None:
    fake.session(P)
    call(fake, "call_1", ["Count TODO markers"], 100.0)
    fake.session(A, parent=P)
    store = store_with(tmp_path, [(A, "Count TODO markers", 99.0)])
    assert refs(recover(store)) == [(None, None, "no_durable_child_reference")]


def test_a_forged_row_the_dashboard_does_not_confirm_is_dropped(fake: Conversations, tmp_path: Path) -> None:
    fake.session(P)
    call(fake, "call_1", ["Count TODO markers", "Check the build"], 100.0)
    child(fake, A, "Count TODO markers", parent=OTHER)  # the dashboard says A was spawned elsewhere
    child(fake, B, "Check the build")
    store = store_with(tmp_path, [(A, "Count TODO markers", 100.5), (B, "Check the build", 100.6)])
    result = run(P, "--json", "--debug", env={"HERMES_TASK_STORE": str(store)})
    doc = json.loads(result.stdout)
    assert refs(doc) == [(None, None, "no_durable_child_reference"), (B, "store", None)]
    assert "store: child proposal for task 0 dropped (names_another_parent)" in result.stderr
    assert "Count TODO" not in result.stderr
    assert not any(p.startswith(f"/api/sessions/{A}/") for p in fake.paths_asked())  # no row of A read


def test_a_store_of_another_dashboard_warns_and_changes_nothing(fake: Conversations, tmp_path: Path) -> None:
    fake.session(P)
    call(fake, "call_1", ["Count TODO markers"], 100.0)
    store = store_with(tmp_path, [(A, "Count TODO markers", 100.5)])  # A: 404 over HTTP
    doc = recover(store)
    assert refs(doc) == [(None, None, "no_durable_child_reference")]  # its proposals: none confirmed
    assert [w["code"] for w in doc["warnings"]] == ["store_unavailable"]
    assert "another dashboard's store" in doc["warnings"][0]["message"]


@pytest.mark.parametrize("how", ["junk", "missing", "off", "remote"])
def test_an_unusable_store_says_so_on_the_task_and_once_as_a_warning(
    fake: Conversations, tmp_path: Path, how: str
) -> None:
    fake.session(P)
    call(fake, "call_1", ["Count TODO markers"], 100.0)
    fake.session(A, parent=P)
    store = store_with(tmp_path, [(A, "Count TODO markers", 100.5)])
    args: tuple[str, ...] = ()
    if how == "junk":
        store.write_bytes(b"not a database" * 100)
    elif how == "missing":
        store = tmp_path / "nothing.db"
    elif how == "off":
        args = ("--no-store",)
    env = {"HERMES_TASK_STORE": str(store)}
    if how == "remote":  # a store found by default is used with a loopback URL only
        env = {"HERMES_TASK_STORE": "", "HERMES_HOME": str(tmp_path)}
    result = run(P, "--json", *args, env=env) if how != "remote" else None
    if result is None:
        from typer.testing import CliRunner

        from hermes_task.cli.app import app
        from tests.unit.test_recover_cli import ENV

        with serving(fake.handle, "https://dash.example"):
            result = CliRunner().invoke(
                app, ["recover", P, "--json", "--url", "https://dash.example"], env={**ENV, **env}
            )
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    # The task says why no child is named: the store that could propose one was not read.
    assert refs(doc) == [(None, None, "store_unavailable")]
    reasons = {
        "junk": "not a readable SQLite",
        "missing": "no store file",
        "off": "--no-store",
        "remote": "not loopback",
    }
    assert [w["code"] for w in doc["warnings"]] == ["store_unavailable"]
    assert reasons[how] in doc["warnings"][0]["message"]
    # issue 26: the warning says what to do, and names the store file it tried
    advice = {
        "junk": f"not a readable SQLite database at {store}): pass --store PATH to the dashboard's own state.db",
        "missing": f"(no store file at {store}): run hermes-task on the dashboard's host (as the user that "
        "runs it), or pass --store PATH to the dashboard's state.db",
        "off": "(--no-store): drop --no-store (or the config file's no_store = true)",
        "remote": "(the dashboard URL is not loopback: its store is not looked for here): run hermes-task "
        "on the dashboard's host, where its store is found by itself, or pass --store PATH",
    }
    assert advice[how] in doc["warnings"][0]["message"]


def test_a_store_that_does_not_know_the_parent_is_another_dashboards(
    fake: Conversations, tmp_path: Path
) -> None:
    fake.session(P)
    call(fake, "call_1", ["Count TODO markers"], 100.0)
    store = store_with(tmp_path, [(A, "Count TODO markers", 100.5)], parent=OTHER)  # nothing of P
    doc = recover(store)
    assert refs(doc) == [(None, None, "store_unavailable")]  # it knows nothing of this dashboard
    assert [w["code"] for w in doc["warnings"]] == ["store_unavailable"]
    assert "another dashboard's store" in doc["warnings"][0]["message"]


class PartlyReadable:
    """A store whose children are listed but whose first row of `broken` cannot be read (a
    store that became locked or damaged between two queries)."""

    def __init__(self, children: list[StoreSession], broken: str) -> None:
        self.rows, self.broken = children, broken

    def children(self, sid: str) -> list[StoreSession]:
        return [r for r in self.rows if r.parent_session_id == sid]

    def knows(self, sid: str) -> bool:
        return True

    def first_user_text(self, sid: str) -> str | None:
        if sid == self.broken:
            raise StoreUnavailable("locked", "the store is locked")
        return "Count TODO markers"

    def delegation(self, delegation_id: str) -> None:
        return None

    def close(self) -> None:
        pass


def test_a_store_that_fails_part_way_proposes_nothing_and_asks_the_dashboard_nothing() -> None:
    """A fits the task by the store's columns, but the store failed on B's first row: no
    proposal is proven (nor any request made), the tasks are as the transcript has them."""
    args = json.dumps({"tasks": [{"goal": "Count TODO markers"}]})
    tool_call = {"id": "call_1", "type": "function", "function": {"name": "delegate_task", "arguments": args}}
    payload = {"status": "dispatched", "delegation_id": "deleg_0a0b0c0d", "goals": ["Count TODO markers"]}
    messages = [
        decoded({"id": 1, "session_id": P, "role": "assistant", "content": "", "tool_calls": [tool_call],
                 "timestamp": 100.0}, WireMessage),
        decoded({"id": 2, "session_id": P, "role": "tool", "content": json.dumps(payload), "tool_call_id": "call_1",
                 "timestamp": 100.001}, WireMessage),
    ]  # fmt: skip
    config = json.dumps({"_delegate_from": P})
    rows = [StoreSession(sid, P, config, 100.5, None, None, "subagent", None) for sid in (A, B)]
    dash = Dashboard()
    hints = StoreHints(PartlyReadable(rows, broken=B))
    tasks = recover_tasks(messages)
    found = find_children(dash.client(), hints, messages, tasks)
    assert found == [replace(t, unavailable_reason="store_unavailable") for t in tasks]
    assert dash.log == []
    assert hints.locks >= 1  # the store's lock: asked again on the next lookup


def test_the_store_proposes_the_newest_children_and_names_the_tasks_its_bound_left_out(
    fake: Conversations, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 35: a run with more children than the store's bound. The newest task is the one a
    user asks about: it is named; the oldest is left without a child, and the warning says so
    (never a silent `no_durable_child_reference`)."""
    monkeypatch.setattr("hermes_task.core.lineage.MAX_CHILDREN", 10)
    fake.session(P)
    goals = [f"Task number {n}" for n in range(12)]
    call(fake, "call_1", goals, 100.0)
    kids = [f"20261130_1710{n:02d}_eeeeee" for n in range(12)]
    for n, (kid, goal) in enumerate(zip(kids, goals, strict=True)):
        child(fake, kid, goal, started=101.0 + n)
    store = store_with(
        tmp_path, [(kid, goal, 101.0 + n) for n, (kid, goal) in enumerate(zip(kids, goals, strict=True))]
    )
    doc = recover(store)
    assert refs(doc)[2:] == [(kid, "store", None) for kid in kids[2:]]
    assert refs(doc)[:2] == [(None, None, "no_durable_child_reference")] * 2
    assert doc["warnings"] == [
        {"code": "bound_reached",
         "message": "a proof or paging bound stopped the work early (the store proposes the newest 10 "
                    "children of a session; older ones were not proposed, so task(s) 1.1, 1.2 may have a "
                    "child that is not named)"}
    ]  # fmt: skip


SUMMARY = "[CONTEXT COMPACTION — REFERENCE ONLY] Earlier turns were compacted into the summary below."


def test_a_child_whose_goal_row_the_dashboard_hides_is_proven_by_its_parent_link(
    fake: Conversations, tmp_path: Path
) -> None:
    """Issue 35: 0.19 hides archived rows, so a child compacted in place shows a compaction
    summary as its oldest row. The proof is its exact-id detail (parent link, delegation
    marker); the store's goal row is the match. A summary first with another store goal, or
    a child of another parent, is still never named."""
    fake.session(P)
    call(fake, "call_1", ["Check that the build passes", "Count TODO markers"], 100.0)
    fake.session(OTHER)
    child(fake, A, SUMMARY, started=100.5)
    child(fake, B, SUMMARY, started=100.6)
    child(fake, C, SUMMARY, parent=OTHER, started=100.7)
    store = store_with(
        tmp_path,
        [(A, "Check that the build passes", 100.5), (B, "Something else entirely", 100.6)],
    )
    with sqlite3.connect(store) as conn:  # C: the store says P, the dashboard says OTHER
        conn.execute(
            "INSERT INTO sessions (id, source, parent_session_id, model_config, started_at) VALUES (?,?,?,?,?)",
            (C, "tool", P, json.dumps({"_delegate_from": P}), 100.7),
        )
        conn.execute(
            "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?,?,?,?)",
            (C, "user", "Count TODO markers", 100.71),
        )
    conn.close()
    assert refs(recover(store)) == [(A, "store", None), (None, None, "no_durable_child_reference")]
