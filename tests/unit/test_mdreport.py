"""`recover --format markdown` (render/report.py, cli/recover.py) on the in-memory
dashboard: a heading per parent (and per nested conversation), the task table with whole ids,
each task's transcript in a `<details>` block (goal and final answer first, then the child's
rows, read once through the ownership gate), a task that could not be read said in its block;
`--status`, `--pages` and `--full`; hostile goals, results and rows escaped, read back by a
Markdown parser (tests/support/markdown.py)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from syrupy.assertion import SnapshotAssertion

from hermes_task.core.documents import Row, TaskEntry, ToolCall
from hermes_task.core.sanitize import clean_line
from hermes_task.core.ui_strings import TaskStatus
from hermes_task.reading import tasktree
from hermes_task.reading.tasktree import ChildReads, Unread
from hermes_task.render.report import WORD_JOINER
from hermes_task.render.rows import View, row_view
from tests.support.cli_runner import invoke
from tests.support.conversations import Conversations
from tests.support.dashboard import serving
from tests.support.hostile import markup_text, unsafe_text
from tests.support.markdown import details, fences, inert, inline_text, paragraphs_text, parse, tables
from tests.unit.test_markdown import MENTION
from tests.unit.test_recover_cli import CHILD_A, CHILD_B, GRANDCHILD, MISSING, P, _tree, run

BLOCKS = frozenset({"heading", "blockquote"})
# Served by the in-memory dashboard, which encodes its answers as UTF-8: no lone surrogate (the
# painters' own tests cover those: tests/unit/test_markdown.py).
hostile = (markup_text | unsafe_text).map(lambda text: re.sub("[\ud800-\udfff]", "?", text))
T0 = 1796056440.0


def report(*args: str) -> Any:
    result = run(*args, "--format", "markdown", "--no-store")
    tokens = parse(result.stdout)
    inert(tokens, blocks=BLOCKS)
    return result, tokens


def two_tasks(fake: Conversations, *, rows: int = 3, output_lines: int = 20) -> None:
    """P delegated two tasks: 1.1 completed by CHILD_A (a tool round and an answer), 1.2 failed
    with no known child."""
    fake.session(P)
    fake.add(P, "user", "Audit the repository.", timestamp=T0)
    fake.spawn(P, "call_p", ["Audit module A", "Audit module B"], {"results": [
        {"task_index": 0, "status": "completed", "summary": "Module A is **fine**.", "duration_seconds": 8.4,
         "tokens": {"input": 1200, "output": 90}, "child_session_id": CHILD_A},
        {"task_index": 1, "status": "failed", "error": "boom", "duration_seconds": 2.0},
    ]})  # fmt: skip
    fake.session(CHILD_A, parent=P)
    fake.add(CHILD_A, "user", "Audit module A", timestamp=T0)
    for i in range(rows):
        call = {
            "id": f"t{i}",
            "type": "function",
            "function": {"name": "terminal", "arguments": '{"cmd": "ls"}'},
        }
        fake.add(CHILD_A, "assistant", "", tool_calls=[call], timestamp=T0 + i)
        output = "\n".join(f"out {n}" for n in range(output_lines))
        fake.add(CHILD_A, "tool", output, tool_call_id=f"t{i}", tool_name="terminal", timestamp=T0 + i)
    fake.add(CHILD_A, "assistant", "Module A is fine.", timestamp=T0 + rows)


def test_the_report_of_a_parent(fake: Conversations, snapshot: SnapshotAssertion) -> None:
    two_tasks(fake, rows=1)
    result, tokens = report(P, "--quiet", "--utc")
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""  # --quiet: the store warning is in the report, not repeated
    (table,) = tables(tokens)
    assert table == [
        ["#", "status", "time", "usage", "goal", "child session"],
        # the in-memory dashboard's details carry no figures: the proven sum is unknown, the told tokens beside it
        ["1.1", "✓ completed", "8.4s", "≥?/? $? (told 1.2k/90)", "Audit module A", CHILD_A],
        ["1.2", "✗ failed", "2s", "-", "Audit module B", "-"],
    ]
    assert details(tokens) == ["1.1 ✓ completed · Audit module A", "1.2 ✗ failed · Audit module B"]
    assert fences(tokens) == ['{"cmd": "ls"}\n', "\n".join(f"out {n}" for n in range(4)) + "\n",
                              "\n".join(f"out {n}" for n in range(12, 20)) + "\n"]  # fmt: skip
    text = paragraphs_text(tokens)
    assert "Module A is **fine**." in text  # the final answer as the parent was told it, not bold
    assert "Transcript not read: the backend persisted no child session id for this task, and the local store that could propose one could not be read" in text  # fmt: skip
    assert result.stdout == snapshot


def test_each_shown_tasks_child_is_read_once_and_only_those(
    fake: Conversations, monkeypatch: pytest.MonkeyPatch
) -> None:
    two_tasks(fake)
    read: list[str] = []
    real = tasktree.read_child

    def counted(client: Any, child_id: str, *args: Any, **kwargs: Any) -> Any:
        read.append(child_id)
        return real(client, child_id, *args, **kwargs)

    monkeypatch.setattr(tasktree, "read_child", counted)
    result, tokens = report(P, "--status", "failed")
    assert result.exit_code == 0
    assert details(tokens) == ["1.2 ✗ failed · Audit module B"]
    assert [row[0] for row in tables(tokens)[0][1:]] == ["1.2"]
    assert "2 tasks · 2 terminal · finished (1 completed, 1 failed) · usage ≥?/? $?" in paragraphs_text(
        tokens
    )  # every task counted
    assert read == []  # 1.1 is not shown: its child is not read; 1.2 has none
    result, tokens = report(P)
    assert len(details(tokens)) == 2
    assert read == [CHILD_A]
    result, tokens = report(P, "--status", "running", "--status", "timeout")
    assert (details(tokens), tables(tokens), read) == ([], [], [CHILD_A])
    assert "no task matches --status running, timeout (2 tasks in all)" in paragraphs_text(tokens)


def test_pages_bounds_each_transcript_and_full_keeps_tool_output_whole(fake: Conversations) -> None:
    two_tasks(fake, rows=40, output_lines=30)
    whole, tokens = report(P)
    assert whole.exit_code == 0
    assert "… 18 lines left out (--full)" in paragraphs_text(tokens)
    assert f"Transcript: task {CHILD_A} · running · 82 rows shown" in paragraphs_text(tokens)
    _newest, tokens = report(P, "--pages", "1")
    assert f"Transcript: task {CHILD_A} · running · 50 rows shown · older rows exist: hermes-task older {CHILD_A}" in paragraphs_text(tokens)  # fmt: skip
    _full, tokens = report(P, "--pages", "1", "--full")
    assert "\n".join(f"out {n}" for n in range(30)) + "\n" in fences(tokens)
    assert not [p for p in paragraphs_text(tokens) if "left out" in p]


def test_full_needs_the_markdown_report_and_markdown_is_not_a_watch(fake: Conversations) -> None:
    two_tasks(fake)
    result = run(P, "--full")
    assert result.exit_code == 2
    assert "--full and --utc shape the Markdown report's transcripts: add --format markdown" in result.stderr
    assert run(P, "--utc").exit_code == 2
    result = run(P, "--watch", "--format", "markdown")
    assert result.exit_code == 2
    assert "markdown is a report of one read: not with --watch" in result.stderr


def test_nested_conversations_and_children_that_cannot_be_read(fake: Conversations) -> None:
    _tree(fake)
    result, tokens = report(P, "--recursive")
    assert result.exit_code == 0
    headings = [t for i, t in enumerate(tokens) if i and tokens[i - 1].type == "heading_open"]
    assert [inline_text(h) for h in headings] == [
        f"Delegated tasks of {P}",
        f"Delegated tasks of {CHILD_A} (task 1.1)",
        f"Delegated tasks of {GRANDCHILD} (task 1.1)",
    ]
    assert [t.tag for t in tokens if t.type == "heading_open"] == ["h2", "h3", "h4"]
    assert [len(table) for table in tables(tokens)] == [4, 3, 2]
    assert len(details(tokens)) == 6
    text = paragraphs_text(tokens)
    assert f"Transcript could not be read: session not found: {MISSING} (GET /api/sessions/{MISSING})" in text
    # The grandchild names P as its child: its detail names another parent, so none of P's
    # rows is read as the grandchild's task's transcript.
    assert (
        f"Transcript could not be read: not a child of this parent: {P} names another session as its parent"
        in text
    )


def test_children_past_the_bound_are_said_not_read(fake: Conversations) -> None:
    _tree(fake)
    reads = ChildReads(fake.client(), None, pages=1, max_reads=1, bound="at most {n} read")
    tasks = [
        TaskEntry(call_id="c", goal="g", task_index=i, delegation_id=None, subagent_id=None, child_session_id=sid,
                  status=TaskStatus.completed, terminal=True, unavailable_reason=None)
        for i, sid in enumerate((CHILD_A, CHILD_B, CHILD_A))
    ]  # fmt: skip
    first, second, again = (reads.read(t, frozenset({P})) for t in tasks)
    assert not isinstance(first, Unread)
    assert second == Unread("bound_reached", "at most 1 read")
    assert again is first  # read once


# -- hostile text ----------------------------------------------------------------------------------


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    goals=st.lists(hostile, min_size=2, max_size=2),
    summary=hostile,
    error=hostile,
    rows=st.lists(hostile, min_size=1, max_size=3),
)
def test_hostile_goals_results_and_rows_make_nothing_of_the_report(
    goals: list[str], summary: str, error: str, rows: list[str]
) -> None:
    dash = Conversations()
    with serving(dash.handle):
        dash.session(P)
        dash.add(P, "user", "Audit.", timestamp=T0)
        dash.spawn(P, "call_p", goals, {"results": [
            {"task_index": 0, "status": "completed", "summary": summary, "child_session_id": CHILD_A},
            {"task_index": 1, "status": "failed", "error": error, "summary": summary},
        ]})  # fmt: skip
        dash.session(CHILD_A, parent=P)
        dash.add(CHILD_A, "user", goals[0], timestamp=T0)
        for text in rows:
            dash.add(CHILD_A, "assistant", text, timestamp=T0)
            dash.add(CHILD_A, "tool", text, tool_call_id="t", tool_name=text, timestamp=T0)
        result, tokens = report(P)
        told = json.loads(run(P, "--json", "--no-store").stdout)["tasks"]  # the goals as recovered
        shown = json.loads(invoke("older", CHILD_A, "--all", "--json", "--no-store").stdout)["rows"]
    assert result.exit_code == 0, result.stderr
    (table,) = tables(tokens)
    assert len(table) == 3
    assert {len(row) for row in table} == {6}
    assert [row[4].strip() for row in table[1:]] == [
        joined(cut(t["goal"] or "(no goal recorded)")) for t in told
    ]
    assert [row[5] for row in table[1:]] == [CHILD_A, "-"]
    assert details(tokens) == [
        joined(f"{n} {label} · {cut(t['goal'] or '(no goal recorded)')}".strip())
        for n, label, t in zip(("1.1", "1.2"), ("✓ completed", "✗ failed"), told, strict=True)
    ]
    views = [
        row_view(Row(**{**r, "tool_calls": [ToolCall(**c) for c in r["tool_calls"]]}), View()) for r in shown
    ]
    blocks = [
        text.removeprefix(" ") if what == "arguments" else text
        for v in views
        for block in v.body
        for text, what in block
        if what in ("output", "arguments")
    ]
    assert fences(tokens) == [text if text.endswith("\n") else text + "\n" for text in blocks]


def joined(text: str) -> str:
    return MENTION.sub("@" + WORD_JOINER, text)


def cut(text: str) -> str:
    text = " ".join(clean_line(text).split())
    return text if len(text) <= 100 else text[:99] + "…"


def test_the_usage_cell_is_the_proven_sum_with_what_the_parent_was_told_beside_it() -> None:
    from msgspec.structs import replace

    from hermes_task.core.documents import TaskTokens
    from hermes_task.render.report import usage_text
    from tests.unit.test_table import USAGE, entry

    told = TaskTokens(input=10000, output=1200)
    assert usage_text(entry(1, usage=USAGE)) == "12.3k/1.5k ~$0.042"
    assert usage_text(entry(1, usage=USAGE, tokens=told)) == "12.3k/1.5k ~$0.042 (told 10k/1.2k)"
    # a sum that is not complete is a lower bound; without a proven sum, the told tokens, marked
    assert usage_text(entry(1, usage=replace(USAGE, complete=False))).startswith("≥12.3k/1.5k")
    assert usage_text(entry(1, tokens=told)) == "10,000 in · 1,200 out (reported)"
    unknown = replace(USAGE, input_tokens=None, output_tokens=None, complete=False)
    assert usage_text(entry(1, usage=unknown, tokens=told)) == "≥?/? ~$0.042 (told 10k/1.2k)"


def test_the_report_reads_no_detail_the_run_read_already(fake: Conversations) -> None:
    """The run's details are shared (issue 29): CHILD_A's detail, read once to prove it the
    task's child (and for its usage), serves the report's read too; only the fresh detail
    after its newest page (the seed's rule) is asked again."""
    two_tasks(fake, rows=1)
    result, _ = report(P, "--quiet")
    assert result.exit_code == 0, result.stderr
    assert fake.paths_asked().count(f"/api/sessions/{CHILD_A}") == 2
