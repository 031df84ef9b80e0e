"""`hermes-task search` on the in-memory dashboard: the parent's tasks as `recover` finds them,
each child read whole (every proven segment) and searched line by line; a fixed string, a
regex, -i, -C with grep's merged groups; a task without a child, a child that is not the
parent's or cannot be read, reported and never skipped; hostile text sanitised on a
terminal and in TSV; the exit statuses 0 / 10 / 11 and the usual failure codes."""

from __future__ import annotations

import itertools
import json
import re
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import Result

from hermes_task.cli.options import Environment
from hermes_task.core.documents import Row, TaskEntry, ToolCall, WarningItem
from hermes_task.core.projection import Hit, blocks, compile_pattern, groups, search_row
from hermes_task.core.ui_strings import WarningCode
from hermes_task.failures import ExitStatus, Interrupted
from hermes_task.reading import tasktree
from hermes_task.reading.hints import StoreHints
from hermes_task.reading.stream import PagingOutcome
from hermes_task.reading.task_search import Query, Tally, TaskSearch, search_parent
from hermes_task.render.rows import when
from tests.support.cli_runner import invoke
from tests.support.conversations import Conversations
from tests.support.dashboard import ROUTES
from tests.unit.conftest import SCHEMA
from tests.unit.test_recover_cli import _results
from tests.unit.test_schemas import validator

P = "20261201_120000_a2a2a2"
A = "20261201_120001_b2b2b2"
B = "20261201_120002_c2c2c2"
TIP = "20261201_120003_d2d2d2"
OTHER = "20261201_115000_e2e2e2"
MISSING = "20261201_120004_f2f2f2"
T0 = 1796056440.0
STAMP = "2026-11-30 16:34:00Z"  # T0 with --utc
LEGACY = WarningCode.legacy_backend.text


@pytest.fixture
def conversations() -> Conversations:
    # Differs from conftest's: every route served; latest-descendant knows no hint (iot's children).
    return Conversations(serves=ROUTES, hints=False)


def run(*args: str, tty: bool = False, env: dict[str, str | None] | None = None) -> Result:
    environment = Environment(isatty=lambda stream: True) if tty else None
    return invoke("search", *args, env=env, environment=environment)


def events(result: Result) -> list[dict[str, Any]]:
    """The NDJSON lines of a --json run, each validated by the committed schema."""
    check = validator("search")
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    for event in lines:
        check.validate(event)
    return lines


def parent(fake: Conversations, *tasks: tuple[str, str, str | None]) -> None:
    """P delegating one synchronous call: (goal, status, child id named by its result)."""
    fake.session(P)
    fake.add(P, "user", "Audit the repository.", timestamp=T0)
    fake.spawn(P, "call_p", [t[0] for t in tasks], _results(*((t[1], t[2]) for t in tasks)))


def child(fake: Conversations, sid: str, goal: str, *rows: tuple[str, str], parent_id: str = P) -> None:
    fake.session(sid, parent=parent_id)
    fake.add(sid, "user", goal, timestamp=T0)
    for role, text in rows:
        if role == "tool":
            fake.add(sid, "tool", text, tool_call_id="call_t", tool_name="terminal", timestamp=T0)
        else:
            fake.add(sid, role, text, timestamp=T0)


def two_children(fake: Conversations) -> None:
    parent(fake, ("Audit A", "completed", A), ("Audit B", "completed", B))
    child(
        fake,
        A,
        "Audit A",
        ("assistant", "one\ntwo TODO here\nthree\nfour\nfive todo\nsix"),
        ("tool", json.dumps({"output": "src/a.py:3: TODO (a.b)\nsrc/axb.py: fine", "exit_code": 1})),
    )
    child(fake, B, "Audit B", ("assistant", "Nothing to report."))


def tsv(result: Result) -> list[list[str]]:
    return [line.split("\t") for line in result.stdout.splitlines()]


def head(number: str, child_id: str, row: int, role: str, field: str) -> list[str]:
    return [number, child_id, child_id, str(row), role, STAMP, field]


# -- what is matched ----------------------------------------------------------------------------


def test_a_fixed_string_matches_literally_line_by_line(fake: Conversations) -> None:
    two_children(fake)
    result = run("(a.b)", P, "--utc")
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    # `.` is literal: `src/axb.py` does not match; the tool output is searched as it reads
    assert tsv(result) == [[*head("1.1", A, 6, "tool", "output"), "1", ":", "src/a.py:3: TODO (a.b)"]]


