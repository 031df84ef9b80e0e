"""`hermes-task recover` through the CLI: captured real parents of both backends, and
fabricated current-contract transcripts that carry `child_session_id` (as the #85485 proposal
would) for the nested tree, gaps, paging bounds and failures."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from typer.testing import Result

from hermes_task.cli.options import Environment
from tests.support.cli_runner import ENVIRONMENT, invoke
from tests.support.conversations import Conversations
from tests.support.dashboard import serving
from tests.support.replay import TOKEN, Replay

ENV = {"HERMES_DASHBOARD_TOKEN": TOKEN, "NO_COLOR": "1", "COLUMNS": "150", "XDG_CONFIG_HOME": "/nonexistent"}
NOTE = (
    'child session "-": the backend persisted no child session id for this task and the local store '
    "proposed none that the dashboard confirmed\n"
)

P = "20261130_170000_aaaaaa"
CHILD_A = "20261130_170001_bbbbbb"
CHILD_B = "20261130_170002_cccccc"
MISSING = "20261130_170003_dddddd"
GRANDCHILD = "20261130_170004_eeeeee"


def run(*args: str, env: dict[str, str] | None = None) -> Result:
    obj = ENVIRONMENT[-1] if ENVIRONMENT else None
    return invoke("recover", *args, env={"COLUMNS": "150", **(env or {})}, environment=obj)


def doc(result: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(result.stdout)
    return data


# -- captured real parents ----------------------------------------------------------------------


@pytest.fixture(params=["official", "iot"])
def replay(request: pytest.FixtureRequest) -> Iterator[Replay]:
    rep = Replay(request.param)
    with serving(rep):
        yield rep


NO_RESULT: dict[str, Any] = {
    "summary": None, "duration_seconds": None, "exit_reason": None, "api_calls": None, "model": None,
    "tokens": None, "error": None, "tool_trace": None,
}  # fmt: skip
# What the captured parents' result rows say (fixtures/*/delegated_task_dashboard.json): two
# synchronous results, a background batch's completion row, and a task still running.
CAPTURED_RESULTS: list[dict[str, Any]] = [
    {"summary": "Summarised 119 modules.", "duration_seconds": 48.2, "exit_reason": "completed",
     "api_calls": 120, "model": "study-model", "tokens": {"input": 1200, "output": 90}, "error": None,
     "tool_trace": {"calls": 1, "errors": 0}},
    {"summary": None, "duration_seconds": 6.5, "exit_reason": "completed", "api_calls": 4,
     "model": "study-model", "tokens": {"input": 1300, "output": 90},
     "error": "Subagent did not produce a response.", "tool_trace": {"calls": 1, "errors": 1}},
    {**NO_RESULT, "summary": "Found 3 TODO markers in 2 files.", "duration_seconds": 8.4, "api_calls": 9,
     "model": "study-model"},
    {**NO_RESULT, "summary": "The build passes.", "duration_seconds": 6.1, "api_calls": 5,
     "model": "study-model"},
    NO_RESULT,
]  # fmt: skip


def _expected_tasks(manifest: dict[str, Any]) -> list[dict[str, Any]]:
    numbers = ["1.1", "1.2", "2.1", "2.2", "3.1"]
    return [
        {"call_id": e["call_id"], "goal": e["goal"], "task_index": e["task_index"],
         "delegation_id": e["delegation_id"], "subagent_id": e["subagent_id"], "child_session_id": None,
         "status": e["status"], "terminal": e["status"] != "running",
         "unavailable_reason": "no_durable_child_reference", "children": [], "gap": None,
         "call_number": int(number[0]), "number": number, **result, "child_ref_source": None,
         "result_source": None if e["status"] == "running" else "parent", "child_state": None,
         "delivery_state": None, "usage": None, "usage_with_children": None}
        for e, number, result in zip(manifest["expected_tasks"], numbers, CAPTURED_RESULTS, strict=True)
    ]  # fmt: skip


@pytest.mark.parametrize("recursive", [[], ["--recursive"]])
def test_json_of_a_real_parent_is_exactly_the_expected_document(replay: Replay, recursive: list[str]) -> None:
    manifest = replay.manifest
    result = run(manifest["parent"], "--json", *recursive)
    assert result.exit_code == 0
    assert result.stderr == ""
    legacy = manifest["backend"]["contract"] == "legacy"
    warnings = (
        [
            {
                "code": "legacy_backend",
                "message": "legacy backend (hermes-agent 0.19.x): archived rows are not visible over HTTP",
            }
        ]
        if legacy
        else []
    )
    assert doc(result) == {
        "schema_version": 1,
        "kind": "tasks",
        "parent_id": manifest["parent"],
        "tasks": _expected_tasks(manifest),
        "summary": {"total": 5, "terminal": 4, "state": "running", "usage": None},
        "warnings": warnings,
    }
    # Only the parent is read (detail, one page, fresh detail): no reference, no child read.
    assert [s.split("?")[0] for s in replay.seen] == [
        f"GET /api/sessions/{manifest['parent']}",
        f"GET /api/sessions/{manifest['parent']}/messages",
        f"GET /api/sessions/{manifest['parent']}",
    ]


@pytest.fixture
def tty() -> Iterator[None]:
    """stdout is a terminal: the table, not the piped lines."""
    ENVIRONMENT.append(Environment(isatty=lambda stream: True))
    yield
    ENVIRONMENT.clear()


def test_table_of_a_real_parent(replay: Replay, tty: None) -> None:
    manifest = replay.manifest
    result = run(manifest["parent"])
    assert result.exit_code == 0
    iot = manifest["backend"]["name"] == "iot"
    exp = manifest["expected_tasks"]
    lines = [line.rstrip() for line in result.stdout.splitlines()]
    assert lines[0].split() == [
        "#",
        "status",
        "time",
        "goal",
        "result",
        "usage",
        "child",
        "session",
        "delegation",
        "subagent",
    ]
    assert lines[1].startswith("1.1  ✓ completed  48.2s  Summarise every module in the")
    assert "  Summarised 119 modules.  " in lines[1]
    (failed,) = [line for line in lines if line.startswith("1.2  ")]
    assert failed.startswith("1.2  ✗ failed     6.5s   Describe the screenshot and audit")
    assert "  Subagent did not produce a response.  " in failed
    (running,) = [line for line in lines if line.startswith("3.1  ")]
    assert running.startswith("3.1  running      -      Watch the test suite and report")
    assert "  -      -  " in running  # no usage: no child proven
    assert f"{exp[4]['delegation_id']}" in running
    assert running.endswith(exp[4]["subagent_id"] if iot else f"{exp[4]['delegation_id']}  -")
    assert "5 tasks · 4 terminal · running (1 running, 3 completed, 1 failed)" in lines
    expected_stderr = (
        ""
        if iot
        else "warning: legacy backend (hermes-agent 0.19.x): archived rows are not visible over HTTP\n"
    )
    assert result.stderr == expected_stderr


def test_piped_output_of_a_real_parent_is_one_tab_separated_line_per_task(replay: Replay) -> None:
    manifest = replay.manifest
    exp = manifest["expected_tasks"]
    sub = [t["subagent_id"] or "" for t in exp]
    result = run(manifest["parent"])
    assert result.exit_code == 0
    no_usage = "\t" * 5  # fields 9-13: no child proven, no usage
    assert result.stdout == (
        f"1.1\tcompleted\t48.2\tSummarise every module in the repository, one line each\t\t\t\tSummarised 119 modules.{no_usage}\n"
        f"1.2\tfailed\t6.5\tDescribe the screenshot and audit the terminal output\t\t\t\tSubagent did not produce a response.{no_usage}\n"
        f"2.1\tcompleted\t8.4\tCount TODO markers under src/ and list the files\t\t{exp[2]['delegation_id']}\t{sub[2]}\tFound 3 TODO markers in 2 files.{no_usage}\n"
        f"2.2\tcompleted\t6.1\tCheck that the build passes\t\t{exp[3]['delegation_id']}\t{sub[3]}\tThe build passes.{no_usage}\n"
        f"3.1\trunning\t\tWatch the test suite and report flaky tests\t\t{exp[4]['delegation_id']}\t{sub[4]}\t{no_usage}\n"
    )  # fmt: skip
    header = run(manifest["parent"], "--header")
    assert header.stdout.splitlines()[0] == (
        "#\tstatus\ttime\tgoal\tchild_session\tdelegation\tsubagent\tresult"
        "\tinput_tokens\toutput_tokens\tcost_usd\tcost_kind\tusage_complete"
    )
    assert header.stdout.splitlines()[1:] == result.stdout.splitlines()


def test_status_filters_what_is_shown_and_exit_status_judges_every_task(replay: Replay) -> None:
    manifest = replay.manifest
    failed = run(manifest["parent"], "--status", "failed", "--status", "TIMEOUT", "--json")
    assert failed.exit_code == 0
    data = doc(failed)
    assert [t["number"] for t in data["tasks"]] == ["1.2"]
    assert data["summary"] == {"total": 5, "terminal": 4, "state": "running", "usage": None}
    lines = run(manifest["parent"], "--status", "running", "--status", "completed").stdout.splitlines()
    assert [line.split("\t")[0] for line in lines] == ["1.1", "2.1", "2.2", "3.1"]
    assert run(manifest["parent"], "--exit-status").exit_code == 8  # one failed, though one still runs
    bad = run(manifest["parent"], "--status", "done")
    assert bad.exit_code == 2


def test_a_status_filter_that_matches_nothing_says_so_with_the_count(replay: Replay) -> None:
    """Not "no delegated tasks" while the JSON's summary counts five (issue 26)."""
    parent = replay.manifest["parent"]
    piped = run(parent, "--status", "cancelled", "--status", "error")
    assert piped.exit_code == 0
    assert piped.stdout == ""
    assert piped.stderr.splitlines()[0] == "no task matches --status cancelled, error (5 tasks in all)"
    ENVIRONMENT.append(Environment(isatty=lambda stream: True))
    try:
        table = run(parent, "--status", "cancelled")
    finally:
        ENVIRONMENT.pop()
    assert table.exit_code == 0
    assert table.stdout.splitlines()[0] == "no task matches --status cancelled (5 tasks in all)"
    assert doc(run(parent, "--status", "cancelled", "--json"))["summary"]["total"] == 5


