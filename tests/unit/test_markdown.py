"""The Markdown painter (render/report.py, render/report.py) and `--format`: backend text
escaped so that a Markdown parser (markdown-it-py) reads it back as the same text and makes
nothing of it (no link, image, raw HTML, heading, list, quote or code block; table cells and
fences intact), on hypothesis-generated hostile text (tests/support/hostile.py) and on hostile
rows served through the CLI; `show`/`older --format markdown` held by snapshots of every
captured fixture; `--format json` is `--json`, and the two disagreeing is a usage error."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from syrupy.assertion import SnapshotAssertion
from typer.testing import CliRunner

from hermes_task.cli.app import app
from hermes_task.core.documents import (
    BackendInfo,
    Coverage,
    Row,
    SegmentInfo,
    TaskInfo,
    ToolCall,
    TranscriptDoc,
    WarningItem,
)
from hermes_task.core.sanitize import clean, clean_line
from hermes_task.core.ui_strings import WarningCode
from hermes_task.render.report import (
    NO_BREAK_SPACE,
    WORD_JOINER,
    cell,
    code,
    fence,
    html_text,
    paragraphs,
    table,
    transcript_markdown,
)
from hermes_task.render.rows import View, row_view
from tests.support import tally
from tests.support.dashboard import serving
from tests.support.hostile import markup_text, unsafe_text
from tests.support.markdown import details, fences, inert, paragraphs_text, parse, strong_texts, tables
from tests.support.replay import BASE_URL, TOKEN, Replay
from tests.support.scripted import Scripted
from tests.unit.test_hostile import ROW_FLOWS

ENV = {"HERMES_DASHBOARD_TOKEN": TOKEN, "NO_COLOR": "1", "COLUMNS": "100", "XDG_CONFIG_HOME": "/nonexistent"}
PROPERTY = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MENTION = re.compile(r"@(?=[0-9A-Za-z])")
hostile = markup_text | unsafe_text | st.text()


def joined(text: str) -> str:
    """`text` with the word joiner the painter puts after a mention's `@`."""
    return MENTION.sub("@" + WORD_JOINER, text)


def reads_as(text: str) -> list[str]:
    """What `paragraphs(text)` must read as, paragraph by paragraph: the cleaned text's lines
    (without their trailing spaces), a blank line between paragraphs, the leading indentation as
    no-break spaces; markdown-it-py strips a paragraph's ends as Python's `strip` does."""
    out: list[list[str]] = [[]]
    for line in clean(text).split("\n"):
        if not line.strip(" \t"):
            if out[-1]:
                out.append([])
            continue
        line = line.rstrip(" \t")
        lead = len(line) - len(line.lstrip(" \t"))
        out[-1].append(line[:lead].replace("\t", "    ").replace(" ", NO_BREAK_SPACE) + line[lead:])
    return [joined("\n".join(lines)).strip() for lines in out if lines]


# -- the escaping, read back by a Markdown parser ---------------------------------------------------


@PROPERTY
@given(text=hostile)
def test_paragraphs_read_as_the_text_and_make_nothing_of_it(text: str) -> None:
    tokens = parse(paragraphs(text))
    inert(tokens)
    assert {t.type for t in tokens} <= {"paragraph_open", "inline", "paragraph_close"}
    assert paragraphs_text(tokens) == reads_as(text)


@PROPERTY
@given(cells=st.lists(hostile, min_size=1, max_size=4), ids=st.lists(hostile, min_size=1, max_size=4))
def test_table_cells_and_code_spans_stay_in_their_cell(cells: list[str], ids: list[str]) -> None:
    rows = [[cell(text), code(ident, cell=True)] for text, ident in zip(cells, ids, strict=False)]
    tokens = parse(table(["text", "id"], rows) + "\n")
    inert(tokens)
    (found,) = tables(tokens)
    expected = [["text", "id"]] + [
        [joined(clean_line(text).strip()), clean_line(ident) or "-"]
        for text, ident in zip(cells, ids, strict=False)
    ]
    assert [[c.strip() for c in row] for row in found] == [[c.strip() for c in row] for row in expected]