def test_a_regex_and_ignore_case(fake: Conversations) -> None:
    two_children(fake)
    exact = run("^(two|five) TODO", P, "--regex", "--utc")
    assert [(r[7], r[8], r[9]) for r in tsv(exact)] == [("2", ":", "two TODO here")]  # case matters
    folded = run("^(two|five) TODO", P, "--regex", "-i", "--utc")
    assert folded.exit_code == 0, folded.output
    assert [(r[7], r[8], r[9]) for r in tsv(folded)] == [("2", ":", "two TODO here"), ("5", ":", "five todo")]
    dotted = run("src/a.b", P, "--regex", "--utc")  # `.` is any character here
    assert [r[9] for r in tsv(dotted)] == ["src/axb.py: fine"]


def test_context_lines_are_marked_and_groups_merge_like_grep(fake: Conversations) -> None:
    two_children(fake)
    result = run("todo", P, "-i", "-C", "1", "--utc")
    assert result.exit_code == 0, result.output
    assert [(r[3], r[6], r[7], r[8], r[9]) for r in tsv(result)] == [
        ("5", "text", "1", "-", "one"),
        ("5", "text", "2", ":", "two TODO here"),
        ("5", "text", "3", "-", "three"),
        ("5", "text", "4", "-", "four"),  # the contexts of lines 2 and 5 touch: one group
        ("5", "text", "5", ":", "five todo"),
        ("5", "text", "6", "-", "six"),
        ("6", "output", "1", ":", "src/a.py:3: TODO (a.b)"),
        ("6", "output", "2", "-", "src/axb.py: fine"),  # context never crosses into another block
    ]
    doc = events(run("todo", P, "-i", "-C", "1", "--json"))
    matches = [(e["line_number"], e["before"], e["after"], e["spans"]) for e in doc if e["type"] == "match"]
    assert matches == [
        (2, ["one"], ["three"], [[4, 8]]),
        (5, ["four"], ["six"], [[5, 9]]),
        (1, [], ["src/axb.py: fine"], [[12, 16]]),
    ]


def test_tool_status_steer_commentary_and_call_arguments_are_searched(fake: Conversations) -> None:
    parent(fake, ("Audit A", "completed", A))
    child(fake, A, "Audit A")
    steer = "\n\n[OUT-OF-BAND USER MESSAGE — from the user]\nskip the NEEDLE dir\n[/OUT-OF-BAND USER MESSAGE]"
    fake.add(A, "tool", json.dumps({"output": "ok", "error": "NEEDLE failed"}) + steer, tool_call_id="c",
             tool_name="terminal", timestamp=T0)  # fmt: skip
    call = {
        "id": "call_9",
        "type": "function",
        "function": {"name": "terminal", "arguments": '{"cmd": "NEEDLE"}'},
    }
    fake.add(
        A, "assistant", "", tool_calls=[call], display_commentary="Looking for the NEEDLE.", timestamp=T0
    )
    fake.add(A, "assistant", "no match here", reasoning="the NEEDLE is in the reasoning", timestamp=T0)
    doc = events(run("NEEDLE", P, "--json"))
    found = [(e["row_id"], e["field"], e["line"]) for e in doc if e["type"] == "match"]
    assert found == [
        (5, "status", "error: NEEDLE failed"),
        (5, "steer", "skip the NEEDLE dir"),
        (6, "commentary", "Looking for the NEEDLE."),
        (6, "arguments", '{"cmd": "NEEDLE"}'),
    ]
    with_reasoning = events(run("NEEDLE", P, "--json", "--reasoning"))
    assert [(e["row_id"], e["field"]) for e in with_reasoning if e["type"] == "match"][-1] == (7, "reasoning")
    shown = run("NEEDLE", P, "--reasoning", "--utc", tty=True, env={"COLUMNS": "30"}).stdout.splitlines()
    assert shown[0] == f"1.1  {A}  Audit A"  # ids are never cut, nor a goal that short
    assert [line for line in shown if line.startswith("  ") and not line.startswith("    ")] == [
        "  status",
        "  steer",
        "  commentary",
        "  arguments of call terminal (call_9)",
        "  reasoning",
    ]