def test_unknown_parent_is_not_found(replay: Replay) -> None:
    unknown = replay.by_name["detail:unknown"]["path"].rsplit("/", 1)[-1]
    result = run(unknown, "--json")
    assert result.exit_code == 4
    data = doc(result)
    assert data["kind"] == "error"
    assert data["error"]["code"] == "not_found"
    assert data["error"]["retryable"] is True
    assert data["rows"] == []
    assert result.stderr.startswith("error: session not found")


# -- fabricated transcripts (current contract) --------------------------------------------------


def _results(*entries: tuple[str, str | None]) -> dict[str, Any]:
    return {"results": [{"task_index": i, "status": status, "summary": "done", **({"child_session_id": ref} if ref else {})}
                        for i, (status, ref) in enumerate(entries)]}  # fmt: skip


def _tree(fake: Conversations) -> None:
    fake.session(P)
    fake.add(P, "user", "Audit the repository.")
    fake.spawn(P, "call_p", ["Audit module A", "Audit module B", "Audit module C"],
               _results(("completed", CHILD_A), ("failed", MISSING), ("completed", CHILD_B)))  # fmt: skip
    fake.session(CHILD_A, parent=P)
    fake.add(CHILD_A, "user", "Audit module A")
    fake.spawn(
        CHILD_A,
        "call_a",
        ["Read a.py", "Read the tests of a.py"],
        _results(("completed", GRANDCHILD), ("timeout", None)),
    )
    fake.add(CHILD_A, "assistant", "Module A audited.")
    fake.session(GRANDCHILD, parent=CHILD_A)
    fake.add(GRANDCHILD, "user", "Read a.py")
    fake.spawn(GRANDCHILD, "call_g", ["Loop back"], _results(("completed", P)))
    fake.session(CHILD_B, parent=P)  # an empty history: no children, no gap


