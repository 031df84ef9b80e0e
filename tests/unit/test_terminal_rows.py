"""The terminal painter (render/terminal_rows.py): our own colours and wrapping, held by its own
snapshots (captured fixtures and a transcript with every part, colour shown as `<codes>`) and
by its rules on generated hostile rows: no screen line wider than the terminal, none ending in
a space, a wrapped line continuing under its indent (never at column 0), the same characters
as the plain painter, and colour that is only SGR around them."""

from __future__ import annotations

import io
import re
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from syrupy.assertion import SnapshotAssertion
from typer.testing import CliRunner

from hermes_task.cli import session as output_module
from hermes_task.cli.app import app
from hermes_task.core.documents import (
    BackendInfo,
    Coverage,
    Row,
    SegmentInfo,
    TaskInfo,
    ToolCall,
    TranscriptDoc,
)
from hermes_task.core.ui_strings import TaskStatus
from hermes_task.render import Target, terminal_rows
from hermes_task.render.rows import PARTS, Segments, View, row_view, rows_text, transcript_chunks
from hermes_task.render.terminal_rows import PALETTE, Painter, width_of
from tests.support.cli_runner import recording
from tests.support.dashboard import serving
from tests.support.replay import BASE_URL, Replay
from tests.unit.test_plain_rows import ENV, rows

SGR = re.compile(r"\x1b\[([0-9;]*)m")
ESCAPE = re.compile(r"\x1b(?!\[[0-9;]*m)")


def visible(text: str) -> str:
    """Colour codes spelled `<1;36>` and `</>`, so a snapshot shows them."""
    return SGR.sub(lambda m: "</>" if m.group(1) == "0" else f"<{m.group(1)}>", text)


def plain(text: str) -> str:
    return SGR.sub("", text)


def painted(
    doc: TranscriptDoc,
    *,
    color: bool,
    columns: int,
    tty: bool = True,
    view: View | None = None,
    markdown: bool = True,
) -> str:
    """`doc` on a target; `markdown` False: every row painted by us (rich's Markdown, whose
    look changes between rich versions, kept out of a snapshot)."""
    sink = io.StringIO()
    target = Target(sink.write, tty=tty, color=color, columns=columns)
    painter = Painter(color=color, width=target.width, markdown=markdown and tty)
    terminal_rows.transcript(target, doc, view or View(), painter)
    return sink.getvalue()