def test_the_blocks_of_a_row() -> None:
    """A tool result's output, status and steers; commentary notes and call arguments by
    `part`; a call without recorded arguments and an empty output are no block."""
    tool = Row(id=1, session_id="s", role="tool", text=json.dumps({"exit_code": 2}))
    assert [(b.field, b.part, b.text) for b in blocks(tool)] == [("status", 0, "exit 2")]
    plain = Row(id=2, session_id="s", role="tool", text=json.dumps({"output": "done"}))
    assert [(b.field, b.text) for b in blocks(plain)] == [("output", "done")]
    calls = [ToolCall(id="a", name="x", arguments=None), ToolCall(id="b", name="y", arguments="{}")]
    said = Row(id=3, session_id="s", role="assistant", text=None, commentary=["one", "two"], tool_calls=calls)
    assert [(b.field, b.part, b.text) for b in blocks(said)] == [
        ("commentary", 0, "one"),
        ("commentary", 1, "two"),
        ("arguments", 1, "{}"),
    ]


# -- every task accounted for -------------------------------------------------------------------


def test_tasks_without_a_child_or_not_the_parents_or_unreadable_are_reported(fake: Conversations) -> None:
    parent(
        fake,
        ("Audit A", "completed", A),
        ("Audit B", "completed", None),
        ("Audit C", "failed", OTHER),
        ("Audit D", "failed", MISSING),
    )
    child(fake, A, "Audit A", ("assistant", "all clear"))
    child(fake, OTHER, "Audit C", ("assistant", "NOT THIS PARENT'S ROW"), parent_id="20261201_110000_999999")
    result = run("NOT THIS", P)
    assert result.exit_code == 11, result.output  # no match, but not every task was searched
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        "warning: task 1.2 not searched: the backend persisted no child session id for this task and "
        "the local store proposed none that the dashboard confirmed",
        f"warning: task 1.3 not searched: not a child of this parent: {OTHER} names another session as its parent",
        f"warning: task 1.4 not searched: session not found: {MISSING} (GET /api/sessions/{MISSING})",
    ]
    # ownership first: the foreign child's detail was read, never its messages
    assert not any(p.startswith(f"/api/sessions/{OTHER}/") for p in fake.paths_asked())
    doc = events(run("clear", P, "--json"))
    tasks = [(e["number"], e["searched"], e["code"], e["segments"], e["rows"], e["matches"])
             for e in doc if e["type"] == "task"]  # fmt: skip
    assert tasks == [
        ("1.1", "whole", None, [A], 2, 1),
        ("1.2", "no", "no_durable_child_reference", [], 0, 0),
        ("1.3", "no", "identity_mismatch", [], 0, 0),
        ("1.4", "no", "not_found", [], 0, 0),
    ]
    assert doc[-1] == {
        "type": "result",
        "tasks": 4,
        "searched": 1,
        "matches": 1,
        "complete": False,
        "exit_code": 0,
    }


def test_a_child_failing_part_way_is_searched_in_part(fake: Conversations) -> None:
    parent(fake, ("Audit A", "completed", A))
    child(fake, A, "Audit A", *[("assistant", f"row {i}") for i in range(60)])
    pages: list[int] = []

    def older_pages_fail(call: Any) -> httpx.Response | None:
        if call.sid == A and call.kind == "messages":
            pages.append(1)
            return httpx.Response(503) if len(pages) > 1 else None
        return None

    fake.before.append(older_pages_fail)
    result = run("row 5", P, "--json")
    doc = events(result)
    assert result.exit_code == 0
    # the newest 50 rows were read (rows 11..59), the older page failed
    assert [e["line"] for e in doc if e["type"] == "match"] == [f"row {i}" for i in range(50, 60)]
    (task,) = [e for e in doc if e["type"] == "task"]
    assert (task["searched"], task["code"], task["rows"]) == ("partial", "server_error", 50)
    assert doc[-1]["complete"] is False
    pages.clear()
    text = run("nowhere", P)
    assert text.exit_code == 11
    assert text.stderr.startswith(
        "warning: task 1.1 searched in part: the dashboard failed with a server error"
    )


