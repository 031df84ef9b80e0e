"""Usage per task through the commands (issue 28 item 1): `recover` sums each task's proven
segments from the details its lineage proof read (no extra read per segment), `--recursive`
adds the nested tasks, `recover --watch` events carry it, and `show`'s task and header have it.
The in-memory dashboard serves the figures the real backends send in the session detail."""

from __future__ import annotations

import json
from typing import Any

import pytest

from hermes_task.cli.options import Environment
from tests.support.cli_runner import ENVIRONMENT, invoke
from tests.support.clock import Clock
from tests.support.conversations import Conversations
from tests.unit.test_recover_cli import run
from tests.unit.test_schemas import validator

P = "20261130_170000_aaaaaa"
A = "20261130_170001_bbbbbb"  # rotated twice: A -> A2 -> A3
A2 = "20261130_170011_bbbbb2"
A3 = "20261130_170021_bbbbb3"
B = "20261130_170002_cccccc"
G = "20261130_170003_dddddd"  # A's own delegated child (--recursive)
SEGMENTS = {
    A: {"input_tokens": 1000, "output_tokens": 100, "cache_read_tokens": 400, "cache_write_tokens": 50,
        "reasoning_tokens": 10, "api_call_count": 4, "estimated_cost_usd": 0.01, "cost_status": "estimated"},
    A2: {"input_tokens": 2000, "output_tokens": 200, "cache_read_tokens": 800, "cache_write_tokens": 0,
         "reasoning_tokens": 20, "api_call_count": 5, "estimated_cost_usd": 0.02, "cost_status": "estimated"},
    A3: {"input_tokens": 300, "output_tokens": 30, "cache_read_tokens": 0, "cache_write_tokens": 5,
         "reasoning_tokens": 0, "api_call_count": 1, "estimated_cost_usd": 0.003, "cost_status": "estimated"},
}  # fmt: skip
A_SUM = {"input_tokens": 3300, "output_tokens": 330, "cache_read_tokens": 1200, "cache_write_tokens": 55,
         "reasoning_tokens": 30, "api_calls": 10, "cost_usd": 0.033, "cost_kind": "estimated", "complete": True,
         "segments": 3, "missing": []}  # fmt: skip


class Rotating(Conversations):
    """Conversations whose `latest-descendant` hint answers (the current contract's)."""

    def __init__(self) -> None:
        super().__init__(serves=frozenset({"detail", "messages", "latest-descendant"}))

    def child(self, sid: str, parent: str, **figures: Any) -> None:
        self.session(sid, parent=parent)
        self.details[sid].update(ended_at=1796056500.0, end_reason="agent_close", **figures)

    def rotated(self, parent: str) -> None:
        """A rotated twice by compression, each segment with its own figures; the hint names A3."""
        config = json.dumps({"max_iterations": 90, "_delegate_from": parent})
        for n, (sid, previous) in enumerate(((A, None), (A2, A), (A3, A2))):
            self.put(sid, source="subagent", parent_session_id=previous or parent, model_config=config,
                     started_at=1796056440.0 + 10 * n, ended_at=1796056449.0 + 10 * n, end_reason="compression",
                     profile="default", is_default_profile=True, **SEGMENTS[sid])  # fmt: skip
            self.add(
                sid, "user" if previous is None else "assistant", "Audit module A" if n == 0 else f"part {n}"
            )
        self.details[A3]["end_reason"] = "agent_close"
        self.descendants[A] = self.descendants[A2] = A3


def delegate(fake: Rotating, sid: str, refs: list[tuple[str, str | None]], tokens: Any = None) -> None:
    """`sid` delegates one task per (goal, child id) and gets their results (the child ids in them)."""
    results = [
        {"task_index": i, "status": "completed", "summary": "done", "api_calls": 3,
         **({"child_session_id": ref} if ref else {}), **({"tokens": tokens} if tokens else {})}
        for i, (_goal, ref) in enumerate(refs)
    ]  # fmt: skip
    fake.spawn(sid, f"call_{sid[-2:]}", [goal for goal, _ in refs], {"results": results})


@pytest.fixture
def conversations() -> Rotating:
    # Differs from conftest's: a Rotating (latest-descendant asked, and it answers).
    return Rotating()