@PROPERTY
@given(text=hostile)
def test_a_code_span_holds_its_text_whole(text: str) -> None:
    tokens = parse(f"id {code(text)}\n")
    inert(tokens)
    (inline,) = [t for t in tokens if t.type == "inline"]
    spans = [c.content for c in inline.children or [] if c.type == "code_inline"]
    assert spans == ([clean_line(text)] if clean_line(text) else [])


@PROPERTY
@given(text=hostile)
def test_no_line_of_a_fenced_text_closes_its_fence(text: str) -> None:
    tokens = parse(f"before\n\n{fence(text)}\n\nafter\n")
    inert(tokens)
    body = clean(text)
    assert fences(tokens) == [body if body.endswith("\n") else body + "\n"]
    assert paragraphs_text(tokens) == ["before", "after"]


@PROPERTY
@given(text=hostile)
def test_a_summary_line_is_text_in_its_html(text: str) -> None:
    tokens = parse(f"<details>\n<summary>{html_text(text)}</summary>\n\nbody\n\n</details>\n")
    inert(tokens)
    assert details(tokens) == [joined(clean_line(text).strip())]
    assert paragraphs_text(tokens) == ["body"]


def test_what_a_reader_would_follow_is_escaped_and_what_is_inert_is_left_alone() -> None:
    assert paragraphs("see https://evil.example or www.evil.example") == (
        "see https\\://evil.example or www\\.evil.example"
    )
    assert (
        paragraphs("@octocat wrote a@b.example")
        == f"\\@{WORD_JOINER}octocat wrote a\\@{WORD_JOINER}b.example"
    )
    assert paragraphs("# not a heading\n1. not a list\n> no quote") == (
        "\\# not a heading\\\n1\\. not a list\\\n\\> no quote"
    )
    assert paragraphs("2026-11-30 17:09:41 in src/a.py (ok), 3 + 4 = 7") == (
        "2026-11-30 17:09:41 in src/a.py (ok), 3 + 4 = 7"  # nothing here starts anything
    )
    assert code("a`b") == "``a`b``"
    assert code("`x") == "`` `x ``"
    assert code("a|b", cell=True) == "`a\\|b`"
    assert fence("```\ncode\n```") == "````\n```\ncode\n```\n````"


# -- a whole transcript ---------------------------------------------------------------------------

S1, S2 = "20261201_120000_a1a1a1", "20261201_120100_b2b2b2"


@st.composite
def transcripts(draw: st.DrawFn) -> TranscriptDoc:
    rows = []
    for i in range(draw(st.integers(1, 6))):
        role = draw(st.sampled_from(["user", "assistant", "tool", "system"]) | hostile)
        calls = draw(
            st.lists(
                st.builds(
                    ToolCall, id=hostile | st.none(), name=hostile | st.none(), arguments=hostile | st.none()
                ),
                max_size=2,
            )
        )
        rows.append(
            Row(
                id=i,
                session_id=S1 if i < 3 else S2,
                role=role,
                text=draw(hostile | st.none()),
                reasoning=draw(hostile | st.none()),
                commentary=draw(st.lists(hostile, max_size=2)),
                tool_calls=calls,
                tool_call_id=draw(hostile | st.none()),
                tool_name=draw(hostile | st.none()),
                timestamp=1796056440.0 + i,
                kind=draw(st.sampled_from([None, "steer", "compaction_summary", "system_notice"]) | hostile),
            )
        )
    task = TaskInfo(
        root_id=S1,
        tip_id=S2,
        lineage=[S1, S2],
        state="ended",
        end_reason=draw(hostile | st.none()),
        goal=draw(hostile),
        segments=[SegmentInfo(id=S1, end_reason=draw(hostile)), SegmentInfo(id=S2, end_reason=None)],
    )
    warnings = [WarningItem(code=WarningCode.partial_history, message=draw(hostile))]
    return TranscriptDoc(
        task=task,
        backend=BackendInfo(contract="current"),
        rows=rows,
        coverage=Coverage(unique_rows=len(rows), has_older=draw(st.booleans()), at_start=True),
        warnings=warnings,
    )