def test_nothing_matched_in_a_whole_search_exits_10_and_an_empty_parent_too(fake: Conversations) -> None:
    two_children(fake)
    result = run("absent", P, "--json")
    assert result.exit_code == 10
    assert result.stderr == ""
    assert events(result)[-1] == {"type": "result", "tasks": 2, "searched": 2, "matches": 0, "complete": True,
                                  "exit_code": 10}  # fmt: skip
    empty = "20261201_120009_abcdef"
    fake.session(empty)
    fake.add(empty, "user", "hello")
    alone = run("hello", empty)
    assert (alone.exit_code, alone.stdout, alone.stderr) == (10, "", f"no delegated tasks in {empty}\n")


def test_a_backend_that_hides_archived_rows_cannot_prove_an_absence(fake: Conversations) -> None:
    fake.contract = "legacy"  # 0.19.x: order ignored, archived rows never served
    two_children(fake)
    result = run("absent", P, "--json")
    assert result.exit_code == 11
    doc = events(result)
    assert [e["code"] for e in doc if e["type"] == "warning"] == ["legacy_backend"]  # once, not per task
    assert [e["searched"] for e in doc if e["type"] == "task"] == ["whole", "whole"]
    assert doc[-1]["complete"] is False
    text = run("absent", P)
    assert text.stderr == f"warning: {LEGACY}\n"
    assert run("absent", P, "--quiet").stderr == ""  # a warning about the setup, every run


def test_a_child_ended_by_compression_without_a_proven_continuation_is_searched_in_part(
    fake: Conversations,
) -> None:
    parent(fake, ("Audit A", "completed", A))
    child(fake, A, "Audit A", ("assistant", "Compressing now."))
    fake.details[A].update(ended_at=T0 + 1, end_reason="compression")  # its newer segment is unknown
    doc = events(run("Compressing", P, "--json"))
    ref = {"number": "1.1", "child_session_id": A}
    assert [(e["code"], e["task"]) for e in doc if e["type"] == "warning"] == [("partial_history", ref)]
    (task,) = [e for e in doc if e["type"] == "task"]
    assert (task["searched"], task["code"], task["matches"]) == ("partial", "partial_history", 1)
    assert (doc[-1]["complete"], doc[-1]["exit_code"]) == (False, 0)
    text = run("absent", P)
    assert text.exit_code == 11
    # said once, naming the task: the warning already says why it was searched in part
    assert text.stderr == f"warning: task 1.1: {WarningCode.partial_history.text}\n"