def _entry(call_id: str, goal: str, index: int, status: str, ref: str | None, **extra: Any) -> dict[str, Any]:
    return {"call_id": call_id, "goal": goal, "task_index": index, "delegation_id": None, "subagent_id": None,
            "child_session_id": ref, "status": status, "terminal": status not in ("running", "unknown"),
            "unavailable_reason": None if ref else "no_durable_child_reference", "children": [], "gap": None,
            "call_number": 1, "number": f"1.{index + 1}", **NO_RESULT, "summary": "done", "child_ref_source": "transcript" if ref else None,
            "result_source": "parent", "child_state": None, "delivery_state": None, "usage": None,
            "usage_with_children": None, **extra}  # fmt: skip


def _usage(segments: int = 1, missing: tuple[str, ...] = ("figures", "cost")) -> dict[str, Any]:
    """The usage of children whose details carry no figures (this suite's fake backend)."""
    return {"input_tokens": None, "output_tokens": None, "cache_read_tokens": None, "cache_write_tokens": None,
            "reasoning_tokens": None, "api_calls": None, "cost_usd": None, "cost_kind": None, "complete": False,
            "segments": segments, "missing": list(missing)}  # fmt: skip


def test_recursive_tree_nests_each_conversation_once_with_a_gap_at_its_parent(fake: Conversations) -> None:
    _tree(fake)
    result = run(P, "--recursive", "--json")
    assert result.exit_code == 0
    assert result.stderr == ""
    # A child's usage comes from its own read; a task whose child is not read has none.
    partial = ("figures", "cost", "tasks")
    grandchild = _entry("call_a", "Read a.py", 0, "completed", GRANDCHILD, usage=_usage(),
                        usage_with_children=_usage(1, partial),
                        children=[_entry("call_g", "Loop back", 0, "completed", P)])  # fmt: skip
    assert doc(result) == {
        "schema_version": 1,
        "kind": "tasks",
        "parent_id": P,
        "tasks": [
            _entry("call_p", "Audit module A", 0, "completed", CHILD_A, usage=_usage(),
                   usage_with_children=_usage(2, partial),
                   children=[grandchild, _entry("call_a", "Read the tests of a.py", 1, "timeout", None)]),
            _entry("call_p", "Audit module B", 1, "failed", MISSING, gap="not_found"),
            _entry("call_p", "Audit module C", 2, "completed", CHILD_B, usage=_usage(), usage_with_children=_usage()),
        ],
        "summary": {"total": 6, "terminal": 6, "state": "finished", "usage": _usage(3, partial)},
        "warnings": [],
    }  # fmt: skip
    details = [p for p in fake.paths_asked() if not p.endswith("/messages")]
    assert details.count(f"/api/sessions/{P}") == 2  # the parent is never read again (cycle)
    assert f"/api/sessions/{MISSING}" in details


