"""`recover` against every real backend: the seeded parent's
delegate_task calls, results, control acknowledgements and completion rows."""

from __future__ import annotations

import re
import subprocess
from typing import Any

import pytest
from tests.support.backends import legacy_stderr, legacy_warning
from tests.support.cli_runner import hermes_task

pytestmark = pytest.mark.integration

KEYS = ("call_id", "goal", "task_index", "delegation_id", "subagent_id", "status", "child_session_id")


def expected(backend: Any) -> list[dict[str, Any]]:
    """The seeded tasks; each child id is the one the seeder created (found in the store)."""
    return [
        {**{k: e[k] for k in KEYS}, "child_session_id": e["child"]}
        for e in backend.manifest["expected_tasks"]
    ]


def test_recovered_tasks_equal_the_seeded_delegations(backend: Any) -> None:
    run = hermes_task(backend, "recover", backend.manifest["parent"], "--json")
    assert run.code == 0, run.stderr
    assert run.stderr == ""
    doc = run.json()
    assert (doc["schema_version"], doc["kind"], doc["parent_id"]) == (1, "tasks", backend.manifest["parent"])
    assert [{k: t[k] for k in KEYS} for t in doc["tasks"]] == expected(backend)
    assert [t["terminal"] for t in doc["tasks"]] == [e["status"] != "running" for e in expected(backend)]
    # The real backends never persist a child id in the transcript: every id came from the
    # local store and was confirmed over HTTP; nothing is nested without --recursive.
    assert {(t["unavailable_reason"], t["gap"], t["child_ref_source"]) for t in doc["tasks"]} == {
        (None, None, "store")
    }
    assert all(t["children"] == [] for t in doc["tasks"])
    assert {k: v for k, v in doc["summary"].items() if k != "usage"} == {
        "total": 5,
        "terminal": 4,
        "state": "running",
    }
    # every child is proven, so every task has usage (tests/integration/test_usage.py sums it)
    assert all(t["usage"] is not None for t in doc["tasks"])
    text = legacy_warning(backend.features)
    assert doc["warnings"] == ([{"code": "legacy_backend", "message": text}] if text else [])
    if expected(backend)[2]["subagent_id"] is not None:
        # a backend with delegate_task actions: the stop request for the running task is
        # only an acknowledgement.
        assert doc["tasks"][4]["status"] == "running"
        assert all(re.fullmatch(r"sa-\d-[0-9a-f]{8}", t["subagent_id"]) for t in doc["tasks"][2:])


def test_without_the_store_no_child_is_known(backend: Any) -> None:
    """--no-store: no child ids from the store, the store_unavailable warning, and each task
    says the store could not propose its child (issue 35)."""
    run = hermes_task(backend, "recover", backend.manifest["parent"], "--no-store", "--json")
    assert run.code == 0, run.stderr
    doc = run.json()
    assert [{k: t[k] for k in KEYS} for t in doc["tasks"]] == [
        {**e, "child_session_id": None} for e in expected(backend)
    ]
    assert {(t["unavailable_reason"], t["child_ref_source"]) for t in doc["tasks"]} == {
        ("store_unavailable", None)
    }
    assert doc["warnings"][-1]["code"] == "store_unavailable"
    assert doc["warnings"][-1]["message"].endswith(
        "(--no-store): drop --no-store (or the config file's no_store = true)"
    )


def test_recursive_reads_each_child_once(backend: Any) -> None:
    plain = hermes_task(backend, "recover", backend.manifest["parent"], "--json").json()
    run = hermes_task(backend, "recover", backend.manifest["parent"], "--recursive", "--pages", "1", "--json")
    assert run.code == 0, run.stderr
    doc = run.json()
    # The seeded children delegated nothing themselves: the same tasks, none nested; each
    # task's usage with its children is its own.
    assert [t["usage_with_children"] for t in doc["tasks"]] == [t["usage"] for t in doc["tasks"]]
    assert [{**t, "usage_with_children": None} for t in doc["tasks"]] == plain["tasks"]


