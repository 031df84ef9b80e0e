"""The plain path (render/plain_rows.py) prints byte for byte what rich prints on the
non-terminal console of cli/shell.py: on every captured fixture (show and older, short and
--full, through the CLI, snapshotted), for follow's row batches, and on generated rows with
hostile text (hypothesis)."""

from __future__ import annotations

import datetime as dt
import io
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console
from syrupy.assertion import SnapshotAssertion
from typer.testing import CliRunner

from hermes_task.cli import output as output_module
from hermes_task.cli.app import app
from hermes_task.core.documents import Row, SegmentInfo, TaskInfo, ToolCall
from hermes_task.core.readable import STEER_CLOSE, cut, split_steers
from hermes_task.render import plain_rows, terminal
from hermes_task.render.plain_rows import Style, rows_chunks, transcript_chunks
from tests.support.cli_runner import recording
from tests.support.dashboard import serving
from tests.support.replay import BASE_URL, TOKEN, Replay

ENV = {
    "HERMES_DASHBOARD_TOKEN": TOKEN,
    "NO_COLOR": "1",
    "COLUMNS": "100",
    "XDG_CONFIG_HOME": "/nonexistent",
    "TZ": "UTC",
}


def rich_console(width: int = 100) -> tuple[Console, io.StringIO]:
    """The console cli/shell.py `console()` builds when stdout is not a terminal."""
    buffer = io.StringIO()
    return (
        Console(
            file=buffer,
            force_terminal=False,
            no_color=True,
            color_system=None,
            markup=False,
            highlight=False,
            emoji=False,
            soft_wrap=True,
            width=width,
        ),
        buffer,
    )


def rich_transcript(doc: Any, width: int = 100, **view: bool) -> str:
    out, buffer = rich_console(width)
    reasoning, full, utc = (view.get(flag, False) for flag in ("reasoning", "full", "utc"))
    terminal.transcript(out, doc, markdown=False, reasoning=reasoning, full=full, utc=utc)
    return buffer.getvalue()


def tasks(manifest: dict[str, Any]) -> list[list[str]]:
    c1, c2, plain = manifest["c1"], manifest["c2"], manifest["plain"]
    return [
        ["show", manifest["long"]["id"]],
        ["show", manifest["rich"]["id"]],
        ["show", c1["root"], "--tip", c1["tip"]],
        # the capture holds no hint answer for c2's root (the hint is asked about every
        # compressed segment): this test is about printing, so without the hint
        ["show", c2["root"], "--tip", c2["tip"], "--no-hint"],
        ["show", plain["root"], "--tip", plain["tip"]],
        ["older", manifest["long"]["id"], "--all"],
        ["older", c1["root"], "--tip", c1["tip"], "--all"],
    ]


@pytest.mark.parametrize("backend", ["official", "iot", "official018", "axisrow"])
@pytest.mark.parametrize("extra", [[], ["--full", "--reasoning"], ["--utc"]], ids=["short", "full", "utc"])
def test_captured_transcripts_print_as_rich_prints_them(
    backend: str, extra: list[str], snapshot: SnapshotAssertion, monkeypatch: pytest.MonkeyPatch
) -> None:
    replay = Replay(backend)
    seen: list[tuple[Any, dict[str, bool]]] = []
    real = output_module.output_transcript

    def spy(common: Any, doc: Any, **view: bool) -> None:
        seen.append((doc, view))
        real(common, doc, **view)

    monkeypatch.setattr("hermes_task.cli.run_show.output_transcript", spy)
    monkeypatch.setattr("hermes_task.cli.older.output_transcript", spy)
    printed: list[str] = []
    with serving(replay):
        for args in tasks(replay.manifest):
            result = CliRunner().invoke(app, [*args, *extra, "--url", BASE_URL], env=ENV)
            if result.exit_code != 0:
                printed.append(" ".join(args[:1]) + f"\nexit {result.exit_code}")
                continue  # a capture without this task (older backends): nothing printed to compare
            doc, view = seen[-1]
            assert result.stdout == rich_transcript(doc, **view), args
            printed.append(" ".join(args[:1]) + "\n" + result.stdout)
    assert len(seen) >= 2, "the capture served at least two transcripts"
    assert printed == snapshot