def test_without_recursive_no_childs_rows_are_read_only_its_details_for_usage(fake: Conversations) -> None:
    _tree(fake)
    result = run(P, "--json")
    assert result.exit_code == 0
    data = doc(result)
    assert [(t["child_session_id"], t["children"], t["usage"]) for t in data["tasks"]] == [
        (CHILD_A, [], _usage()),
        (MISSING, [], None),  # not found: no child proven, no usage
        (CHILD_B, [], _usage()),
    ]
    assert data["summary"]["usage"] == _usage(2, ("figures", "cost", "tasks"))
    # Each child's lineage is proven from its details (one each here: none ended by
    # compression); no child's messages are read, and nothing is read twice. The children
    # are read side by side (reading/api.py): in no fixed order.
    asked = fake.paths_asked()
    assert sorted(p for p in asked if not p.startswith(f"/api/sessions/{P}")) == sorted([
        f"/api/sessions/{CHILD_A}",
        f"/api/sessions/{MISSING}",
        f"/api/sessions/{CHILD_B}",
    ])  # fmt: skip


def test_recursive_table_shows_nesting_gaps_and_how_to_open_a_task(fake: Conversations, tty: None) -> None:
    _tree(fake)
    result = run(P, "--recursive")
    assert result.exit_code == 0
    assert result.stderr == ""
    lines = [line.rstrip() for line in result.stdout.splitlines()]
    goal = "{:<50}"
    assert lines[:9] == [
        "#          status       time  " + goal.format("goal") + "result  usage    child session           delegation  subagent",
        "1.1        ✓ completed  -     " + goal.format("Audit module A") + f"done    ≥?/? $?  {CHILD_A}  -           -",
        "  ↳ 1.1    ✓ completed  -     " + goal.format("Read a.py") + f"done    ≥?/? $?  {GRANDCHILD}  -           -",
        "    ↳ 1.1  ✓ completed  -     " + goal.format("Loop back") + f"done    -        {P}  -           -",
        "  ↳ 1.2    ⧗ timed out  -     " + goal.format("Read the tests of a.py") + "done    -        -                       -           -",
        "1.2        ✗ failed     -     " + goal.format("Audit module B") + f"done    -        {MISSING}  -           -",
        "           gap                ↳ child not read: session not found (it may not",
        "                              be flushed yet)",
        "1.3        ✓ completed  -     " + goal.format("Audit module C") + f"done    ≥?/? $?  {CHILD_B}  -           -",
    ]  # fmt: skip
    # Each row its own task's usage (its nested tasks have rows of their own); the total under it.
    assert lines[9] == "6 tasks · 6 terminal · finished (4 completed, 1 failed, 1 timeout) · usage ≥?/? $?"
    assert " ".join(lines[10:]) == (
        'child session "-": the backend persisted no child session id for this task and the local store proposed '
        "none that the dashboard confirmed "
        "open a task with a child session: hermes-task show CHILD_SESSION (or follow)"
    )
    ENVIRONMENT.clear()
    piped = run(P, "--recursive", "--header", "--status", "timeout").stdout.splitlines()
    assert piped == [
        "#\tstatus\ttime\tgoal\tchild_session\tdelegation\tsubagent\tresult\tinput_tokens\toutput_tokens"
        "\tcost_usd\tcost_kind\tusage_complete",
        f"1.1\tcompleted\t\tAudit module A\t{CHILD_A}\t\t\tdone\t\t\t\t\tfalse",
        "1.1/1.2\ttimeout\t\tRead the tests of a.py\t\t\t\tdone\t\t\t\t\t",
    ]


