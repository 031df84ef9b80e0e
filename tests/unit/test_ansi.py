"""The terminal fast paths (render/ansi_rows.py for rows, render/ansi.py for a `Text`) write
exactly what rich writes for the same renderables, one `console.print` each: on every
captured fixture (Markdown off and on, a wide and a narrow terminal, colour and none) and on
generated rows with hostile text (hypothesis)."""

from __future__ import annotations

import io
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.text import Text
from typer.testing import CliRunner

from hermes_task.cli import output as output_module
from hermes_task.cli.app import app
from hermes_task.core.documents import Row, SegmentInfo, TaskInfo, ToolCall
from hermes_task.render import ansi_rows, terminal
from hermes_task.render.ansi import text_ansi
from hermes_task.render.plain_rows import Style
from tests.support.cli_runner import recording
from tests.support.dashboard import serving
from tests.support.replay import BASE_URL, Replay
from tests.unit.test_plain_rows import ENV, rows, tasks


def terminal_console(width: int, color: bool = True) -> tuple[Console, io.StringIO]:
    """The console cli/shell.py `console()` builds on a terminal (with or without colour)."""
    buffer = io.StringIO()
    return (
        Console(
            file=buffer,
            force_terminal=True,
            no_color=not color,
            color_system="standard" if color else None,
            markup=False,
            highlight=False,
            emoji=False,
            soft_wrap=False,
            width=width,
        ),
        buffer,
    )


def both(render: Any, width: int, color: bool = True) -> tuple[str, str]:
    """What `render(console, write)` prints through rich (write None) and through the fast
    paths (write given)."""
    rich_out, rich_buffer = terminal_console(width, color)
    render(rich_out, None)
    fast_out, fast_buffer = terminal_console(width, color)
    written: list[str] = []
    render(fast_out, written.append)
    assert fast_buffer.getvalue() == ""  # everything went through `write`
    return rich_buffer.getvalue(), "".join(written)