@settings(PROPERTY, max_examples=40)
@given(doc=transcripts(), full=st.booleans(), reasoning=st.booleans())
def test_a_transcript_keeps_its_structure_whatever_the_rows_say(
    doc: TranscriptDoc, full: bool, reasoning: bool
) -> None:
    view = View(full=full, reasoning=reasoning, utc=True)
    tokens = parse("".join(transcript_markdown(doc, view)))
    inert(tokens, blocks=frozenset({"heading", "blockquote"}))
    assert [t.tag for t in tokens if t.type == "heading_open"] == ["h2"]
    (segments,) = tables(tokens)
    assert len(segments) == 3
    assert {len(row) for row in segments} == {5}
    assert [row[0] for row in segments[1:]] == [S1, S2]
    views = [row_view(row, view) for row in doc.rows]
    outputs = [
        text.removeprefix(" ") if what == "arguments" else text
        for v in views
        for block in v.body
        for text, what in block
        if what in ("output", "arguments")
    ]
    assert fences(tokens) == [text if text.endswith("\n") else text + "\n" for text in outputs]
    headers = [v.header[0][0] for v in views if v.quiet is None]
    goal = ["Goal:"] if paragraphs(doc.task.goal or "") else []
    assert strong_texts(tokens) == [*goal, "warning:", *(joined(clean_line(h).rstrip()) for h in headers)]


def test_a_transcript_document() -> None:
    """The layout, exactly: heading, facts, goal, segments, warnings, rows (a cut tool output)."""
    output = "\n".join(f"line {i}" for i in range(20))
    rows = [
        Row(id=1, session_id=S1, role="user", text="Count *TODO* markers", timestamp=1796056440.0),
        Row(id=2, session_id=S1, role="assistant", text="", tool_calls=[ToolCall(id="c1", name="terminal", arguments='{"cmd": "grep"}')], timestamp=1796056441.0),
        Row(id=3, session_id=S2, role="tool", text=output, tool_call_id="c1", tool_name="terminal", timestamp=1796056442.0),
    ]  # fmt: skip
    doc = TranscriptDoc(
        task=TaskInfo(
            root_id=S1,
            tip_id=S2,
            lineage=[S1, S2],
            state="ended",
            end_reason="agent_close",
            goal="Count *TODO* markers",
            segments=[
                SegmentInfo(
                    id=S1,
                    started_at=1796056440.0,
                    ended_at=1796056441.5,
                    end_reason="compression",
                    rows_shown=2,
                ),
                SegmentInfo(id=S2, started_at=1796056441.5, rows_shown=1),
            ],
        ),
        backend=BackendInfo(contract="current"),
        rows=rows,
        coverage=Coverage(unique_rows=3, has_older=False, at_start=True),
        warnings=[WarningItem(code=WarningCode.gap, message="rows between are not loaded")],
    )
    assert "".join(transcript_markdown(doc, View(utc=True))) == "\n".join(
        [
            f"## Task `{S1}`",
            "",
            f"task {S1} · ended (agent_close) · 2 segments, tip {S2} · 3 rows shown",
            "",
            "**Goal:**",
            "",
            "Count \\*TODO\\* markers",
            "",
            "| segment | started | ended | end reason | rows shown |",
            "| --- | --- | --- | --- | --- |",
            f"| `{S1}` | 2026-11-30 16:34:00Z | 2026-11-30 16:34:01Z | compression | 2 |",
            f"| `{S2}` | 2026-11-30 16:34:01Z |   |   | 1 |",
            "",
            "> **warning:** rows between are not loaded",
            "",
            "**▌ user**  #1  2026-11-30 16:34:00Z",
            "",
            "Count \\*TODO\\* markers",
            "",
            "**▌ assistant**  #2  2026-11-30 16:34:01Z",
            "",
            "→ call terminal (c1)",
            "",
            "```",
            '{"cmd": "grep"}',
            "```",
            "",
            f"── segment {S2} · previous segment {S1} ended: compression ──",
            "",
            "**▌ tool** terminal (c1)  #3  2026-11-30 16:34:02Z",
            "",
            "```",
            "line 0\nline 1\nline 2\nline 3",
            "```",
            "",
            "… 8 lines left out (--full)",
            "",
            "```",
            "\n".join(f"line {i}" for i in range(12, 20)),
            "```",
            "",
            "",
        ]
    )


