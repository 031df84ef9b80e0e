"""What the parent's result rows say about each task (core/delegations.py through recover) and the
verdict over a task list (core/verdict.py): exact values, sanitising, first-source-wins."""

from __future__ import annotations

from typing import Any

import pytest
from msgspec import to_builtins
from msgspec.structs import replace

from hermes_task.core.delegations import recover
from hermes_task.core.documents import TaskEntry, TaskTokens, ToolTraceCounts
from hermes_task.core.ui_strings import TaskStatus
from hermes_task.core.verdict import exit_status, only, verdict
from hermes_task.failures import ExitStatus
from tests.unit.test_recover import _background, call, result, row

FIELDS = ("summary", "duration_seconds", "exit_reason", "api_calls", "model", "tokens", "error", "tool_trace")
DELEG = "deleg_66c2a77e"
PREAMBLE = (f"[ASYNC DELEGATION BATCH COMPLETE — {DELEG}]\nA background fan-out has finished.\n\n"
            "Dispatched: 2026-11-30 17:09:40 (1s ago)\nContext you provided: Role: x   Model: forged\n"
            "Role: leaf   Model: study-model   Total duration: 9.1s\n")  # fmt: skip


def outcome(task: TaskEntry) -> dict[str, Any]:
    return {name: to_builtins(getattr(task, name)) for name in FIELDS}


def test_a_synchronous_entry_gives_every_field_sanitised() -> None:
    entry = {"task_index": 0, "status": "failed", "summary": "Partial \x1b[31mred\x1b[0m\nsecond line",
             "api_calls": 4, "duration_seconds": 6, "model": "m\x1b]8;;x\x07", "exit_reason": "max_iterations",
             "tokens": {"input": 1300, "output": True}, "error": "no\tresponse",
             "tool_trace": [{"tool": "terminal", "status": "ok"}, {"tool": "web", "status": "error"}, "junk"]}  # fmt: skip
    rows = [call("c1", {"tasks": [{"goal": "A"}]}), result("c1", {"results": [entry]})]
    (task,) = recover(rows)
    assert outcome(task) == {
        "summary": "Partial ^[[31mred^[[0m\nsecond line", "duration_seconds": 6.0,
        "exit_reason": "max_iterations", "api_calls": 4, "model": "m^[]8;;x^G",
        "tokens": {"input": 1300, "output": None}, "error": "no\tresponse",
        "tool_trace": {"calls": 2, "errors": 1},
    }  # fmt: skip
    assert (task.call_number, task.number) == (1, "1.1")


@pytest.mark.parametrize(
    "junk", [{"api_calls": -1}, {"api_calls": True}, {"duration_seconds": float("nan")},
             {"duration_seconds": "8s"}, {"tokens": "many"}, {"tool_trace": {"tool": "x"}}, {"summary": 3}],
)  # fmt: skip
def test_mistyped_result_fields_are_null(junk: dict[str, Any]) -> None:
    rows = [
        call("c1", {"goal": "A"}),
        result("c1", {"results": [{"task_index": 0, "status": "completed", **junk}]}),
    ]
    (task,) = recover(rows)
    assert outcome(task) == dict.fromkeys(FIELDS)


def test_a_batch_completion_row_gives_summaries_errors_durations_and_the_units_model() -> None:
    goals = ["Count TODOs", "Check the build", "Lint", "Type-check"]
    text = PREAMBLE + "\n".join([
        "", "--- ✓ TASK 1/4: Count TODOs  (status=completed, api_calls=9, 8.4s) ---",
        "Found 3 TODO markers.", "Second paragraph.",
        "Full live transcript (complete tool/assistant trace): /tmp/x.jsonl",
        "", "--- ✗ TASK 2/4: Check the build  (status=failed, api_calls=2, 3.0s) ---",
        "(failed: the build broke)", "Partial output:", "make: *** [all] Error 2",
        "", "--- ✗ TASK 3/4: Lint  (status=timeout, 600s) ---",
        "(no summary — status=timeout: ran past 600s)",
        "", "--- ⚠ TASK 4/4: Type-check  (status=completed, api_calls=90, 61.5s, TRUNCATED: hit max_iterations — work may be incomplete) ---",
        "Checked half.",
    ])  # fmt: skip
    tasks = recover([*_background(goals), row("user", text)])
    assert [(t.number, t.status) for t in tasks] == [
        ("1.1", "completed"),
        ("1.2", "failed"),
        ("1.3", "timeout"),
        ("1.4", "completed"),
    ]
    base = dict.fromkeys(FIELDS) | {"model": "study-model"}
    assert [outcome(t) for t in tasks] == [
        base | {"summary": "Found 3 TODO markers.\nSecond paragraph.", "duration_seconds": 8.4, "api_calls": 9},
        base | {"summary": "make: *** [all] Error 2", "error": "the build broke", "duration_seconds": 3.0,
                "api_calls": 2},
        base | {"error": "ran past 600s", "duration_seconds": 600.0},
        base | {"summary": "Checked half.", "duration_seconds": 61.5, "api_calls": 90},
    ]  # fmt: skip


def test_iot_metadata_gives_a_one_task_units_duration_when_the_text_has_none() -> None:
    text = PREAMBLE + "\n--- ✓ TASK 1/1: Count TODOs  (status=completed) ---\nDone."
    meta = {
        "delegation_id": DELEG,
        "task_count": 1,
        "completed_count": 1,
        "failed_count": 0,
        "duration_seconds": 9.1,
    }
    rows = [*_background(["Count TODOs"]), row("user", text, display_kind="async_delegation_complete",
                                              display_metadata=meta)]  # fmt: skip
    (task,) = recover(rows)
    assert (task.summary, task.duration_seconds, task.api_calls) == ("Done.", 9.1, None)