def test_piped_output_splits_cleanly_with_awk(backend: Any) -> None:
    run = hermes_task(backend, "recover", backend.manifest["parent"], COLUMNS="40")
    assert run.code == 0, run.stderr
    exp = backend.manifest["expected_tasks"]
    lines = run.stdout.splitlines()
    assert [line.split("\t")[:2] for line in lines] == [
        ["1.1", "completed"], ["1.2", "failed"], ["2.1", "completed"], ["2.2", "completed"], ["3.1", "running"]
    ]  # fmt: skip
    assert {len(line.split("\t")) for line in lines} == {13}  # 9-13: the task's usage
    assert [line.split("\t")[3] for line in lines] == [e["goal"] for e in exp]  # never wrapped, never cut
    assert lines[1].split("\t")[7] == "Subagent did not produce a response."
    awk = subprocess.run(
        ["awk", "-F\t", '$2 == "failed" || $2 == "running" {print $1 "|" $6 "|" $8}'],
        input=run.stdout, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert awk.stdout.splitlines() == [
        "1.2||Subagent did not produce a response.",
        f"3.1|{exp[4]['delegation_id']}|",
    ]
    # The child column holds every full id (found in the local store, confirmed over HTTP).
    assert [line.split("\t")[4] for line in lines] == [e["child"] for e in exp]
    assert run.stderr == legacy_stderr(backend.features)
    header = hermes_task(backend, "recover", backend.manifest["parent"], "--header")
    assert header.stdout.splitlines()[0] == (
        "#\tstatus\ttime\tgoal\tchild_session\tdelegation\tsubagent\tresult"
        "\tinput_tokens\toutput_tokens\tcost_usd\tcost_kind\tusage_complete"
    )


def test_results_of_the_seeded_parent(backend: Any) -> None:
    doc = hermes_task(backend, "recover", backend.manifest["parent"], "--json").json()
    first, failed = doc["tasks"][0], doc["tasks"][1]
    assert (first["number"], first["call_number"], first["tokens"], first["tool_trace"]) == (
        "1.1",
        1,
        {"input": 1200, "output": 90},
        {"calls": 1, "errors": 0},
    )
    assert (failed["status"], failed["error"], failed["exit_reason"], failed["tool_trace"]) == (
        "failed",
        "Subagent did not produce a response.",
        "completed",
        {"calls": 1, "errors": 1},
    )
    # The background batch's completion row, written by the package's own formatter.
    assert all(t["model"] and t["duration_seconds"] is not None for t in doc["tasks"][:4])
    assert (doc["tasks"][4]["summary"], doc["tasks"][4]["duration_seconds"]) == (None, None)


def test_another_parent_has_its_own_single_task(backend: Any) -> None:
    other = backend.manifest["other"]
    doc = hermes_task(backend, "recover", other["parent"], "--json").json()
    # Its child rotated once and its tip closed, but P2's transcript says only `dispatched` and
    # no completion was recorded: proven ended through the rotation, so never `running`.
    assert [
        (t["goal"], t["task_index"], t["status"], t["terminal"], t["child_state"]) for t in doc["tasks"]
    ] == [(other["goal"], 0, "ended_unreported", True, "ended")]
    assert doc["tasks"][0]["child_session_id"] == other["root"]
    assert re.fullmatch(r"deleg_[0-9a-f]{8}", doc["tasks"][0]["delegation_id"])
    # a subagent id exists where the backend's delegate_task records them (seeded manifest)
    assert (doc["tasks"][0]["subagent_id"] is None) is (expected(backend)[2]["subagent_id"] is None)


def test_a_chat_without_delegations_lists_nothing(backend: Any) -> None:
    long_id = backend.manifest["long"]["id"]
    run = hermes_task(backend, "recover", long_id)
    assert run.code == 0, run.stderr
    assert run.stdout == ""  # piped: zero task lines
    assert run.stderr == f"no delegated tasks in {long_id}\n{legacy_stderr(backend.features)}"
    doc = hermes_task(backend, "recover", long_id, "--json").json()
    assert (doc["tasks"], doc["summary"]) == (
        [],
        {"total": 0, "terminal": 0, "state": "finished", "usage": None},
    )


def test_unknown_parent_is_not_found(backend: Any) -> None:
    run = hermes_task(backend, "recover", "20261130_000000_000000", "--json")
    assert run.code == 4
    assert run.json()["error"]["code"] == "not_found"
    assert run.stderr.startswith("error: session not found")