def test_a_rotated_childs_later_segment_is_searched_and_named(
    fake: Conversations, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store proposes the child and its continuation; the text exists only in the tip."""
    fake.session(P)
    args = json.dumps({"tasks": [{"goal": "Rotate me"}]})
    call = {"id": "call_1", "type": "function", "function": {"name": "delegate_task", "arguments": args}}
    fake.add(P, "assistant", "", tool_calls=[call], timestamp=100.0)
    fake.add(P, "tool", json.dumps({"status": "dispatched", "delegation_id": "deleg_1a2b3c4d", "goals": ["Rotate me"]}),
             tool_call_id="call_1", tool_name="delegate_task", timestamp=100.0)  # fmt: skip
    fake.session(A, parent=P)
    fake.details[A].update(started_at=100.5, ended_at=101.0, end_reason="compression")
    fake.add(A, "user", "Rotate me", timestamp=100.5)
    fake.add(A, "assistant", "Working on it.", timestamp=100.6)
    continuation = {k: v for k, v in fake.details[A].items() if k != "id"}
    fake.put(TIP, **{**continuation, "parent_session_id": A, "started_at": 100.9, "ended_at": 102.0,
                     "end_reason": "agent_close"})  # fmt: skip
    fake.add(TIP, "assistant", "FINAL ANSWER: 3 TODO markers", timestamp=101.5)
    path = tmp_path / "state.db"
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA)
    config = json.dumps({"max_iterations": 90, "_delegate_from": P})
    for sid, parent_id, started in ((A, P, 100.5), (TIP, A, 100.9)):
        conn.execute(
            "INSERT INTO sessions (id, source, parent_session_id, model_config, started_at) VALUES (?,?,?,?,?)",
            (sid, "subagent", parent_id, config, started),
        )
    conn.execute("INSERT INTO messages (session_id, role, content, timestamp) VALUES (?,?,?,?)",
                 (A, "user", "Rotate me", 100.5))  # fmt: skip
    conn.commit()
    conn.close()
    monkeypatch.setenv("HERMES_TASK_STORE", str(path))
    doc = events(run("TODO markers", P, "--json"))
    (match,) = [e for e in doc if e["type"] == "match"]
    assert (match["task"], match["session_id"], match["line"]) == (
        {"number": "1.1", "child_session_id": A},
        TIP,
        "FINAL ANSWER: 3 TODO markers",
    )
    (task,) = [e for e in doc if e["type"] == "task"]
    assert (task["searched"], task["segments"], task["rows"]) == ("whole", [A, TIP], 3)
    assert doc[-1]["exit_code"] == 0
    shown = run("TODO markers", P, "--utc", tty=True)
    assert shown.stdout.splitlines()[:2] == [
        f"1.1  {A}  Rotate me",
        f"▌ assistant  #5  1970-01-01 00:01:41Z  segment {TIP}",
    ]


def test_a_long_child_is_read_back_to_its_first_row(fake: Conversations) -> None:
    """Every page, as `older --all`: the newest 50 rows, then pages of 500 back to the goal."""
    parent(fake, ("NEEDLE in the goal", "completed", A))
    child(fake, A, "NEEDLE in the goal", *[("assistant", f"row {i}") for i in range(700)])
    doc = events(run("NEEDLE", P, "--json"))
    assert [(e["row_id"], e["line"]) for e in doc if e["type"] == "match"] == [(4, "NEEDLE in the goal")]
    (task,) = [e for e in doc if e["type"] == "task"]
    assert (task["searched"], task["rows"]) == ("whole", 701)
    limits = [c.params.get("limit") for c in fake.log if c.sid == A and c.kind == "messages"]
    assert limits == ["50", "500", "500"]
    heading = run("NEEDLE", P, tty=True, env={"COLUMNS": "40"}).stdout.splitlines()[0]
    assert heading == f"1.1  {A}  NEEDLE in…"  # the goal is cut to the width left


def test_whole_is_never_claimed_while_older_rows_remain(
    fake: Conversations, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever stopped the paging, warning or not: older rows left means searched in part."""
    parent(fake, ("Audit A", "completed", A))
    child(fake, A, "Audit A", *[("assistant", f"row {i}") for i in range(60)])
    monkeypatch.setattr(tasktree, "read_batches", lambda reader, plan: PagingOutcome(stop="start"))
    doc = events(run("row", P, "--json"))
    (task,) = [e for e in doc if e["type"] == "task"]
    assert (task["searched"], task["code"], task["rows"]) == ("partial", "bound_reached", 50)
    assert doc[-1]["complete"] is False


def test_children_are_read_up_to_the_task_bound_and_the_rest_reported(fake: Conversations) -> None:
    parent(fake, ("Audit A", "completed", A), ("Audit B", "completed", B))
    child(fake, A, "Audit A", ("assistant", "found it"))
    child(fake, B, "Audit B", ("assistant", "found it"))
    seen: list[TaskSearch] = []

    class Recorder:
        def hits(self, task: TaskEntry, hits: Sequence[Hit]) -> None:
            pass

        def warning(self, item: WarningItem, task: TaskEntry | None) -> None:
            pass

        def task(self, outcome: TaskSearch) -> None:
            seen.append(outcome)

    query = Query(pattern=compile_pattern("found", regex=False, ignore_case=False))
    tally = search_parent(
        fake.client(), P, StoreHints(None, "disabled"), query, Recorder(), Tally(), max_tasks=1
    )
    assert [(s.searched, s.code) for s in seen] == [("whole", None), ("no", "bound_reached")]
    assert seen[1].message == "at most 1 children are read in one search"
    assert (tally.tasks, tally.searched, tally.matches, tally.complete) == (2, 1, 1, False)
    assert not any(c.sid == B for c in fake.log)


# -- output -------------------------------------------------------------------------------------


def test_json_events_are_exactly_these(fake: Conversations) -> None:
    two_children(fake)
    result = run("TODO", P, "--json")
    assert result.exit_code == 0
    assert result.stderr == ""
    doc = events(result)
    ref = {"number": "1.1", "child_session_id": A}
    assert doc == [
        {"type": "match", "task": ref, "session_id": A, "row_id": 5, "role": "assistant", "kind": None,
         "timestamp": T0, "field": "text", "part": 0, "line_number": 2, "line": "two TODO here",
         "spans": [[4, 8]], "before": [], "after": []},
        {"type": "match", "task": ref, "session_id": A, "row_id": 6, "role": "tool", "kind": None,
         "timestamp": T0, "field": "output", "part": 0, "line_number": 1, "line": "src/a.py:3: TODO (a.b)",
         "spans": [[12, 16]], "before": [], "after": []},
        {"type": "task", "number": "1.1", "goal": "Audit A", "status": "completed", "child_session_id": A,
         "searched": "whole", "code": None, "message": None, "segments": [A], "rows": 3, "matches": 2},
        {"type": "task", "number": "1.2", "goal": "Audit B", "status": "completed", "child_session_id": B,
         "searched": "whole", "code": None, "message": None, "segments": [B], "rows": 2, "matches": 0},
        {"type": "result", "tasks": 2, "searched": 2, "matches": 2, "complete": True, "exit_code": 0},
    ]  # fmt: skip


def test_the_terminal_layout(fake: Conversations) -> None:
    two_children(fake)
    fake.add(B, "assistant", "x" * 400 + " TODO " + "y" * 400, timestamp=T0)
    result = run("TODO", P, "-C", "1", "--utc", tty=True)
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [
        f"1.1  {A}  Audit A",
        f"▌ assistant  #5  {STAMP}",
        "  text",
        "    1- one",
        "    2: two TODO here",
        "    3- three",
        f"▌ tool terminal (call_t)  #6  {STAMP}",
        "  output",
        "    1: src/a.py:3: TODO (a.b)",
        "    2- src/axb.py: fine",
        "",
        f"1.2  {B}  Audit B",
        f"▌ assistant  #9  {STAMP}",
        "  text",
        "    1: …" + "x" * 99 + " TODO " + "y" * 195 + "…",  # a long line: around its match
    ]
    assert result.stderr == "3 matching lines in 2 tasks · 2 of 2 tasks searched whole\n"
    none = run("absent", P, tty=True)
    assert (none.exit_code, none.stdout) == (10, "")
    assert none.stderr == "no match · 2 of 2 tasks searched whole\n"
    fake.missing.add(B)  # a child gone: not everything could be read
    unproven = run("absent", P, tty=True)
    assert unproven.exit_code == 11
    assert unproven.stderr.splitlines()[-1] == (
        "no match · 1 of 2 tasks searched whole · the absence is not proven: not every transcript "
        "was searched whole"
    )


def test_hostile_text_is_sanitised_on_a_terminal_and_in_tsv(fake: Conversations) -> None:
    hostile = "NEEDLE\x1b]52;c;ZXZpbA==\x07 \x1b[2J\tcol\\umn\r\u202eevil\x9b31m"
    parent(fake, ("Audit \x1b[31mA\ttab", "completed", A))
    child(fake, A, "Audit A", ("assistant", hostile))
    piped = run("NEEDLE", P, "--utc")
    assert piped.exit_code == 0
    (line,) = piped.stdout.splitlines()
    fields = line.split("\t")
    assert len(fields) == 10  # the tab in the text cannot add a field
    assert fields[9] == "NEEDLE^[]52;c;ZXZpbA==^G ^[[2J\\tcol\\\\umn\\r<U+202E>evil<U+009B>31m"
    coloured = run("NEEDLE", P, tty=True, env={"NO_COLOR": None, "FORCE_COLOR": "1"}).stdout
    for out in (piped.stdout, run("NEEDLE", P, tty=True).stdout, coloured):
        bare = re.sub("\x1b\\[[0-9;]*m", "", out)  # our own SGR codes (colour on)
        assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202e]", bare), out
    painted = run("NEEDLE", P, tty=True).stdout
    assert painted.splitlines()[0] == f"1.1  {A}  Audit ^[[31mA tab"
    assert "    1: NEEDLE^[]52;c;ZXZpbA==^G ^[[2J\tcol\\umn^M<U+202E>evil<U+009B>31m" in painted.splitlines()
    assert "\x1b[1;31mNEEDLE\x1b[0m^[]52;c;" in coloured  # our SGR only around the match
    assert run("NEEDLE", P, "--json").stdout.isascii()