def test_a_child_that_names_another_parent_is_an_identity_gap(fake: Conversations) -> None:
    fake.session(P)
    fake.spawn(P, "call_p", ["Audit module A"], _results(("completed", CHILD_A)))
    fake.session(CHILD_A, parent="20261130_165959_ffffff")
    fake.spawn(CHILD_A, "call_a", ["Read a.py"], _results(("completed", None)))
    result = run(P, "--recursive", "--json")
    assert result.exit_code == 0
    (task,) = doc(result)["tasks"]
    assert (task["gap"], task["children"]) == ("identity_mismatch", [])
    # Ownership first (acp-subagent-history-replay): the foreign child's detail is read, its
    # messages never are.
    assert f"/api/sessions/{CHILD_A}" in fake.paths_asked()
    assert not any(p.startswith(f"/api/sessions/{CHILD_A}/") for p in fake.paths_asked())


def _long_parent(fake: Conversations) -> None:
    fake.session(P)
    fake.spawn(
        P,
        "call_old",
        ["An early task"],
        {"status": "dispatched", "delegation_id": "deleg_0a0a0a0a", "goals": ["An early task"]},
    )
    for i in range(60):
        fake.add(P, "assistant" if i % 2 else "user", f"turn {i}")


def test_pages_bound_warns_that_the_list_may_be_incomplete(fake: Conversations) -> None:
    _long_parent(fake)
    result = run(P, "--pages", "1", "--json")
    assert result.exit_code == 0
    assert result.stderr == ""
    data = doc(result)
    assert data["tasks"] == []
    assert data["summary"] == {"total": 0, "terminal": 0, "state": "finished", "usage": None}
    assert data["warnings"] == [
        {"code": "bound_reached",
         "message": f"a proof or paging bound stopped the work early (--pages stopped after 1 page(s) of {P}; "
                    "older rows were not read, so the task list may be incomplete)"}
    ]  # fmt: skip
    human = run(P, "--pages", "1")
    assert human.exit_code == 0
    assert human.stdout == ""  # piped: zero task lines; the note is for people, on stderr
    assert human.stderr.startswith(f"no delegated tasks in {P}\nwarning: a proof or paging bound stopped")