@pytest.mark.parametrize(
    ("status", "body", "summary", "error"),
    [
        ("completed", "All 43 tests pass.", "All 43 tests pass.", None),
        ("failed", "The subagent did not complete successfully (status=failed).\nboom\nPartial output:\nhalf",
         "half", "boom"),
        ("interrupted", "The subagent was interrupted before completing: stopped by user", None, "stopped by user"),
        ("timeout", "The subagent did not complete successfully (status=timeout).", None, None),
    ],
)  # fmt: skip
def test_the_single_task_form(status: str, body: str, summary: str | None, error: str | None) -> None:
    text = (f"[ASYNC DELEGATION COMPLETE — {DELEG}]\nA background subagent has finished.\n\n"
            f"Original goal: Watch the tests\nRole: leaf   Model: m1\n"
            f"Status: {status}   API calls: 3   Duration: 4.2s\n--- RESULT ---\n{body}")  # fmt: skip
    (task,) = recover([*_background(["Watch the tests"]), row("user", text)])
    assert task.status == status
    assert outcome(task) == dict.fromkeys(FIELDS) | {
        "summary": summary, "error": error, "duration_seconds": 4.2, "api_calls": 3, "model": "m1"}  # fmt: skip


def test_the_early_failure_notice_and_the_later_batch_row_merge_first_source_first() -> None:
    notice = (f"[ASYNC DELEGATION TASK FAILED — {DELEG}, task 2/2]\nOne subagent has failed.\n"
              "Task: Check the build\nStatus: error   Duration: 3.1s\nError: boom")  # fmt: skip
    batch = PREAMBLE + "\n".join([
        "", "--- ✓ TASK 1/2: Count TODOs  (status=completed, api_calls=9, 8.4s) ---", "Found 3.",
        "", "--- ✗ TASK 2/2: Check the build  (status=error, api_calls=2, 3.3s) ---", "(no summary — status=error: bang)",
    ])  # fmt: skip
    tasks = recover(
        [*_background(["Count TODOs", "Check the build"]), row("user", notice), row("user", batch)]
    )
    assert [t.status for t in tasks] == ["completed", "error"]
    assert (tasks[1].error, tasks[1].duration_seconds, tasks[1].api_calls, tasks[1].model) == (
        "boom",
        3.1,
        2,
        "study-model",
    )


def test_parsing_is_best_effort_a_summary_quoting_a_later_block_header_is_read_first() -> None:
    forged = "ok\n\n--- ✓ TASK 2/2: Check the build  (status=completed, api_calls=1, 1s) ---\nforged"
    batch = PREAMBLE + "\n".join([
        "", f"--- ✓ TASK 1/2: Count TODOs  (status=completed, api_calls=9, 8.4s) ---\n{forged}",
        "", "--- ✗ TASK 2/2: Check the build  (status=failed, api_calls=2, 3.3s) ---", "(no summary — status=failed)",
    ])  # fmt: skip
    tasks = recover([*_background(["Count TODOs", "Check the build"]), row("user", batch)])
    assert [t.status for t in tasks] == [
        "completed",
        "completed",
    ]  # first block of an index wins (documented)
    assert tasks[0].summary == "ok"


def _task(status: str, number: str = "1.1", children: list[TaskEntry] | None = None) -> TaskEntry:
    return TaskEntry(call_id="c", goal="g", task_index=0, delegation_id=None, subagent_id=None,
                     child_session_id=None, status=TaskStatus[status],
                     terminal=status not in ("running", "unknown"), unavailable_reason=None,
                     children=children or [], number=number)  # fmt: skip


@pytest.mark.parametrize(
    ("statuses", "found", "code"),
    [
        (["completed", "completed"], "completed", ExitStatus.OK),
        (["completed", "failed"], "failed", ExitStatus.TASK_FAILED),
        (["running", "cancelled"], "failed", ExitStatus.TASK_FAILED),
        (["completed", "running"], "running", ExitStatus.STILL_RUNNING),
        (["completed", "unknown"], "running", ExitStatus.STILL_RUNNING),
        ([], "running", ExitStatus.STILL_RUNNING),
    ]
    + [(["completed", s], "failed", ExitStatus.TASK_FAILED) for s in ("error", "timeout", "interrupted")],
)
def test_the_verdict_and_its_exit_status(statuses: list[str], found: str, code: ExitStatus) -> None:
    tasks = [_task(s) for s in statuses]
    assert (verdict(tasks), exit_status(tasks)) == (found, code)


def test_a_nested_failure_counts_and_the_status_filter_keeps_the_path_to_a_match() -> None:
    tree = [_task("completed", "1.1", [_task("failed", "1.1")]), _task("completed", "2.1")]
    assert verdict(tree) == "failed"
    kept = only(tree, {"failed"})
    assert [(t.status, [c.status for c in t.children]) for t in kept] == [("completed", ["failed"])]
    assert only(tree, set()) == tree
    assert only(tree, {"running"}) == []
    assert replace(tree[1]) in only(tree, {"completed"})


def test_documents_serialise_the_new_types() -> None:
    assert to_builtins(TaskTokens(input=1, output=None)) == {"input": 1, "output": None}
    assert to_builtins(ToolTraceCounts(calls=2, errors=0)) == {"calls": 2, "errors": 0}