def test_a_bad_regex_is_a_one_line_usage_error_before_any_request(fake: Conversations) -> None:
    two_children(fake)
    result = run("(unclosed", P, "--regex")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (
        "error: invalid usage: PATTERN is not a valid regular expression: missing ), unterminated subpattern "
        "at position 0\n"
    )
    assert fake.log == []
    doc = run("(unclosed", P, "--regex", "--json")
    assert doc.exit_code == 2
    assert events(doc) == [
        {"type": "error", "code": "usage", "message": result.stderr[len("error: ") : -1], "retryable": False},
        {"type": "result", "tasks": 0, "searched": 0, "matches": 0, "complete": False, "exit_code": 2},
    ]
    assert run("a\nb", P).stderr.startswith("error: invalid usage: PATTERN holds a line break")
    assert run("x", "..").exit_code == 2


def test_a_fixed_string_with_regex_characters_is_literal(fake: Conversations) -> None:
    parent(fake, ("Audit A", "completed", A))
    child(fake, A, "Audit A", ("assistant", "call f(unclosed here"))
    result = run("f(unclosed", P, "--utc")
    assert result.exit_code == 0
    assert [r[9] for r in tsv(result)] == ["call f(unclosed here"]


def test_a_parent_that_cannot_be_read_keeps_its_usual_code(fake: Conversations) -> None:
    result = run("x", MISSING)
    assert (result.exit_code, result.stdout) == (4, "")
    assert result.stderr.startswith(f"error: session not found: {MISSING}")
    doc = run("x", MISSING, "--json")
    assert doc.exit_code == 4
    lines = events(doc)
    assert [e["type"] for e in lines] == ["error", "result"]
    assert (lines[0]["code"], lines[1]["exit_code"]) == ("not_found", 4)
    fake.status = 401
    assert run("x", P).exit_code == 3