def doc(result: Any) -> dict[str, Any]:
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def parent_with_a_rotated_task(fake: Rotating, **b_figures: Any) -> None:
    fake.session(P)
    fake.add(P, "user", "Audit the repository.")
    delegate(fake, P, [("Audit module A", A), ("Audit module B", B)])
    fake.rotated(P)
    fake.child(B, P, **b_figures)
    fake.add(B, "user", "Audit module B")


def test_recover_sums_a_three_segment_task_from_the_details_its_proof_read(fake: Rotating) -> None:
    parent_with_a_rotated_task(fake, **SEGMENTS[A3])
    data = doc(run(P, "--json"))
    a, b = data["tasks"]
    assert a["usage"] == A_SUM
    assert b["usage"] == {**A_SUM, **{k: v for k, v in SEGMENTS[A3].items() if k in A_SUM},
                          "api_calls": 1, "cost_usd": 0.003, "segments": 1}  # fmt: skip
    assert (a["usage_with_children"], a["tokens"]) == (None, None)  # without --recursive; nothing told
    assert data["summary"]["usage"] == {**A_SUM, "input_tokens": 3600, "output_tokens": 360, "cache_read_tokens": 1200,
                                        "cache_write_tokens": 60, "reasoning_tokens": 30, "api_calls": 11,
                                        "cost_usd": 0.036, "segments": 4}  # fmt: skip
    validator("tasks").validate(data)
    # One detail read per segment (the proof's), the hint asked about each segment that ended
    # by compression (as `show`'s proof asks it); no child's rows.
    asked = fake.paths_asked()
    assert [asked.count(f"/api/sessions/{sid}") for sid in (A, A2, A3, B)] == [1, 1, 1, 1]
    assert [p for p in asked if "latest-descendant" in p] == [
        f"/api/sessions/{A}/latest-descendant",
        f"/api/sessions/{A2}/latest-descendant",
    ]
    assert not any(
        p.startswith((f"/api/sessions/{A}/messages", f"/api/sessions/{B}/messages")) for p in asked
    )


def test_a_segment_without_figures_makes_its_task_and_the_sum_not_complete(fake: Rotating) -> None:
    parent_with_a_rotated_task(
        fake, input_tokens=7, output_tokens=None, api_call_count=1, estimated_cost_usd=0.5
    )
    data = doc(run(P, "--json"))
    b = data["tasks"][1]["usage"]
    assert (b["input_tokens"], b["output_tokens"], b["complete"], b["missing"]) == (
        7,
        None,
        False,
        ["figures"],
    )
    total = data["summary"]["usage"]
    assert (total["output_tokens"], total["complete"], total["missing"]) == (330, False, ["figures"])


def test_actual_costs_are_summed_as_actual_and_a_mix_is_estimated(fake: Rotating) -> None:
    parent_with_a_rotated_task(fake, **SEGMENTS[A3])
    for sid in (A, A2, A3):
        fake.details[sid].update(actual_cost_usd=0.1, cost_status="actual")
    fake.details[B].update(actual_cost_usd=None)
    a, b = (t["usage"] for t in doc(run(P, "--json"))["tasks"])
    assert (a["cost_usd"], a["cost_kind"], a["complete"]) == (0.3, "actual", True)
    assert (b["cost_usd"], b["cost_kind"]) == (0.003, "estimated")
    total = doc(run(P, "--json"))["summary"]["usage"]
    assert (total["cost_usd"], total["cost_kind"], total["complete"]) == (0.303, "estimated", True)


def test_a_task_whose_newer_segment_is_not_proven_lacks_later_segments(fake: Rotating) -> None:
    parent_with_a_rotated_task(fake, **SEGMENTS[A3])
    del fake.descendants[A], fake.descendants[A2]  # nothing names A's continuation
    a = doc(run(P, "--json"))["tasks"][0]["usage"]
    assert (a["segments"], a["input_tokens"], a["complete"], a["missing"]) == (
        1,
        1000,
        False,
        ["later_segments"],
    )


def test_a_task_without_a_proven_child_has_no_usage(fake: Rotating) -> None:
    fake.session(P)
    delegate(fake, P, [("Audit module A", A), ("Audit module B", None)])
    fake.session(A, parent="20261130_165959_ffffff")  # names another parent: not this task's child
    data = doc(run(P, "--json"))
    assert [t["usage"] for t in data["tasks"]] == [None, None]
    assert data["summary"]["usage"] is None
    assert not any(p.startswith(f"/api/sessions/{A}/") for p in fake.paths_asked())


