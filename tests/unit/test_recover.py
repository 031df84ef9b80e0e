"""Task recovery from parent transcripts (pure): the recovery matrix, completion rows,
stickiness, summaries, the captured real parents of both backends, and the nested tree walk."""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from typing import Any

import pytest
from msgspec import to_builtins
from msgspec.structs import replace

from hermes_task.core.delegations import NO_REFERENCE, call_sessions, parse_completion, recover, status_of
from hermes_task.core.documents import TaskEntry, WarningItem
from hermes_task.core.ui_strings import TaskStatus, WarningCode
from hermes_task.core.verdict import flatten, summarize
from hermes_task.core.wire import MessagesPage, SessionDetail, WireMessage
from hermes_task.failures import Code, HermesError
from hermes_task.reading.tasktree import Conversation, build
from tests.support.replay import load
from tests.support.wirebody import decoded

P = "20261130_163359_a4d16b"
CHILD_A = "20261130_163400_1f2d7b"
CHILD_B = "20261130_163401_2b3c4d"
GRANDCHILD = "20261130_163402_3c4d5e"
_ids = itertools.count(1)


def row(role: str, content: Any = None, *, sid: str = P, **extra: Any) -> WireMessage:
    return decoded(
        {"id": next(_ids), "session_id": sid, "role": role, "content": content, **extra}, WireMessage
    )