def documents(backend: str, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    replay = Replay(backend)
    seen: list[Any] = []
    real = output_module.output_transcript
    for module in ("run_show", "older"):
        monkeypatch.setattr(
            f"hermes_task.cli.{module}.output_transcript",
            recording(seen, real),
        )
    with serving(replay):
        for args in tasks(replay.manifest):
            CliRunner().invoke(app, [*args, "--url", BASE_URL], env=ENV)
    return seen


@pytest.mark.parametrize("backend", ["official", "iot", "official018", "axisrow"])
def test_captured_transcripts_print_on_a_terminal_as_rich_prints_them(
    backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = documents(backend, monkeypatch)
    assert len(docs) >= 2, "the capture served at least two transcripts"
    fast = 0
    real = ansi_rows.row_ansi

    def counted(*args: Any) -> str | None:
        nonlocal fast
        answer = real(*args)
        fast += answer is not None
        return answer

    monkeypatch.setattr("hermes_task.render.terminal.row_ansi", counted)
    for doc in docs:
        for markdown in (False, True):
            for width, color, reasoning in ((100, True, False), (40, True, True), (100, False, True)):
                rich, written = both(
                    lambda out, write, d=doc, m=markdown, r=reasoning: terminal.transcript(
                        out, d, markdown=m, reasoning=r, full=r, write=write
                    ),
                    width,
                    color,
                )
                assert written == rich, (backend, doc.task.root_id, markdown, width, color)
    assert fast > 100, "most captured rows took the fast path"


def test_generated_rows_print_on_a_terminal_as_rich_prints_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """Over every example, rows and texts the fast paths answered: a fast path that left
    everything to rich would pass the comparison without being compared."""
    answered = {"row": 0, "text": 0}
    real_row, real_text = ansi_rows.row_ansi, text_ansi

    def row(*args: Any) -> str | None:
        answer = real_row(*args)
        answered["row"] += answer is not None
        return answer

    def text(*args: Any) -> str | None:
        answer = real_text(*args)
        answered["text"] += answer is not None
        return answer

    monkeypatch.setattr("hermes_task.render.terminal.row_ansi", row)
    monkeypatch.setattr("hermes_task.render.terminal.text_ansi", text)
    check_generated_rows()
    # measured: 197-252 rows and 28-61 texts answered in a run of 300 examples
    assert answered["row"] >= 50, answered
    assert answered["text"] >= 5, answered


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    items=st.lists(rows(), max_size=6),
    markdown=st.booleans(),
    reasoning=st.booleans(),
    full=st.booleans(),
    width=st.sampled_from([100, 30]),
    color=st.booleans(),
)
@example(  # 100 cells but 101 characters (a zero-width mark): rich crops the trailing space
    items=[
        Row(
            id=0,
            session_id="s1",
            role="user",
            text=None,
            tool_calls=[
                ToolCall(
                    id="\u0300\ufeff", name="000\x08\x80\x80000\x80" + "0" * 31 + "\x80\x80", arguments=""
                )
            ],
        )
    ],
    markdown=False,
    reasoning=False,
    full=False,
    width=100,
    color=False,
)
def check_generated_rows(
    items: list[Row], markdown: bool, reasoning: bool, full: bool, width: int, color: bool
) -> None:
    task = TaskInfo(
        root_id="s1",
        tip_id="s3",
        lineage=["s1", "s2", "s3"],
        segments=[SegmentInfo(id="s1", end_reason="compression\x1b[2J"), SegmentInfo(id="s2")],
    )
    newest: list[str | None] = []
    rich, written = both(
        lambda out, write: newest.append(
            terminal.rows(
                out, items, markdown=markdown, reasoning=reasoning, full=full, task=task, write=write
            )
        ),
        width,
        color,
    )
    assert written == rich
    assert newest[0] == newest[1]


@pytest.mark.parametrize("width", [100, 12])
@pytest.mark.parametrize(
    "text",
    [
        Text("goal: one line", style="bold"),
        Text("two\nlines", style="dim"),
        Text.assemble(("a", "red"), " b ", ("c\nd", "bold"), end=""),
        Text("tab\there"),
        Text("x" * 50, justify="right"),
        Text("界" * 30),
    ],
)
def test_a_text_prints_as_rich_prints_it(text: Text, width: int) -> None:
    out, buffer = terminal_console(width)
    out.print(text)
    fast = text_ansi(text, terminal_console(width)[0])
    assert fast is None or fast + "\n" == buffer.getvalue()
    if width == 100 and "\t" not in text.plain and text.justify is None and text.end == "\n":
        assert fast is not None  # nothing to lay out: the fast path answers


def test_a_row_too_wide_for_the_terminal_is_left_to_rich() -> None:
    row = Row(id=1, session_id="s", role="assistant", text="word " * 40)
    paint = ansi_rows.Paint("standard")
    assert ansi_rows.row_ansi(row, Style(), paint, 100) is None
    assert ansi_rows.row_ansi(row, Style(), paint, None) is not None  # never wrapped
    assert ansi_rows.row_ansi(row, Style(), paint, 300) is not None


MARKDOWN = st.lists(
    st.sampled_from(
        [
            *("**b**", "*i*", "`c`", "# h", "> q", "- item", "1. one", "a | b\n--|--\n1 | 2", "~~s~~"),
            *("[l](u)", "\n", "\n\n", "text ", "    code", "```\nx\n```", "<b>", "\\*", "界"),
        ]
    ),
    max_size=10,
).map("".join)


@settings(max_examples=200, deadline=None)
@given(text=MARKDOWN, width=st.sampled_from([100, 30]))
def test_markdown_parsed_by_the_shared_parser_prints_as_rich_markdown(text: str, width: int) -> None:
    from rich.markdown import Markdown

    from hermes_task.render.rows import parsed_markdown

    ours, ours_buffer = terminal_console(width)
    ours.print(parsed_markdown(text))
    theirs, theirs_buffer = terminal_console(width)
    theirs.print(Markdown(text, hyperlinks=False))
    assert ours_buffer.getvalue() == theirs_buffer.getvalue()