def test_recursive_usage_with_children_adds_the_nested_tasks(fake: Rotating) -> None:
    parent_with_a_rotated_task(fake, **SEGMENTS[A3])
    delegate(fake, A3, [("Read a.py", G)])  # the tip of A delegates
    fake.child(G, A3, input_tokens=10, output_tokens=1, cache_read_tokens=0, cache_write_tokens=0,
               reasoning_tokens=0, api_call_count=1, actual_cost_usd=0.5)  # fmt: skip
    fake.add(G, "user", "Read a.py")
    data = doc(run(P, "--recursive", "--json"))
    a = data["tasks"][0]
    (g,) = a["children"]
    assert a["usage"] == A_SUM  # its own: the child's three segments
    assert g["usage"]["input_tokens"] == 10
    assert g["usage_with_children"] == g["usage"]
    assert a["usage_with_children"] == {**A_SUM, "input_tokens": 3310, "output_tokens": 331, "api_calls": 11,
                                        "cost_usd": 0.533, "segments": 4}  # fmt: skip
    assert data["summary"]["usage"]["segments"] == 5  # A's three, B, G
    validator("tasks").validate(data)
    # The child's own read proved its lineage: its usage costs no second proof.
    asked = fake.paths_asked()
    assert asked.count(f"/api/sessions/{A}/latest-descendant") == 1


def test_recursive_a_nested_level_not_read_is_missing_from_usage_with_children(fake: Rotating) -> None:
    parent_with_a_rotated_task(fake, **SEGMENTS[A3])
    delegate(fake, A3, [("Read a.py", G)])
    fake.missing.add(G)  # G cannot be read: no usage, and A's sum lacks it
    a = doc(run(P, "--recursive", "--json"))["tasks"][0]
    assert (a["children"][0]["gap"], a["children"][0]["usage"]) == ("not_found", None)
    assert a["usage"] == A_SUM
    # issue 35: the sum says both: a task without usage, and nested tasks not read
    assert a["usage_with_children"] == {**A_SUM, "complete": False, "missing": ["tasks", "nested"]}


def test_the_parents_tokens_stay_as_told_and_the_table_shows_both(fake: Rotating) -> None:
    fake.session(P)
    delegate(fake, P, [("Audit module A", A)], tokens={"input": 5000, "output": 400})
    fake.rotated(P)
    task = doc(run(P, "--json"))["tasks"][0]
    assert (task["tokens"], task["usage"]["input_tokens"]) == ({"input": 5000, "output": 400}, 3300)
    ENVIRONMENT.append(Environment(isatty=lambda stream: True))
    try:
        table = run(P, env={"COLUMNS": "200"}).stdout.splitlines()
    finally:
        ENVIRONMENT.clear()
    row = next(n for n, line in enumerate(table) if line.startswith("1.1 "))
    usage_at = table[0].index("usage")
    assert table[row][usage_at:].startswith("3.3k/330 ~$0.033 ")
    assert table[row + 1].strip() == "told 5k/400"
    assert table[row + 1].index("told") == usage_at
    assert "1 task · 1 terminal · finished (1 completed) · usage 3.3k/330 ~$0.033" in table


def test_piped_lines_end_with_the_usage_fields(fake: Rotating) -> None:
    parent_with_a_rotated_task(
        fake, input_tokens=7, output_tokens=None, api_call_count=1, estimated_cost_usd=0.5
    )
    lines = [line.split("\t") for line in run(P, "--header").stdout.splitlines()]
    assert lines[0][8:] == ["input_tokens", "output_tokens", "cost_usd", "cost_kind", "usage_complete"]
    assert lines[1][4] == A  # field 5 stays the child session id
    assert lines[1][8:] == ["3300", "330", "0.033", "estimated", "true"]
    assert lines[2][8:] == ["7", "", "0.5", "estimated", "false"]


def test_show_carries_the_tasks_usage_and_its_header_says_it(fake: Rotating) -> None:
    fake.session(P)
    fake.rotated(P)
    shown = json.loads(invoke("show", A, "--json", env={"COLUMNS": "100"}).stdout)
    assert shown["task"]["lineage"] == [A, A2, A3]
    assert shown["task"]["usage"] == A_SUM
    validator("transcript").validate(shown)
    piped = invoke("show", A, env={"COLUMNS": "100"}).stdout.splitlines()
    assert piped[:2] == [
        "goal: Audit module A",
        "usage: 3,300 in · 330 out · 1,200 cache read · 55 cache write · 30 reasoning · 10 API calls · "
        "~$0.033 estimated · 3 segments",
    ]
    older = json.loads(invoke("older", A, "--json").stdout)
    assert older["task"]["usage"] == A_SUM