def call(
    call_id: str, args: dict[str, Any] | str, *, sid: str = P, name: str = "delegate_task"
) -> WireMessage:
    arguments = args if isinstance(args, str) else json.dumps(args)
    return row(
        "assistant",
        "",
        sid=sid,
        tool_calls=[{"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}],
    )


def result(call_id: str, payload: Any, *, sid: str = P) -> WireMessage:
    content = payload if isinstance(payload, str) else json.dumps(payload)
    return row("tool", content, sid=sid, tool_call_id=call_id, tool_name="delegate_task")


def dispatched(deleg: str, goals: Sequence[str | None], **extra: Any) -> dict[str, Any]:
    return {"status": "dispatched", "mode": "background", "count": len(goals), "delegation_id": deleg,
            "goals": goals, "note": "running in the background", **extra}  # fmt: skip


def batch_row(deleg: str, blocks: list[tuple[int, int, str, str]], **extra: Any) -> WireMessage:
    text = [f"[ASYNC DELEGATION BATCH COMPLETE — {deleg}]", "A background fan-out has finished.", ""]
    for i, n, goal, status in blocks:
        icon = "✓" if status == "completed" else "✗"
        text += ["", f"--- {icon} TASK {i}/{n}: {goal}  (status={status}, api_calls=3, 8.4s) ---", "Done."]
    return row("user", "\n".join(text), **extra)


def brief(tasks: list[TaskEntry]) -> list[tuple[Any, ...]]:
    return [(t.call_id, t.goal, t.task_index, t.status, t.terminal) for t in tasks]


# -- what counts -------------------------------------------------------------------------------


def test_spawn_call_without_result_is_one_unknown_task_per_goal() -> None:
    tasks = recover([call("c1", {"tasks": [{"goal": "Count TODOs"}, {"goal": "Check the build"}]})])
    assert brief(tasks) == [
        ("c1", "Count TODOs", 0, "unknown", False),
        ("c1", "Check the build", 1, "unknown", False),
    ]
    assert all(t.child_session_id is None and t.unavailable_reason == NO_REFERENCE for t in tasks)
    assert all(t.delegation_id is None and t.subagent_id is None and t.children == [] for t in tasks)


@pytest.mark.parametrize("action", [None, "", "spawn", " Spawn "])
def test_omitted_empty_or_explicit_spawn_action_is_a_spawn(action: str | None) -> None:
    args: dict[str, Any] = {"tasks": [{"goal": "Count TODOs"}]}
    if action is not None:
        args["action"] = action
    assert [t.goal for t in recover([call("c1", args)])] == ["Count TODOs"]


@pytest.mark.parametrize(
    ("args", "ack"),
    [
        ({"action": "steer", "subagent_id": "sa-0-babcc0c4", "message": "Skip tests/."},
         {"action": "steer", "subagent_id": "sa-0-babcc0c4", "status": "queued", "note": "queued"}),
        ({"action": "stop", "subagent_id": "sa-0-babcc0c4"},
         {"action": "stop", "subagent_id": "sa-0-babcc0c4", "status": "interrupt_requested"}),
        ({"action": "list"},
         {"action": "list", "count": 1, "subagents": [{"subagent_id": "sa-0-babcc0c4", "goal": "Count TODOs",
                                                       "status": "running"}]}),
        ({"action": "pause", "tasks": [{"goal": "Count TODOs"}]}, {"error": "Unknown action 'pause'."}),
        ({"action": 3, "goal": "Count TODOs"}, {"status": "completed"}),
    ],
)  # fmt: skip
def test_control_and_other_actions_are_excluded_with_their_results(
    args: dict[str, Any], ack: dict[str, Any]
) -> None:
    assert recover([call("ctl", args), result("ctl", ack)]) == []


def test_a_stop_request_is_not_evidence_that_a_child_stopped() -> None:
    rows = [
        call("c1", {"goal": "Watch the tests"}),
        result("c1", dispatched("deleg_02e95f43", ["Watch the tests"], subagent_ids=["sa-0-c6056594"])),
        call("c2", {"action": "stop", "subagent_id": "sa-0-c6056594"}),
        result("c2", {"action": "stop", "subagent_id": "sa-0-c6056594", "status": "interrupt_requested"}),
    ]
    assert brief(recover(rows)) == [("c1", "Watch the tests", 0, "running", False)]


@pytest.mark.parametrize(
    "ack",
    [
        {"action": "steer", "subagent_id": "sa-0-babcc0c4", "status": "queued"},
        {"action": "stop", "subagent_id": "sa-0-babcc0c4", "status": "interrupt_requested"},
        {"status": "queued"},
        {"status": "interrupt_requested", "results": [{"task_index": 0, "status": "completed"}]},
        {"count": 0, "subagents": [], "note": "No live subagents right now"},
        {
            "count": 1,
            "subagents": [{"subagent_id": "sa-0-babcc0c4", "status": "completed"}],
            "results": [{"task_index": 0, "status": "completed", "child_session_id": CHILD_A}],
        },
    ],
)
def test_acknowledgements_are_ignored_even_under_a_spawn_call_id(ack: dict[str, Any]) -> None:
    rows = [call("c1", {"tasks": [{"goal": "Count TODOs"}]}), result("c1", ack), result("orphan", ack)]
    assert brief(recover(rows)) == [("c1", "Count TODOs", 0, "unknown", False)]


def test_orphan_results_and_other_tools_are_ignored() -> None:
    rows = [
        result(
            "nobody", {"results": [{"task_index": 0, "status": "completed", "child_session_id": CHILD_A}]}
        ),
        result("nobody2", dispatched("deleg_1f2d7b00", ["Count TODOs"])),
        call("t1", {"command": "ls", "goal": "not a delegation"}, name="terminal"),
        result("t1", {"output": "a b", "exit_code": 0}),
    ]
    assert recover(rows) == []


def test_a_spawn_answered_by_an_error_spawned_nothing() -> None:
    rows = [
        call("c1", {"tasks": [{"goal": "TODO"}, {"goal": "x"}]}),
        result("c1", {"error": "Task 0 has a placeholder goal"}),
    ]
    assert recover(rows) == []


def test_a_spawn_without_goals_or_result_is_no_task() -> None:
    assert recover([call("c1", {}), call("c2", "{not json")]) == []


def test_unreadable_arguments_are_an_omitted_action_and_the_result_names_the_tasks() -> None:
    rows = [call("c1", "{not json"), result("c1", dispatched("deleg_1f2d7b00", ["Count TODOs"]))]
    assert brief(recover(rows)) == [("c1", "Count TODOs", 0, "running", False)]


# -- shapes of spawn calls and results ----------------------------------------------------------


def test_legacy_top_level_goal_is_one_task() -> None:
    tasks = recover([call("c1", {"goal": "Watch the tests", "context": "pytest -q"})])
    assert brief(tasks) == [("c1", "Watch the tests", 0, "unknown", False)]


def test_tasks_list_wins_over_goal_and_an_empty_list_falls_back_to_goal() -> None:
    both = recover([call("c1", {"goal": "ignored", "tasks": [{"goal": "A task"}, {"goal": "B task"}]})])
    assert [t.goal for t in both] == ["A task", "B task"]
    empty = recover([call("c2", {"goal": "Only goal", "tasks": []})])
    assert [t.goal for t in empty] == ["Only goal"]


def test_tasks_given_as_a_json_string_are_one_task_each() -> None:
    args = {"tasks": json.dumps([{"goal": "A task"}, {"goal": "B task"}])}
    assert [t.goal for t in recover([call("c1", args)])] == ["A task", "B task"]


def test_iot_tasks_list_with_extra_keys() -> None:
    args = {"tasks": [{"goal": "Describe the screenshot", "images": ["a.png"], "output_schema": {"type": "object"},
                       "group": "ui"}, "not an object"]}  # fmt: skip
    assert [(t.goal, t.task_index) for t in recover([call("c1", args)])] == [
        ("Describe the screenshot", 0),
        (None, 1),
    ]


def test_synchronous_results_give_terminal_statuses_in_task_order() -> None:
    payload = {"results": [{"task_index": 1, "status": "failed", "error": "no response"},
                           {"task_index": 0, "status": "completed", "summary": "ok"}],
               "total_duration_seconds": 9.0}  # fmt: skip
    rows = [call("c1", {"tasks": [{"goal": "A task"}, {"goal": "B task"}]}), result("c1", payload)]
    assert brief(recover(rows)) == [
        ("c1", "A task", 0, "completed", True),
        ("c1", "B task", 1, "failed", True),
    ]


def test_timeout_as_the_backend_writes_it_is_terminal() -> None:
    payload = {
        "results": [{"task_index": 0, "status": "timeout", "exit_reason": "timeout", "duration_seconds": 600}]
    }
    rows = [call("c1", {"goal": "Slow task"}), result("c1", payload)]
    assert brief(recover(rows)) == [("c1", "Slow task", 0, "timeout", True)]


@pytest.mark.parametrize(
    "raw", [None, "", "success", "queued", "rejected", "stalled", "COMPLETED", 1, ["completed"]]
)
def test_missing_or_unfamiliar_statuses_stay_non_terminal(raw: object) -> None:
    entry = {"task_index": 0} if raw is None else {"task_index": 0, "status": raw}
    rows = [call("c1", {"goal": "A task"}), result("c1", {"results": [entry]})]
    assert brief(recover(rows)) == [("c1", "A task", 0, "unknown", False)]
    assert status_of(raw) == "unknown"


@pytest.mark.parametrize("status", ["completed", "failed", "error", "interrupted", "cancelled", "timeout"])
def test_every_recognised_terminal_status_is_terminal(status: str) -> None:
    rows = [call("c1", {"goal": "A task"}), result("c1", {"results": [{"task_index": 0, "status": status}]})]
    assert brief(recover(rows)) == [("c1", "A task", 0, status, True)]


def test_dispatched_batch_expands_goals_and_subagent_ids_without_references() -> None:
    payload = dispatched("deleg_66c2a77e", ["Count TODOs", "Check the build"],
                         subagent_ids=["sa-0-babcc0c4", "sa-1-cc02fe00"],
                         live_transcripts=["/home/u/.hermes/cache/delegation/live/deleg_66c2a77e/task-0.log"])  # fmt: skip
    rows = [
        call("c1", {"tasks": [{"goal": "Count TODOs"}, {"goal": "Check the build"}]}),
        result("c1", payload),
    ]
    tasks = recover(rows)
    assert [(t.goal, t.delegation_id, t.subagent_id, t.status, t.child_session_id) for t in tasks] == [
        ("Count TODOs", "deleg_66c2a77e", "sa-0-babcc0c4", "running", None),
        ("Check the build", "deleg_66c2a77e", "sa-1-cc02fe00", "running", None),
    ]
    assert {t.unavailable_reason for t in tasks} == {NO_REFERENCE}


@pytest.mark.parametrize(
    "junk", [{"units": 5, "subagent_ids": "sa-0-aa"}, {"units": ["x", {"task_indexes": "0"}], "goals": "A"}]
)
def test_malformed_dispatch_extras_are_ignored(junk: dict[str, Any]) -> None:
    rows = [
        call("c1", {"goal": "A task"}),
        result("c1", {**dispatched("deleg_1f2d7b00", ["A task"]), **junk}),
    ]
    assert [(t.goal, t.delegation_id, t.subagent_id, t.status) for t in recover(rows)] == [
        ("A task", "deleg_1f2d7b00", None, "running")
    ]


def test_dispatched_goals_are_authoritative_and_bad_subagent_ids_are_dropped() -> None:
    payload = dispatched(
        "deleg_1f2d7b00", ["Count TODOs", "Check the build"], subagent_ids=["sa-0-aa", "\x1b[2J"]
    )
    rows = [call("c1", {"goal": "Count TODOs"}), result("c1", payload)]
    assert [(t.goal, t.subagent_id) for t in recover(rows)] == [
        ("Count TODOs", "sa-0-aa"),
        ("Check the build", None),
    ]


def test_a_null_dispatched_goal_keeps_the_goal_the_call_arguments_gave() -> None:
    payload = dispatched("deleg_1f2d7b00", [None, "Check the build", ""])
    args = {"tasks": [{"goal": "Count TODOs"}, {"goal": "Build it"}, {"goal": "Lint it"}]}
    rows = [call("c1", args), result("c1", payload)]
    assert [t.goal for t in recover(rows)] == ["Count TODOs", "Check the build", "Lint it"]
    # a null goal with nothing to fall back on stays unknown
    rows = [call("c2", {}), result("c2", dispatched("deleg_1f2d7b01", [None]))]
    assert [(t.goal, t.status) for t in recover(rows)] == [(None, "running")]


def test_dispatched_units_give_each_task_its_units_delegation() -> None:
    payload = dispatched("deleg_live0000", ["A task one", "B task two", "C task three"],
                         units=[{"delegation_id": "deleg_unit0001", "group": "g", "task_indexes": [0, 2]},
                                {"delegation_id": "deleg_unit0002", "group": None, "task_indexes": [1]}])  # fmt: skip
    rows = [call("c1", {"tasks": [{"goal": "x"}]}), result("c1", payload),
            batch_row("deleg_unit0002", [(2, 3, "B task two", "failed")])]  # fmt: skip
    tasks = recover(rows)
    assert [(t.delegation_id, t.status) for t in tasks] == [
        ("deleg_unit0001", "running"),
        ("deleg_unit0002", "failed"),
        ("deleg_unit0001", "running"),
    ]


# -- references ---------------------------------------------------------------------------------


def test_a_results_entry_that_is_no_object_is_skipped_but_keeps_its_position() -> None:
    rows = [call("c1", {"tasks": [{"goal": "a"}, {"goal": "b"}]}),
            result("c1", {"results": ["not an entry", {"status": "completed"}]})]  # fmt: skip
    assert brief(recover(rows)) == [("c1", "a", 0, "unknown", False), ("c1", "b", 1, "completed", True)]


def test_a_result_that_says_nothing_leaves_the_call_open_for_a_later_answer() -> None:
    rows = [call("c1", {"tasks": [{"goal": "a"}]}), result("c1", {"note": "working on it"}),
            result("c1", {"results": [{"status": "completed"}]})]  # fmt: skip
    assert brief(recover(rows)) == [("c1", "a", 0, "completed", True)]


def test_only_a_structured_child_session_id_in_a_results_entry_is_a_reference() -> None:
    payload = {"results": [
        {"task_index": 0, "status": "completed", "child_session_id": CHILD_A, "subagent_id": "sa-0-11111111"},
        {"task_index": 1, "status": "completed", "session_id": CHILD_B, "child": {"session_id": CHILD_B},
         "live_transcript": f"/cache/delegation/live/deleg_1/{CHILD_B}.log", "summary": f"see {CHILD_B}"},
        {"task_index": 2, "status": "completed", "child_session_id": ".."},
        {"task_index": 3, "status": "completed", "child_session_id": 42},
        {"task_index": 4, "status": "completed", "child_session_id": f" {CHILD_B}"},
    ]}  # fmt: skip
    rows = [call("c1", {"tasks": [{"goal": f"Task {i} goal"} for i in range(5)]}), result("c1", payload)]
    tasks = recover(rows)
    assert [t.child_session_id for t in tasks] == [CHILD_A, None, None, None, None]
    assert [t.unavailable_reason for t in tasks] == [None] + [NO_REFERENCE] * 4
    assert tasks[0].subagent_id == "sa-0-11111111"


def test_dispatched_payloads_never_invent_references() -> None:
    payload = dispatched("deleg_1f2d7b00", ["Count TODOs"], session_id=CHILD_A, child_session_ids=[CHILD_A])
    tasks = recover([call("c1", {"goal": "Count TODOs"}), result("c1", payload)])
    assert tasks[0].child_session_id is None


# -- completion rows ----------------------------------------------------------------------------


def _background(goals: list[str], deleg: str = "deleg_66c2a77e") -> list[WireMessage]:
    return [call("bg", {"tasks": [{"goal": g} for g in goals]}), result("bg", dispatched(deleg, goals))]


def test_batch_completion_row_updates_each_task_and_a_mixed_group_is_finished() -> None:
    rows = [*_background(["Count TODOs", "Check the build"]),
            batch_row("deleg_66c2a77e", [(1, 2, "Count TODOs", "completed"), (2, 2, "Check the build", "failed")])]  # fmt: skip
    tasks = recover(rows)
    assert [(t.status, t.terminal) for t in tasks] == [("completed", True), ("failed", True)]
    assert to_builtins(summarize(tasks)) == {"total": 2, "terminal": 2, "state": "finished", "usage": None}


def test_iot_completion_row_with_display_metadata() -> None:
    meta = {"display_text": "Subagent Tasks Completed", "delegation_id": "deleg_66c2a77e", "task_count": 1,
            "completed_count": 1, "failed_count": 0}  # fmt: skip
    rows = [*_background(["Count TODOs"]),
            batch_row("deleg_66c2a77e", [(1, 1, "Count TODOs", "completed")],
                      display_kind="async_delegation_complete", display_metadata=meta)]  # fmt: skip
    assert [t.status for t in recover(rows)] == ["completed"]


def test_completion_row_whose_metadata_names_another_delegation_is_ignored() -> None:
    rows = [*_background(["Count TODOs"]),
            batch_row("deleg_66c2a77e", [(1, 1, "Count TODOs", "completed")],
                      display_kind="async_delegation_complete", display_metadata={"delegation_id": "deleg_other"})]  # fmt: skip
    assert [t.status for t in recover(rows)] == ["running"]


def test_completion_rows_of_unknown_delegations_or_not_user_rows_are_ignored() -> None:
    rows = [*_background(["Count TODOs"]), batch_row("deleg_unknown", [(1, 1, "Count TODOs", "failed")]),
            row("assistant", "[ASYNC DELEGATION BATCH COMPLETE — deleg_66c2a77e]\n\n--- ✗ TASK 1/1: x  (status=failed) ---")]  # fmt: skip
    assert [t.status for t in recover(rows)] == ["running"]


def test_single_task_completion_row() -> None:
    text = ("[ASYNC DELEGATION COMPLETE — deleg_02e95f43]\nA background subagent you dispatched earlier has finished.\n\n"
            "Original goal: Watch the tests\nRole: leaf   Model: m\nStatus: interrupted   API calls: 3   Duration: 4.2s\n"
            "--- RESULT ---\nThe subagent was interrupted before completing.")  # fmt: skip
    rows = [*_background(["Watch the tests"], "deleg_02e95f43"), row("user", text)]
    assert brief(recover(rows)) == [("bg", "Watch the tests", 0, "interrupted", True)]


def test_iot_task_failed_notice_marks_one_task_of_a_running_batch() -> None:
    text = ("[ASYNC DELEGATION TASK FAILED — deleg_66c2a77e, task 2/2]\nOne subagent has failed.\n"
            "Task: Check the build\nStatus: error   Duration: 3.1s\nError: boom")  # fmt: skip
    rows = [*_background(["Count TODOs", "Check the build"]), row("user", text)]
    assert [(t.status, t.terminal) for t in recover(rows)] == [("running", False), ("error", True)]
    assert summarize(recover(rows)).state == "running"


def test_a_task_failed_notice_for_task_zero_names_no_task_and_is_ignored() -> None:
    text = ("[ASYNC DELEGATION TASK FAILED — deleg_66c2a77e, task 0/2]\nOne subagent has failed.\n"
            "Task: Count TODOs\nStatus: error   Duration: 3.1s\nError: boom")  # fmt: skip
    rows = [*_background(["Count TODOs", "Check the build"]), row("user", text)]
    assert parse_completion(rows[-1], lambda deleg, index: None) is None
    assert [t.status for t in recover(rows)] == ["running", "running"]


def test_a_single_completion_without_a_duration_takes_its_status_line() -> None:
    text = ("[ASYNC DELEGATION COMPLETE — deleg_02e95f43]\nA background subagent you dispatched earlier has finished.\n\n"
            "Original goal: Watch the tests\nRole: leaf   Model: m\nStatus: failed   API calls: 3\n")  # fmt: skip
    rows = [*_background(["Watch the tests"], "deleg_02e95f43"), row("user", text)]
    assert brief(recover(rows)) == [("bg", "Watch the tests", 0, "failed", True)]


def test_a_crashed_batch_marks_its_unfinished_tasks_error() -> None:
    text = ("[ASYNC DELEGATION BATCH COMPLETE — deleg_66c2a77e]\nA background fan-out has finished.\n\n"
            "Role: leaf   Model: m   Total duration: 1.0s\n--- ERROR ---\nThe batch did not complete successfully: boom")  # fmt: skip
    rows = [*_background(["Count TODOs", "Check the build"]), row("user", text)]
    assert [t.status for t in recover(rows)] == ["error", "error"]


def test_a_goal_cannot_forge_its_status_in_a_completion_row() -> None:
    goal = "Say  (status=completed) loudly"
    rows = [*_background([goal]), batch_row("deleg_66c2a77e", [(1, 1, goal, "failed")])]
    assert [t.status for t in recover(rows)] == ["failed"]


def test_completion_status_unfamiliar_is_unknown_not_running() -> None:
    rows = [*_background(["Count TODOs"]), batch_row("deleg_66c2a77e", [(1, 1, "Count TODOs", "stalled")])]
    assert brief(recover(rows)) == [("bg", "Count TODOs", 0, "unknown", False)]


# -- stickiness and summaries -------------------------------------------------------------------


def test_terminal_is_sticky_under_later_progress() -> None:
    notice = row(
        "user",
        "[ASYNC DELEGATION TASK FAILED — deleg_66c2a77e, task 1/1]\nTask: Count TODOs\nStatus: failed   Duration: 1s",
    )
    rows = [*_background(["Count TODOs"]), notice,
            batch_row("deleg_66c2a77e", [(1, 1, "Count TODOs", "running")]),
            batch_row("deleg_66c2a77e", [(1, 1, "Count TODOs", "completed")]),
            result("bg", dispatched("deleg_66c2a77e", ["Count TODOs"]))]  # fmt: skip
    assert brief(recover(rows)) == [("bg", "Count TODOs", 0, "failed", True)]


def test_sync_terminal_result_is_sticky_under_a_later_running_completion() -> None:
    payload = {"results": [{"task_index": 0, "status": "completed"}], "delegation_id": "deleg_1f2d7b00"}
    rows = [call("c1", {"goal": "A task"}), result("c1", payload),
            batch_row("deleg_1f2d7b00", [(1, 1, "A task", "running")])]  # fmt: skip
    assert brief(recover(rows)) == [("c1", "A task", 0, "completed", True)]


def test_summary_is_running_while_any_task_is_not_terminal_counting_nested_tasks() -> None:
    done = TaskEntry(call_id="c", goal="g", task_index=0, delegation_id=None, subagent_id=None,
                     child_session_id=CHILD_A, status=TaskStatus.completed, terminal=True, unavailable_reason=None)  # fmt: skip
    nested = replace(done, status=TaskStatus.unknown, terminal=False)
    tree = [replace(done, children=[nested]), replace(done, status=TaskStatus.failed)]
    assert to_builtins(summarize(tree)) == {"total": 3, "terminal": 2, "state": "running", "usage": None}
    assert to_builtins(summarize([])) == {"total": 0, "terminal": 0, "state": "finished", "usage": None}
    assert len(flatten(tree)) == 3


def test_a_cloned_call_row_counts_once_and_records_both_segments() -> None:
    tip = "20261130_163500_abcdef"
    rows = [call("c1", {"goal": "A task"}), call("c1", {"goal": "A task"}, sid=tip),
            result("c1", {"results": [{"task_index": 0, "status": "failed"}]}),
            result("c1", {"results": [{"task_index": 0, "status": "completed"}]}, sid=tip)]  # fmt: skip
    assert brief(recover(rows)) == [("c1", "A task", 0, "failed", True)]
    assert call_sessions(rows) == {"c1": frozenset({P, tip})}


# -- the captured real parent transcripts -------------------------------------------------------


@pytest.mark.parametrize("backend", ["official", "iot"])
def test_captured_real_parent_transcript_recovers_the_expected_tasks(backend: str) -> None:
    data = load(backend)
    exchange = next(e for e in data["exchanges"] if e["name"] == "messages:parent")
    page = decoded(exchange["body"], MessagesPage)
    tasks = recover(page.messages)
    keys = ("call_id", "goal", "task_index", "delegation_id", "subagent_id", "status", "child_session_id")
    assert [{k: getattr(t, k) for k in keys} for t in tasks] == [
        {k: e[k] for k in keys} for e in data["manifest"]["expected_tasks"]
    ]
    assert [t.terminal for t in tasks] == [True, True, True, True, False]
    assert {t.unavailable_reason for t in tasks} == {NO_REFERENCE}
    assert to_builtins(summarize(tasks)) == {"total": 5, "terminal": 4, "state": "running", "usage": None}


# -- the nested tree walk (reads injected) ------------------------------------------------------


def _raw(sid: str, parent: str | None, delegate_from: str | None = None) -> dict[str, Any]:
    config = None if parent is None else json.dumps({"_delegate_from": delegate_from or parent})
    return {"id": sid, "source": "subagent" if parent else "cli", "parent_session_id": parent,
            "model_config": config, "started_at": 1.0, "ended_at": None, "end_reason": None}  # fmt: skip


def _detail(sid: str, parent: str | None, delegate_from: str | None = None) -> SessionDetail:
    return decoded(_raw(sid, parent, delegate_from), SessionDetail)


def _spawning(sid: str, refs: list[str | None], parent: str | None) -> Conversation:
    goals = [f"{sid} task {i}" for i in range(len(refs))]
    entries = [
        {"task_index": i, "status": "completed", **({"child_session_id": r} if r else {})}
        for i, r in enumerate(refs)
    ]
    messages = (call(f"call-{sid}", {"tasks": [{"goal": g} for g in goals]}, sid=sid),
                result(f"call-{sid}", {"results": entries}, sid=sid)) if refs else ()  # fmt: skip
    return Conversation(sid, messages, _detail(sid, parent), (sid,))


def _shape(tasks: list[TaskEntry]) -> list[Any]:
    return [(t.child_session_id, t.gap, _shape(t.children)) for t in tasks]


def test_tree_nests_children_once_reports_a_gap_and_continues_with_siblings() -> None:
    convs = {
        P: _spawning(P, [CHILD_A, "20261130_163409_999999", CHILD_B, CHILD_A], None),
        CHILD_A: _spawning(CHILD_A, [GRANDCHILD, P], P),
        CHILD_B: _spawning(CHILD_B, [], P),
        GRANDCHILD: _spawning(GRANDCHILD, [None], CHILD_A),
    }
    reads: list[str] = []

    def read(sid: str) -> Conversation:
        reads.append(sid)
        if sid == "20261130_163409_999999":
            raise HermesError(Code.NOT_FOUND)
        return convs[sid]

    tasks, warnings = build(convs[P], read, recursive=True)
    assert _shape(tasks) == [
        (CHILD_A, None, [(GRANDCHILD, None, [(None, None, [])]), (P, None, [])]),
        ("20261130_163409_999999", "not_found", []),
        (CHILD_B, None, []),
        (CHILD_A, None, []),
    ]
    # A conversation's children are read side by side (reading/api.py), then expanded in
    # task order: the grandchild after its siblings' generation.
    assert sorted(reads[:3]) == sorted([CHILD_A, "20261130_163409_999999", CHILD_B])
    assert reads[3:] == [GRANDCHILD]
    assert warnings == []


def test_a_child_that_is_a_segment_of_a_siblings_lineage_is_not_expanded_again() -> None:
    """Two tasks name two segments of one child's lineage: the first expanded carries the
    lineage's tasks; the other is left without children (its own tasks are not read)."""
    root = "20261130_163400_000001"
    tip = _spawning(CHILD_A, [], P)
    convs = {CHILD_A: Conversation(CHILD_A, tip.messages, tip.anchor, (root, CHILD_A)),
             root: _spawning(root, [GRANDCHILD], P), GRANDCHILD: _spawning(GRANDCHILD, [], root)}  # fmt: skip
    reads: list[str] = []

    def read(sid: str) -> Conversation:
        reads.append(sid)
        return convs[sid]

    tasks, warnings = build(_spawning(P, [CHILD_A, root], None), read, recursive=True)
    assert _shape(tasks) == [(CHILD_A, None, []), (root, None, [])]
    assert sorted(reads) == sorted([CHILD_A, root])
    assert warnings == []


def test_a_childs_bound_warning_is_kept_once_and_its_other_warnings_stay_its_own() -> None:
    bound = WarningItem(code=WarningCode.bound_reached, message="the child's proof stopped at a bound")
    convs = {}
    for sid in (CHILD_A, CHILD_B):
        plain = _spawning(sid, [], P)
        convs[sid] = Conversation(sid, plain.messages, plain.anchor, plain.path,
                                  (WarningItem(code=WarningCode.legacy_backend, message="legacy"), bound))  # fmt: skip
    tasks, warnings = build(_spawning(P, [CHILD_A, CHILD_B], None), convs.__getitem__, recursive=True)
    assert _shape(tasks) == [(CHILD_A, None, []), (CHILD_B, None, [])]
    assert warnings == [bound]


def test_tree_without_recursive_reads_nothing() -> None:
    convs = {P: _spawning(P, [CHILD_A], None)}
    tasks, _ = build(convs[P], lambda sid: pytest.fail(f"read {sid}"), recursive=False)
    assert _shape(tasks) == [(CHILD_A, None, [])]


def test_a_child_naming_another_parent_is_an_identity_gap() -> None:
    convs = {P: _spawning(P, [CHILD_A, CHILD_B], None), CHILD_A: _spawning(CHILD_A, [GRANDCHILD], "20261130_000000_000000"),
             CHILD_B: _spawning(CHILD_B, [], P)}  # fmt: skip
    tasks, _ = build(convs[P], convs.__getitem__, recursive=True)
    assert _shape(tasks) == [(CHILD_A, "identity_mismatch", []), (CHILD_B, None, [])]


def test_a_rotated_child_reference_is_accepted_only_through_its_proven_root() -> None:
    """A reference to a later segment of a child names its previous segment as parent: it is
    the parent's child only once compression edges lead back to a root that P delegated
    (issue 25: `_delegate_from` alone is not the proof)."""
    root = "20261130_163400_000001"
    tip = _spawning(CHILD_A, [], P)
    tip = Conversation(CHILD_A, tip.messages, _detail(CHILD_A, root, delegate_from=P), (CHILD_A,))
    ended = decoded({**_raw(root, P), "ended_at": 1.5, "end_reason": "compression"}, SessionDetail)
    details = {CHILD_A: tip.anchor, root: ended}
    tasks, _ = build(_spawning(P, [CHILD_A], None), {CHILD_A: tip}.__getitem__, recursive=True,
                     read_detail=details.__getitem__)  # fmt: skip
    assert _shape(tasks) == [(CHILD_A, None, [])]
    # The same reference without a compression edge to a root of P: not P's child.
    details[root] = _detail(root, P)
    tasks, _ = build(_spawning(P, [CHILD_A], None), {CHILD_A: tip}.__getitem__, recursive=True,
                     read_detail=details.__getitem__)  # fmt: skip
    assert _shape(tasks) == [(CHILD_A, "identity_mismatch", [])]
    # Without detail reads only a delegation root is accepted.
    tasks, _ = build(_spawning(P, [CHILD_A], None), {CHILD_A: tip}.__getitem__, recursive=True)
    assert _shape(tasks) == [(CHILD_A, "identity_mismatch", [])]


def test_a_child_is_owned_only_when_parent_and_delegate_marker_name_the_same_segment() -> None:
    other = "20261130_000000_000000"
    for detail, owned in [(_detail(CHILD_A, P), True), (_detail(CHILD_A, P, delegate_from=other), False),
                          (_detail(CHILD_A, other, delegate_from=P), False), (_detail(CHILD_A, None), False)]:  # fmt: skip
        convs = {CHILD_A: Conversation(CHILD_A, (), detail, (CHILD_A,))}
        tasks, _ = build(_spawning(P, [CHILD_A], None), convs.__getitem__, recursive=True,
                         read_detail={CHILD_A: detail, other: _detail(other, None)}.__getitem__)  # fmt: skip
        assert _shape(tasks) == [(CHILD_A, None if owned else "identity_mismatch", [])]


def test_depth_is_bounded_with_a_warning() -> None:
    chain = [f"20261130_1634{i:02d}_aaaaaa" for i in range(12)]
    convs = {sid: _spawning(sid, [chain[i + 1]] if i + 1 < len(chain) else [], chain[i - 1] if i else None)
             for i, sid in enumerate(chain)}  # fmt: skip
    tasks, warnings = build(convs[chain[0]], convs.__getitem__, recursive=True, max_depth=3)
    assert _shape(tasks) == [(chain[1], None, [(chain[2], None, [(chain[3], None, [(chain[4], None, [])])])])]
    assert [w.code for w in warnings] == ["bound_reached"]
    assert "deeper than 3 levels" in warnings[0].message
    assert "the children of 1 task(s) at that depth were not read" in warnings[0].message


def test_conversation_budget_is_bounded_and_parent_warnings_are_kept() -> None:
    kids = [f"20261130_1635{i:02d}_bbbbbb" for i in range(4)]
    parent = _spawning(P, list(kids), None)
    parent = Conversation(P, parent.messages, parent.anchor, parent.path,
                          (WarningItem(code=WarningCode.legacy_backend, message="legacy"),))  # fmt: skip
    convs = {k: _spawning(k, [], P) for k in kids}
    tasks, warnings = build(parent, convs.__getitem__, recursive=True, max_conversations=2)
    assert [w.code for w in warnings] == ["legacy_backend", "bound_reached"]
    assert len(tasks) == 4
    # how many tasks it left out of the tree (issue 29)
    assert "only 2 child conversations were read: the children of 2 more task(s)" in warnings[1].message


def test_a_tree_of_500_conversations_is_read_whole_within_the_bounds() -> None:
    """Issue 29: 20 children with 25 tasks each (521 conversations) are all read and nested,
    with no bound reached (the bound was 100 conversations)."""
    kids = [f"20261202_10{i:02d}00_cccccc" for i in range(20)]
    grand = {k: [f"20261202_10{i:02d}{j:02d}_dddddd" for j in range(1, 26)] for i, k in enumerate(kids)}
    convs = {P: _spawning(P, list(kids), None)}
    for k in kids:
        convs[k] = _spawning(k, list(grand[k]), P)
        convs.update({g: _spawning(g, [], k) for g in grand[k]})
    tasks, warnings = build(convs[P], convs.__getitem__, recursive=True)
    assert warnings == []
    assert [t.child_session_id for t in tasks] == kids
    assert [[c.child_session_id for c in t.children] for t in tasks] == [grand[k] for k in kids]


def test_an_interrupt_while_reading_a_child_is_not_a_gap() -> None:
    def read(sid: str) -> Conversation:
        raise HermesError(Code.INTERRUPTED)

    with pytest.raises(HermesError):
        build(_spawning(P, [CHILD_A], None), read, recursive=True)


def test_hostile_nesting_in_arguments_and_results_is_ignored() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    rows = [call("c1", deep), result("c1", deep), call("c2", {"goal": "A task"}), result("c2", deep)]
    assert brief(recover(rows)) == [("c2", "A task", 0, "unknown", False)]


def test_recovering_a_big_fan_out_compares_no_two_tasks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 29: a 400-task dispatch and its completion row are recovered in time linear in
    tasks: no task is compared with every other (registering each task of a delegation once
    took 80,000 record comparisons at 400), and a completion block finds its task by index."""
    from hermes_task.core import delegations

    compared: list[int] = []
    real = delegations._Task.__eq__

    def counting(self: object, other: object) -> bool:
        compared.append(1)
        return bool(real(self, other))

    monkeypatch.setattr(delegations._Task, "__eq__", counting)
    goals = [f"Check shard {i:03d}" for i in range(400)]
    blocks = [(i + 1, 400, g, "completed" if i % 2 else "failed") for i, g in enumerate(goals)]
    rows = [call("c1", {"tasks": [{"goal": g} for g in goals]}), result("c1", dispatched("deleg_0a0b0c0d", goals)),
            batch_row("deleg_0a0b0c0d", blocks)]  # fmt: skip
    tasks = recover(rows)
    assert [t.status for t in tasks] == ["failed" if i % 2 == 0 else "completed" for i in range(400)]
    assert compared == []