@pytest.mark.parametrize(
    ("raised", "code"),
    [(KeyboardInterrupt(), 130), (Interrupted(ExitStatus.TERMINATED, "SIGTERM"), 143)],
)
def test_an_interrupt_still_writes_the_result_with_what_was_found(
    fake: Conversations, raised: BaseException, code: int
) -> None:
    two_children(fake)

    def interrupt(call: Any) -> None:
        if call.sid == B:
            raise raised

    fake.before.append(interrupt)
    result = run("TODO", P, "--json")
    assert result.exit_code == code
    doc = events(result)
    assert [e["type"] for e in doc] == ["match", "match", "task", "result"]  # task 1.1, then the stop
    assert doc[-1] == {"type": "result", "tasks": 2, "searched": 1, "matches": 2, "complete": False,
                       "exit_code": code}  # fmt: skip
    text = run("TODO", P)
    assert (text.exit_code, text.stderr) == (code, "")


def test_groups_of_one_block_are_separated_and_tsv_takes_colour_only_when_asked(fake: Conversations) -> None:
    two_children(fake)
    result = run("todo", P, "-i", tty=True)
    assert result.stdout.splitlines()[1:6] == [
        f"▌ assistant  #5  {when(T0)}",
        "  text",
        "    2: two TODO here",
        "    --",
        "    5: five todo",
    ]
    plain = run("TODO", P, "--utc")
    coloured = run("TODO", P, "--utc", "--color", "always")
    assert coloured.stdout == plain.stdout.replace("TODO", "\x1b[1;31mTODO\x1b[0m")  # the match, in field 10


@given(
    size=st.integers(min_value=1, max_value=30),
    matched=st.sets(st.integers(min_value=0, max_value=29), min_size=1),
    context=st.integers(min_value=0, max_value=4),
)
def test_groups_print_every_line_once_in_order_within_the_context(
    size: int, matched: set[int], context: int
) -> None:
    """grep's merge: the lines printed are exactly those within `context` of a match, each once,
    in order; consecutive groups never touch; a line is marked a match exactly when it is one."""
    lines = [f"line {i}" + (" HIT" if i in matched else "") for i in range(size)]
    row = Row(id=1, session_id="s", role="assistant", text="\n".join(lines))
    hits = search_row(row, compile_pattern("HIT", regex=False, ignore_case=False), context=context)
    found = groups(hits)
    printed = [(line.number, line.text, line.spans is not None) for group in found for line in group.lines]
    wanted = sorted(
        {n for i in matched if i < size for n in range(max(0, i - context), min(size, i + context + 1))}
    )
    assert [n - 1 for n, _t, _m in printed] == wanted
    assert all(text == lines[n - 1] and hit == (n - 1 in matched) for n, text, hit in printed)
    for before, after in itertools.pairwise(found):
        assert after.lines[0].number > before.lines[-1].number + 1