def documents(backend: str, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The transcript documents `show` builds for the capture's rich and c1 tasks."""
    replay = Replay(backend)
    seen: list[Any] = []
    monkeypatch.setattr(
        "hermes_task.cli.session.output_transcript", recording(seen, output_module.output_transcript)
    )
    manifest = replay.manifest
    with serving(replay):
        for args in (
            ["show", manifest["rich"]["id"]],
            ["show", manifest["c1"]["root"], "--tip", manifest["c1"]["tip"]],
        ):
            CliRunner().invoke(app, [*args, "--url", BASE_URL], env=ENV)
    return seen


def assert_the_rules(text: str, width: int) -> None:
    """What every terminal painting keeps (module docstring)."""
    assert ESCAPE.search(text) is None, "only SGR escapes"
    lines = plain(text).split("\n")
    assert [line for line in lines if width_of(line) > width] == []
    assert [line for line in lines if line.endswith(" ")] == []
    starts = ("▌ ", "▸ ", "· ", "── segment ", "goal: ", "usage: ", "task ", "  ")
    assert [line for line in lines if line and not line.startswith(starts)] == []


@pytest.mark.parametrize("backend", ["official", "iot"])
def test_captured_transcripts_on_a_terminal(
    backend: str, snapshot: SnapshotAssertion, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = documents(backend, monkeypatch)
    assert len(docs) == 2
    out = []
    for doc in docs:
        coloured = painted(doc, color=True, columns=72, markdown=False)
        assert_the_rules(coloured, 72)
        narrow = painted(doc, color=False, columns=40, view=View(reasoning=True, full=True), markdown=False)
        assert_the_rules(narrow, 40)
        assert "\x1b" not in narrow
        out += [visible(coloured), narrow]
    assert out == snapshot


@pytest.mark.parametrize("backend", ["official", "iot", "official018", "axisrow"])
def test_every_captured_transcript_reads_clean_on_a_terminal(
    backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every transcript `show` and `older` build from the captures, painted with Markdown and
    colour in every view: the terminal rules, and nothing unsafe once SGR is stripped."""
    from tests.unit.test_plain_rows import FORBIDDEN, tasks

    replay = Replay(backend)
    seen: list[Any] = []
    real = output_module.output_transcript
    monkeypatch.setattr("hermes_task.cli.session.output_transcript", recording(seen, real))
    with serving(replay):
        for args in tasks(replay.manifest):
            CliRunner().invoke(app, [*args, "--url", BASE_URL], env=ENV)
    assert len(seen) >= 4
    for doc in seen:
        for view, columns in ((View(), 80), (View(reasoning=True, full=True), 33)):
            text = painted(doc, color=True, columns=columns, view=view)
            assert_the_rules(text, columns)
            assert FORBIDDEN.search(plain(text)) is None
            starts = re.findall(r"^(?:▌|▸|·) ", plain(text), re.M)
            assert len(starts) == len(doc.rows)


EVERY_PART = [
    Row(
        id=1,
        session_id="s1",
        role="user",
        text="Count the TODO markers under src/ and list every file that has one",
        timestamp=1796056441.0,
    ),
    Row(
        id=2,
        session_id="s1",
        role="assistant",
        text=None,
        reasoning="Start with grep.",
        commentary=["Scanning the files now."],
        tool_calls=[
            ToolCall(
                id="call_1",
                name="terminal",
                arguments='{"command": "grep -rn TODO src/ --include=*.py | sort | uniq -c"}',
            ),
            ToolCall(id="call_2", name="read_file", arguments=None),
        ],
        timestamp=1796056442.0,
    ),
    Row(
        id=3,
        session_id="s1",
        role="tool",
        text='{"output": "'
        + "\\n".join(f"src/mod_{i}.py:{i}: TODO" for i in range(30))
        + '", "exit_code": 1, "error": "grep: tests/: No such file or directory"}',
        tool_name="terminal",
        tool_call_id="call_1",
        timestamp=1796056443.0,
        archived=True,
    ),
    Row(
        id=4,
        session_id="s1",
        role="user",
        text="[System: the previous tool call was cut off; continue from the last result you have]",
        kind="system_notice",
        timestamp=1796056444.0,
    ),
    Row(
        id=5,
        session_id="s2",
        role="assistant",
        text="Found **30** markers:\n\n- `src/mod_0.py`\n- `src/mod_1.py`\n\nSee [the list](https://example.com/list).",
        timestamp=1796056445.0,
    ),
    Row(id=6, session_id="s2", role="assistant", text="", timestamp=None),
    Row(
        id=7,
        session_id="s2",
        role="x\x1b]8;;y",
        text="tab\there\nand an \x1b[2J escape",
        tool_call_id="c\x07",
        timestamp=1796056447.0,
    ),
]
TASK = TaskInfo(
    root_id="s1",
    tip_id="s2",
    lineage=["s1", "s2"],
    goal="Count the TODO markers",
    segments=[SegmentInfo(id="s1", end_reason="compression"), SegmentInfo(id="s2")],
)
DOC = TranscriptDoc(
    task=TASK,
    backend=BackendInfo(contract="current"),
    rows=EVERY_PART,
    coverage=Coverage(unique_rows=7, has_older=False, at_start=True),
)


def test_every_part_on_a_narrow_colour_terminal(snapshot: SnapshotAssertion) -> None:
    text = painted(DOC, color=True, columns=44, view=View(utc=True), markdown=False)
    assert_the_rules(text, 44)
    assert text == painted(DOC, color=True, columns=44, view=View(utc=True), markdown=False)  # no cache
    assert visible(text) == snapshot


def test_wrapped_lines_keep_their_indent() -> None:
    """Issue 26: a long `→ call` line continues under `call`, a notice under its text, prose
    under its indent; never at column 0."""
    lines = plain(painted(DOC, color=False, columns=44, view=View(utc=True))).split("\n")
    call = lines.index(next(line for line in lines if line.startswith("  → call terminal")))
    assert lines[call + 1].startswith("    ")
    assert not lines[call + 1].startswith("     ")
    notice = lines.index(next(line for line in lines if line.startswith("· system_notice")))
    assert lines[notice + 1].startswith("  ")
    assert lines[notice + 1].strip()
    prose = lines.index("  Count the TODO markers under src/ and list")
    assert lines[prose + 1] == "  every file that has one"
    header = lines.index(next(line for line in lines if line.startswith("▌ tool terminal")))
    assert lines[header + 1].startswith("  ")
    assert "#3" in lines[header] + lines[header + 1]


def test_markdown_prose_goes_through_rich_and_plain_prose_keeps_its_lines() -> None:
    text = painted(DOC, color=True, columns=60)
    assert "**30**" not in text  # rendered: the emphasis is a style
    assert "\x1b[1m30\x1b[0m" in text
    assert "the list (https://example.com/list)" in plain(text)  # links not clickable: no OSC 8
    assert "\x1b]8" not in text
    off = painted(DOC, color=True, columns=60, tty=False)  # coloured pipe: no Markdown, no wrapping
    assert "Found **30** markers:" in off
    assert "Count the TODO markers under src/ and list every file that has one" in off


def test_colour_is_only_sgr_around_the_same_text() -> None:
    for columns in (44, 100):
        assert plain(painted(DOC, color=True, columns=columns)) == painted(DOC, color=False, columns=columns)
    assert set(PARTS) <= set(PALETTE)


def test_a_coloured_pipe_is_the_plain_format_in_colour() -> None:
    """Not a terminal but coloured (`--color always | less -R`): the plain painter's lines."""
    piped = "".join(transcript_chunks(DOC, View(), 80))
    assert plain(painted(DOC, color=True, columns=80, tty=False)) == piped


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    items=st.lists(rows(), max_size=6),
    reasoning=st.booleans(),
    full=st.booleans(),
    width=st.sampled_from([20, 33, 100]),
)
def test_generated_rows_keep_the_terminal_rules(
    items: list[Row], reasoning: bool, full: bool, width: int
) -> None:
    view = View(reasoning=reasoning, full=full)
    sink = io.StringIO()
    target = Target(sink.write, tty=True, color=True, columns=width)
    painter = Painter(color=True, width=width, markdown=False)
    terminal_rows.rows(target, items, view, Segments(TASK_OF_GENERATED), painter)
    text = sink.getvalue()
    assert_the_rules(text, width)
    # wrapping moves only whitespace: the same characters as the plain painter, in order
    piped = rows_text(items, view, Segments(TASK_OF_GENERATED))
    assert "".join(plain(text).split()) == "".join(piped.split())
    headers = [line for line in plain(text).split("\n") if line.startswith(("▌ ", "▸ ", "· "))]
    assert len(headers) == len(items)


TASK_OF_GENERATED = TaskInfo(
    root_id="s1",
    tip_id="s3",
    lineage=["s1", "s2", "s3"],
    segments=[SegmentInfo(id="s1", end_reason="compression\x1b[2J"), SegmentInfo(id="s2")],
)


@settings(max_examples=100, deadline=None)
@given(
    text=st.lists(
        st.sampled_from(
            [
                "**b**",
                "*i*",
                "`c`",
                "# h",
                "> q",
                "- item",
                "1. one",
                "a | b\n--|--\n1 | 2",
                "~~s~~",
                "[l](u)",
                "\n",
                "\n\n",
                "text ",
                "    code",
                "<b>",
                "\\*",
                "界",
                "word " * 12,
            ]
        ),
        min_size=1,
        max_size=10,
    ).map("".join),
    width=st.sampled_from([24, 80]),
)
def test_markdown_rows_keep_the_terminal_rules(text: str, width: int) -> None:
    row = Row(id=1, session_id="s1", role="assistant", text=text)
    painter = Painter(color=True, width=width, markdown=True)
    out = painter.row(row_view(row, View()))
    assert_the_rules(out, width)
    assert out.split("\n")[1:] == [line for line in out.split("\n")[1:] if not line or line.startswith("  ")]


def test_a_row_on_a_tiny_terminal_is_painted_at_the_minimum_width() -> None:
    """An absurd width never reaches the painter: the target takes 80 instead."""
    for columns in (0, 5, 99_999):
        assert Target(print, tty=True, columns=columns).width == 80
    assert Target(print, tty=True, columns=20).width == 20
    assert Target(print, tty=False, columns=150).width is None


def test_counts_of_one_are_singular() -> None:
    """Issue 26: `1 task`, `1 row`, never `1 tasks` or `1 rows`."""
    from rich.console import Console

    from hermes_task.cli.options import Common, Environment
    from hermes_task.cli.session import stderr_line
    from hermes_task.core.documents import TaskEntry, TasksDoc
    from hermes_task.core.verdict import summarize
    from hermes_task.reading.polling import Outcome
    from hermes_task.render import Target, terminal
    from hermes_task.render.watchout import Notes, TerminalReporter

    entry = TaskEntry(
        call_id="c",
        goal="g",
        task_index=0,
        delegation_id=None,
        subagent_id=None,
        child_session_id=None,
        status=TaskStatus.completed,
        terminal=True,
        unavailable_reason=None,
        number="1.1",
    )
    sink = io.StringIO()
    Console(file=sink, width=100, no_color=True).print(
        terminal.tasks_renderable(TasksDoc(parent_id="p", tasks=[entry], summary=summarize([entry])))
    )
    assert "1 task · 1 terminal · finished (1 completed)" in sink.getvalue()
    running = msgspec.structs.replace(entry, status=TaskStatus.running, terminal=False)
    ending = Notes(lambda: Console(), 2.0).ending(Outcome("timeout", "running", None, 9), [running])
    assert ending == "--timeout ran out · 0 of 1 task terminal"
    err = io.StringIO()
    common = Common(env=Environment(variables={}, stderr_stream=err))
    note = lambda line, style: stderr_line(common, line, style)  # noqa: E731
    reporter = TerminalReporter(Target(print), note, lambda code: True, 2.0, "s1")
    reporter.count = 1
    reporter.result(Outcome("ended", "ended", "agent_close", 0))
    assert err.getvalue() == "task s1 ended (agent_close) · 1 row\n"


@pytest.mark.parametrize("color", [False, True])
def test_follow_parent_rows_wrap_under_the_task_prefix(color: bool) -> None:
    """Issue 26: on a terminal every line of a task's row starts with its `N │ ` prefix and
    fits the width with it; wrapped lines continue under the row's indent."""
    from rich.console import Console

    from hermes_task.core.documents import TaskEntry
    from hermes_task.render.watchout import TextFamily

    entry = TaskEntry(
        call_id="c",
        goal="g",
        task_index=0,
        delegation_id=None,
        subagent_id=None,
        child_session_id="s1",
        status=TaskStatus.running,
        terminal=False,
        unavailable_reason=None,
        number="1.2",
    )
    sink = io.StringIO()
    family = TextFamily(Target(sink.write, tty=True, color=color, columns=40), lambda: Console(), 2.0)
    family.rows(EVERY_PART[:3], entry)
    lines = plain(sink.getvalue()).split("\n")
    assert lines[-1] == ""
    assert [line for line in lines[:-1] if not line.startswith("1.2 │")] == []
    assert max(width_of(line) for line in lines) <= 40
    call = next(i for i, line in enumerate(lines) if line.startswith("1.2 │   → call terminal"))
    assert lines[call + 1].startswith("1.2 │     ")
    assert "1.2 │ " not in [line for line in lines if line.endswith(" ")]
    piped = io.StringIO()
    TextFamily(Target(piped.write, columns=40), lambda: Console(), 2.0).rows(EVERY_PART[:1], entry)
    assert piped.getvalue() == (
        "1.2 │ ▌ user  #1  " + rows_module_when(1796056441.0) + "\n"
        "1.2 │   Count the TODO markers under src/ and list every file that has one\n"
    )


def rows_module_when(stamp: float) -> str:
    from hermes_task.render.rows import when

    return when(stamp)


@pytest.mark.parametrize(
    ("text", "markdown"),
    [
        ("the config lives in src/my_module/settings_file.py\nand __version__ is 2", True),
        ("the config lives in src/my_module/settings_file.py\nsee issue #12 | maybe", False),
        ("a > b and c < d\nsecond line", True),  # `<` may open an autolink: rich joins the lines
        ("plain words\nkeep their line breaks", False),
        ("# Heading\ntext", True),
        ("| a | b |\n|---|---|\n| 1 | 2 |", True),
        ("_emphasis_ here", True),
        ("- one\n- two", True),
    ],
)
def test_only_prose_with_markdown_syntax_goes_through_rich(text: str, markdown: bool) -> None:
    """Prose without Markdown syntax (snake_case, `#` or `|` inside a line) is painted by us,
    its line breaks kept; only the rest costs rich's Markdown."""
    from hermes_task.core.projection import looks_like_markdown

    assert looks_like_markdown(text) is markdown
    row = Row(id=1, session_id="s1", role="assistant", text=text)
    with_markdown = Painter(color=False, width=80, markdown=True).row(row_view(row, View()))
    without = Painter(color=False, width=80, markdown=False).row(row_view(row, View()))
    assert (with_markdown != without) is markdown


def test_html_in_markdown_prose_is_kept_as_text() -> None:
    """rich draws no HTML: with its default parser a `<div>` block vanished with its text."""
    row = Row(
        id=1,
        session_id="s1",
        role="assistant",
        text="**Note**\n\n<div>\nkept inside\n</div>\n\n<b>bold</b> tag",
    )
    out = plain(Painter(color=True, width=80, markdown=True).row(row_view(row, View())))
    assert "kept inside" in out
    assert "<div>" in out
    assert "<b>bold</b> tag" in out