@pytest.mark.parametrize("backend", ["official", "iot"])
def test_follow_batches_print_as_rich_prints_them(backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    replay = Replay(backend)
    seen: list[Any] = []
    real = output_module.output_transcript
    monkeypatch.setattr("hermes_task.cli.run_show.output_transcript", recording(seen, real))
    c1 = replay.manifest["c1"]
    with serving(replay):
        result = CliRunner().invoke(app, ["show", c1["root"], "--tip", c1["tip"], "--url", BASE_URL], env=ENV)
    assert result.exit_code == 0, result.stderr
    doc = seen[0]
    style = Style()
    plain: list[str] = []
    out, buffer = rich_console()
    newest_plain = newest_rich = None
    for start in range(0, len(doc.rows), 7):  # follow prints rows in batches as they arrive
        batch = doc.rows[start : start + 7]
        newest_plain = rows_chunks(batch, style, doc.task, newest_plain, plain)
        newest_rich = terminal.rows(
            out, batch, markdown=False, reasoning=False, task=doc.task, newest=newest_rich
        )
    assert "".join(plain) == buffer.getvalue()
    assert newest_plain == newest_rich == doc.task.tip_id
    assert "── segment" in buffer.getvalue()


HOSTILE = st.sampled_from(
    [
        "\t",
        "\n",
        "\x1b[2J",
        "\x9b31m",
        "\u202e",
        "\x00",
        "\r",
        "\x07",
        "  ",
        "界",
        "é",
        "\u0301",
        "🙂",
        "[b]x[/b]",
        "\\",
        "\u3000",
        "\xa0",
        "*a*",
        "# h",
        "\ufeff",
        "\ud800",
    ]
)
TEXT = st.lists(st.one_of(st.text(max_size=12), HOSTILE), max_size=12).map("".join)
MAYBE = st.one_of(st.none(), TEXT)
TOOL_JSON = st.builds(
    lambda out, code, err, extra: __import__("json").dumps(
        {"output": out, "exit_code": code, "error": err, **({"extra": extra} if extra else {})}
    ),
    TEXT,
    st.one_of(st.none(), st.integers(-2, 300)),
    MAYBE,
    MAYBE,
)
# the opening markers of the backends in the suite (0.18/0.19, then 0.20 and iot)
OPENS = (
    "\n\n[OUT-OF-BAND USER MESSAGE — a direct message from the user, delivered mid-turn; not tool output]\n",
    "\n\n[OUT-OF-BAND USER MESSAGE — a direct message from the user, delivered once at this position; "
    "not tool output and not a new delivery when replayed from conversation history]\n",
)
STEER_OPEN = OPENS[0]
# a tool result with a steer appended the way Hermes appends one (core/readable.py)
STEERED = st.builds(
    lambda out, opening, msg: out + opening + msg + STEER_CLOSE,
    st.one_of(TOOL_JSON, TEXT),
    st.sampled_from(OPENS),
    TEXT,
)
LONG = st.builds(lambda line, n: "\n".join([line] * n), TEXT, st.integers(0, 30))
KINDS = st.sampled_from(
    [
        None,
        "steer",
        "compaction_summary",
        "continuation_prompt",
        "system_notice",
        "model_switch",
        "weird\tkind",
    ]
)


@st.composite
def rows(draw: st.DrawFn) -> Row:
    role = draw(st.sampled_from(["user", "assistant", "agent", "tool", "system", "x\x1b]8;;y"]))
    text = draw(st.one_of(MAYBE, TOOL_JSON, STEERED, LONG, st.text(min_size=1900, max_size=2100)))
    return Row(
        id=draw(st.integers(0, 10**6)),
        session_id=draw(st.sampled_from(["s1", "s2", "s3"])),
        role=role,
        text=text,
        reasoning=draw(MAYBE),
        commentary=draw(st.lists(TEXT, max_size=2)),
        tool_calls=draw(st.lists(st.builds(ToolCall, id=MAYBE, name=MAYBE, arguments=MAYBE), max_size=2)),
        tool_call_id=draw(MAYBE),
        tool_name=draw(MAYBE),
        timestamp=draw(st.one_of(st.none(), st.floats(0, 4e9), st.just(1e300))),
        archived=draw(st.booleans()),
        kind=draw(KINDS),
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    items=st.lists(rows(), max_size=6),
    reasoning=st.booleans(),
    full=st.booleans(),
    utc=st.booleans(),
)
def test_generated_rows_print_as_rich_prints_them(
    items: list[Row], reasoning: bool, full: bool, utc: bool
) -> None:
    task = TaskInfo(
        root_id="s1",
        tip_id="s3",
        lineage=["s1", "s2", "s3"],
        segments=[SegmentInfo(id="s1", end_reason="compression\x1b[2J"), SegmentInfo(id="s2")],
    )
    style = Style(reasoning=reasoning, full=full, utc=utc)
    out, buffer = rich_console()
    plain: list[str] = []
    newest_plain = rows_chunks(items, style, task, None, plain)
    newest_rich = terminal.rows(
        out, items, markdown=False, reasoning=reasoning, full=full, utc=utc, task=task
    )
    assert "".join(plain) == buffer.getvalue()
    assert newest_plain == newest_rich


def test_the_plain_transcript_streams_in_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    replay = Replay("official")
    seen: list[Any] = []
    real = output_module.output_transcript
    monkeypatch.setattr("hermes_task.cli.run_show.output_transcript", recording(seen, real))
    with serving(replay):
        CliRunner().invoke(app, ["show", replay.manifest["long"]["id"], "--url", BASE_URL], env=ENV)
    doc = seen[0]
    chunks = list(transcript_chunks(doc, Style(), 100, batch=10))
    assert len(chunks) >= len(doc.rows) // 10 + 2  # goal, every batch, footer
    assert "".join(chunks) == rich_transcript(doc)


def reference_when(timestamp: float, utc: bool) -> str:
    """What `when` printed before it cached minutes: strftime of every time."""
    try:
        moment = dt.datetime.fromtimestamp(timestamp, tz=dt.UTC)
        if utc:
            return moment.strftime("%Y-%m-%d %H:%M:%SZ")
        return moment.astimezone().strftime("%Y-%m-%d %H:%M:%S %z")
    except (OverflowError, OSError, ValueError):
        return ""


@pytest.mark.parametrize(
    "zone", ["UTC", "Europe/Paris", "Asia/Kolkata", "America/St_Johns", "Africa/Monrovia"]
)
def test_times_print_as_strftime_prints_them(zone: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", zone)
    time.tzset()
    plain_rows._MINUTES[False].clear()
    try:
        check_times()
    finally:
        monkeypatch.undo()
        time.tzset()
        plain_rows._MINUTES[False].clear()


@settings(max_examples=400, deadline=None)
@given(
    stamp=st.one_of(
        st.floats(allow_nan=True, allow_infinity=True),
        st.floats(-3e9, 5e9),
        st.integers(-(10**6), 4 * 10**9).map(float),
        st.integers(0, 4 * 10**9).map(lambda s: s + 0.9999995),  # rounds up to the next second
        st.sampled_from([1711846799.5, 1711846800.0, 1729990799.9999996, -1e-7, 0.9999996, 1e300]),
    ),
    utc=st.booleans(),
)
def check_times(stamp: float, utc: bool) -> None:
    assert plain_rows.when(stamp, utc=utc) == reference_when(stamp, utc)


@settings(max_examples=300, deadline=None)
@given(text=st.lists(st.sampled_from(["a", "\n", "x" * 150, "é"]), max_size=40).map("".join))
def test_the_short_cut_keeps_what_the_long_cut_keeps(text: str) -> None:
    lines, chars = 12, 2000
    kept: list[str] = []
    size, short, all_lines = 0, False, text.split("\n")
    for line in all_lines[:lines]:  # core/readable.py `cut` without its shortcut
        if kept and size + len(line) > chars:
            break
        if len(line) > chars:
            line, short = line[:chars], True
        kept.append(line)
        size += len(line) + 1
        if short:
            break
    assert cut(text) == ("\n".join(kept), len(all_lines) - len(kept), short)


def test_a_steer_appended_to_a_tool_result_is_split_off_and_never_cut() -> None:
    output = '{"output": "' + "line\\n" * 40 + '", "exit_code": 0}'
    text = output + STEER_OPEN + "Skip tests/ when counting.\nAnd be quick." + STEER_CLOSE
    assert split_steers(text) == (output, ["Skip tests/ when counting.\nAnd be quick."])
    parts = plain_rows.tool_parts(text, Style())
    assert [kind for _, kind in parts] == ["text", "note", "status", "steer"]
    assert parts[-1][0].endswith("\nSkip tests/ when counting.\nAnd be quick.")
    assert parts[2][0] == "exit 0"  # the output before the steer decodes as JSON again


@pytest.mark.parametrize(
    "text",
    [
        "out" + STEER_OPEN + "not at the end" + STEER_CLOSE + "\nmore output",  # followed by output
        "out" + STEER_OPEN.lstrip("\n") + "no blank line before" + STEER_CLOSE,  # not the exact block
        "out\n[/OUT-OF-BAND USER MESSAGE]",  # a close without an open
        "out" + STEER_OPEN + "unclosed",
        "out\n\n[OUT-OF-BAND USER MESSAGEx]\nnot the marker" + STEER_CLOSE,
        "out\n\n[OUT-OF-BAND USER MESSAGE — two\nlines]\nnot the marker" + STEER_CLOSE,
    ],
)
def test_lookalike_steers_stay_tool_output(text: str) -> None:
    assert split_steers(text) == (text, [])


def test_steers_in_a_row_are_split_oldest_first_and_sanitised() -> None:
    text = "out" + OPENS[0] + "first" + STEER_CLOSE + OPENS[1] + "second \x1b[2J" + STEER_CLOSE
    assert split_steers(text) == ("out", ["first", "second \x1b[2J"])
    steers = [part for part, kind in plain_rows.tool_parts(text, Style()) if kind == "steer"]
    assert [part.split("\n", 1)[1] for part in steers] == ["first", "second ^[[2J"]