# -- through the CLI -------------------------------------------------------------------------------


def invoke(*args: str) -> Any:
    return CliRunner().invoke(app, [*args, "--url", BASE_URL], env=ENV)


@pytest.mark.parametrize("backend", ["official", "iot", "official018", "axisrow"])
def test_captured_transcripts_in_markdown(backend: str, snapshot: SnapshotAssertion) -> None:
    replay = Replay(backend)
    manifest = replay.manifest
    c1 = manifest["c1"]
    printed = []
    with serving(replay):
        for args in (
            ["show", manifest["rich"]["id"]],
            ["show", c1["root"], "--tip", c1["tip"]],
            ["older", manifest["long"]["id"], "--all", "--full"],
        ):
            result = invoke(*args, "--format", "markdown", "--utc", "--no-store")
            if result.exit_code != 0:
                printed.append(f"{args[0]}\nexit {result.exit_code}")
                continue
            inert(parse(result.stdout), blocks=frozenset({"heading", "blockquote"}))
            printed.append(result.stdout)
    assert printed == snapshot


@pytest.mark.parametrize("command", ["show", "older"])
def test_format_json_is_json_and_text_is_the_default(command: str) -> None:
    replay = Replay("iot")
    rich = replay.manifest["rich"]["id"]
    with serving(replay):
        assert invoke(command, rich, "--format", "json").stdout == invoke(command, rich, "--json").stdout
        assert (
            invoke(command, rich, "--format", "json", "--json").stdout
            == invoke(command, rich, "--json").stdout
        )
        assert invoke(command, rich, "--format", "TEXT").stdout == invoke(command, rich).stdout


@pytest.mark.parametrize("command", ["show", "older", "recover"])
@pytest.mark.parametrize("form", ["text", "markdown"])
def test_json_and_another_format_is_a_usage_error(command: str, form: str) -> None:
    result = invoke(command, S1, "--json", "--format", form)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert (
        f"Invalid value for '--format': {form} disagrees with --json (--json is --format json)"
        in result.stderr
    )


@pytest.mark.parametrize("command", ["follow", "search", "parents"])
def test_format_is_only_on_show_older_and_recover(command: str) -> None:
    assert invoke(command, S1, "--format", "markdown").exit_code == 2


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(data=st.data())
def test_hostile_rows_served_to_show_make_nothing_of_markdown(data: st.DataObject) -> None:
    backend, name = data.draw(st.sampled_from(sorted(ROW_FLOWS)))
    args, index = ROW_FLOWS[(backend, name)]
    script = Scripted(backend, data, corrupt=index, category="hostile_rows")
    with serving(script):
        result = invoke(*args, "--format", "markdown", "--reasoning", "--full")
    tally.count(f"markdown.{script.used}")
    assert result.exit_code in (0, 6), (result.exit_code, result.stderr)
    if result.exit_code == 0:
        inert(parse(result.stdout), blocks=frozenset({"heading", "blockquote"}))