def test_every_page_is_read_by_default(fake: Conversations) -> None:
    _long_parent(fake)
    result = run(P, "--json")
    assert result.exit_code == 0
    data = doc(result)
    assert [(t["goal"], t["status"], t["delegation_id"]) for t in data["tasks"]] == [
        ("An early task", "running", "deleg_0a0a0a0a")
    ]
    assert data["warnings"] == []
    pages = [p for p in fake.paths_asked() if p.endswith("/messages")]
    assert len(pages) == 2
    two = run(P, "--pages", "2", "--json")
    assert doc(two)["warnings"] == []
    assert len(doc(two)["tasks"]) == 1


def test_invalid_parent_id_is_a_usage_error_without_a_request(fake: Conversations) -> None:
    result = run("..", "--json")
    assert result.exit_code == 2
    assert doc(result)["error"]["code"] == "invalid_id"
    assert result.stderr.startswith("error: invalid id: PARENT_ID may not be '.' or '..'")
    assert fake.paths_asked() == []


def test_pages_must_be_positive() -> None:
    result = run(P, "--pages", "0")
    assert result.exit_code == 2
    assert "--pages" in result.stderr


def test_rejected_credentials_exit_3(fake: Conversations) -> None:
    fake.session(P)
    fake.status = 401
    result = run(P, "--json")
    assert result.exit_code == 3
    assert doc(result)["error"]["code"] == "auth_rejected"
    assert TOKEN not in result.stdout + result.stderr


def test_a_server_error_on_the_parent_exits_7(fake: Conversations) -> None:
    fake.session(P)
    fake.status = 500
    result = run(P)
    assert result.exit_code == 7
    assert result.stdout == ""
    assert result.stderr.startswith("error: the dashboard failed with a server error: HTTP 500")


def test_hostile_goals_are_sanitised_in_the_table(fake: Conversations) -> None:
    fake.session(P)
    fake.spawn(P, "call_p", ["Evil \x1b]52;c;ZXZpbA==\x07 goal \u202e"], _results(("completed", None)))
    result = run(P)
    assert result.exit_code == 0
    assert "\x1b" not in result.stdout
    assert "\u202e" not in result.stdout
    assert "Evil ^[]52;c;ZXZpbA==^G goal <U+202E>" in result.stdout
    data = doc(run(P, "--json"))
    assert data["tasks"][0]["goal"] == "Evil \x1b]52;c;ZXZpbA==\x07 goal \u202e"


def test_a_rotated_parent_chat_discloses_segments_it_cannot_read(replay: Replay) -> None:
    plain = replay.manifest["plain"]
    result = run(plain["root"], "--json")
    assert result.exit_code == 0
    data = doc(result)
    assert data["tasks"] == []
    legacy = replay.manifest["backend"]["contract"] == "legacy"
    # 0.19.0 answers the root with the tip's rows only; iot merges the whole lineage.
    assert [w["code"] for w in data["warnings"]] == (
        ["legacy_backend", "partial_ancestors"] if legacy else []
    )


def test_paging_that_stops_making_progress_ends_with_a_warning(fake: Conversations) -> None:
    fake.session(P)
    for i in range(600):
        fake.add(P, "assistant" if i % 2 else "user", f"turn {i}")
    fake.stuck = True
    result = run(P, "--json")
    assert result.exit_code == 0
    assert doc(result)["warnings"] == [
        {"code": "bound_reached",
         "message": f"a proof or paging bound stopped the work early (older pages of {P} stopped returning new "
                    "rows after 5 page(s); the task list may be incomplete)"}
    ]  # fmt: skip
    assert len([p for p in fake.paths_asked() if p.endswith("/messages")]) == 5