def test_show_of_a_later_segment_says_earlier_segments_are_not_included(fake: Rotating) -> None:
    fake.session(P)
    fake.rotated(P)
    shown = json.loads(invoke("show", A2, "--json").stdout)
    usage = shown["task"]["usage"]
    assert (usage["segments"], usage["input_tokens"], usage["missing"]) == (2, 2300, ["earlier_segments"])
    piped = invoke("show", A2).stdout.splitlines()
    assert piped[0].endswith("· 2 segments · not complete: earlier segments are not included")


# -- recover --watch ----------------------------------------------------------------------------


def test_watch_events_carry_usage_and_the_watch_ends_once_every_ended_tasks_child_is_checked(
    fake: Rotating, clock: Clock
) -> None:
    """Nine tasks ended before the watch began: a cycle checks at most eight children, so the
    watch reads once more before it ends, and every task's last event has its usage."""
    _nine_ended_tasks(fake)
    result = run(P, "--watch", "--json", "--exit-status")
    assert result.exit_code == 0, result.output
    events = [json.loads(line) for line in result.stdout.splitlines()]
    last: dict[str, Any] = {e["number"]: e for e in events if e["type"] == "task"}
    assert [last[f"1.{n + 1}"]["usage"]["input_tokens"] for n in range(9)] == list(range(9))
    assert all(e["usage"]["complete"] for e in last.values())
    assert clock.sleeps == [2.0]  # the second cycle checked the ninth child, then the watch ended
    for event in events:
        validator("events").validate(event)


def test_a_watch_says_once_when_the_bound_left_tasks_without_usage(
    fake: Rotating, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("hermes_task.reading.tasktree.MAX_USAGE_CHILDREN", 8)
    _nine_ended_tasks(fake)
    result = run(P, "--watch", "--json", "--exit-status")
    assert result.exit_code == 0, result.output
    events = [json.loads(line) for line in result.stdout.splitlines()]
    warned = [e for e in events if e["type"] == "warning"]
    assert [(w["code"], w["message"].endswith("in one run; no usage for task(s) 1.9)")) for w in warned] == [
        ("bound_reached", True)
    ]
    assert clock.sleeps == []  # the bound's task is not waited for


def _nine_ended_tasks(fake: Rotating, count: int = 9) -> list[str]:
    fake.session(P)
    kids = [f"20261130_1701{n:02d}_eeeeee" for n in range(count)]
    delegate(fake, P, [(f"Task {n}", kid) for n, kid in enumerate(kids)])
    for n, kid in enumerate(kids):
        fake.child(kid, P, input_tokens=n, output_tokens=1, cache_read_tokens=0, cache_write_tokens=0,
                   reasoning_tokens=0, api_call_count=1, estimated_cost_usd=0.25)  # fmt: skip
    return kids


def test_the_children_proven_for_usage_are_bounded_and_the_bound_is_said(
    fake: Rotating, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("hermes_task.reading.tasktree.MAX_USAGE_CHILDREN", 7)
    kids = _nine_ended_tasks(fake)
    data = doc(run(P, "--json"))
    assert [t["usage"] is not None for t in data["tasks"]] == [True] * 7 + [False, False]
    assert data["summary"]["usage"]["missing"] == ["tasks"]
    assert data["warnings"] == [
        {"code": "bound_reached",
         "message": "a proof or paging bound stopped the work early (usage: the children of at most 7 ended "
                    "tasks are proven in one run; no usage for task(s) 1.8, 1.9)"}
    ]  # fmt: skip
    assert not any(p.startswith(f"/api/sessions/{kids[8]}") for p in fake.paths_asked())


def test_the_usage_bound_names_its_tasks_in_number_order(
    fake: Rotating, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Task numbers sort as numbers (1.9 before 1.10), never as text (issue 35)."""
    monkeypatch.setattr("hermes_task.reading.tasktree.MAX_USAGE_CHILDREN", 8)
    _nine_ended_tasks(fake, count=12)
    (warning,) = doc(run(P, "--json"))["warnings"]
    assert warning["message"].endswith("no usage for task(s) 1.9, 1.10, 1.11, 1.12)")
