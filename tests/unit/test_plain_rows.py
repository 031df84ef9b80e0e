"""The plain painter (render/rows.py): the piped line format of docs/commands.md, held
by its own snapshots on every captured fixture (show and older, short, --full and --utc,
through the CLI), by follow's batches (the same lines as the whole transcript), and by the
format's rules on generated rows with hostile text (hypothesis); the cut of tool output
(core/projection.py) and the split of steers."""

from __future__ import annotations

import datetime as dt
import json
import re
import time
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from syrupy.assertion import SnapshotAssertion
from typer.testing import CliRunner

from hermes_task.cli import session as output_module
from hermes_task.cli.app import app
from hermes_task.core.documents import Row, SegmentInfo, TaskInfo, ToolCall, TranscriptDoc
from hermes_task.core.projection import STEER_CLOSE, cut, split_steers
from hermes_task.render import rows as rows_module
from hermes_task.render.rows import Segments, View, rows_text, tool_blocks, transcript_chunks
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
# Where a line of the plain format may start: a row (header or quiet line), a segment line,
# the goal, the footer, an indented body line; or it is the blank line after a row.
LINE_STARTS = re.compile(r"(▌ |▸ |· |── segment |goal: |usage: |task |  |$)")
FORBIDDEN = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ud800-\udfff]"
)


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
def test_captured_transcripts_in_the_piped_format(
    backend: str, extra: list[str], snapshot: SnapshotAssertion, monkeypatch: pytest.MonkeyPatch
) -> None:
    replay = Replay(backend)
    seen: list[Any] = []
    real = output_module.output_transcript
    monkeypatch.setattr("hermes_task.cli.session.output_transcript", recording(seen, real))
    printed: list[str] = []
    with serving(replay):
        for args in tasks(replay.manifest):
            before = len(seen)
            result = CliRunner().invoke(app, [*args, *extra, "--url", BASE_URL], env=ENV)
            if result.exit_code != 0:
                printed.append(" ".join(args[:1]) + f"\nexit {result.exit_code}")
                continue  # a capture without this task (older backends): nothing printed
            if len(seen) > before:
                rows = seen[-1].rows
            else:  # streamed (`older --all`, cli/older.py): the same command's document
                as_json = CliRunner().invoke(app, [*args, *extra, "--json", "--url", BASE_URL], env=ENV)
                rows = msgspec.json.decode(as_json.stdout, type=TranscriptDoc).rows
            assert_the_format(result.stdout, rows)
            printed.append(" ".join(args[:1]) + "\n" + result.stdout)
    assert len(seen) >= 2, "the capture served at least two transcripts"
    assert printed == snapshot


def assert_the_format(text: str, rows: list[Row]) -> None:
    """The rules of the piped format that hold for any transcript (plain_rows docstring)."""
    lines = text.split("\n")
    assert lines[-1] == "", "ends with a newline"
    assert [line for line in lines if not LINE_STARTS.match(line)] == []
    assert FORBIDDEN.search(text) is None
    assert "\t" not in text
    headers = [line for line in lines if line.startswith(("▌ ", "▸ ", "· "))]
    assert [int(re.findall(r"  #(\d+)", line)[-1]) for line in headers] == [row.id for row in rows]
    under = 1 if lines[0].startswith("goal: ") else 0
    assert [n for n, line in enumerate(lines) if line.startswith("usage: ")] == [under], (
        "usage under the goal"
    )
    footer = lines[-2]
    assert footer.startswith("task ")
    assert f" · {len(rows):,} row{'' if len(rows) == 1 else 's'} shown" in footer


@pytest.mark.parametrize("backend", ["official", "iot"])
def test_follow_batches_print_the_transcripts_rows(backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """follow prints rows in batches as they arrive: the same lines, segment lines included,
    as the whole transcript between its goal and its footer."""
    replay = Replay(backend)
    seen: list[Any] = []
    real = output_module.output_transcript
    monkeypatch.setattr("hermes_task.cli.session.output_transcript", recording(seen, real))
    c1 = replay.manifest["c1"]
    with serving(replay):
        result = CliRunner().invoke(app, ["show", c1["root"], "--tip", c1["tip"], "--url", BASE_URL], env=ENV)
    assert result.exit_code == 0, result.stderr
    doc = seen[0]
    segments = Segments(doc.task)
    batches = [
        rows_text(doc.rows[start : start + 7], View(), segments) for start in range(0, len(doc.rows), 7)
    ]
    chunks = list(transcript_chunks(doc, View(), 100))
    assert "".join(chunks) == result.stdout
    assert chunks[0].startswith("goal: ")
    assert "".join(batches) == "".join(chunks[1:-1])
    assert segments.newest == doc.task.tip_id
    assert "── segment" in "".join(batches)


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
    lambda out, code, err, extra: json.dumps(
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
# a tool result with a steer appended the way Hermes appends one (core/projection.py)
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
def test_generated_rows_keep_the_piped_format(
    items: list[Row], reasoning: bool, full: bool, utc: bool
) -> None:
    """Hostile rows in any view: one header (or quiet) line per row, every other line
    indented or blank, nothing unsafe, no tab, and with --full every character of the text."""
    task = TaskInfo(
        root_id="s1",
        tip_id="s3",
        lineage=["s1", "s2", "s3"],
        segments=[SegmentInfo(id="s1", end_reason="compression\x1b[2J"), SegmentInfo(id="s2")],
    )
    view = View(reasoning=reasoning, full=full, utc=utc)
    segments = Segments(task)
    text = rows_text(items, view, segments)
    lines = text.split("\n")
    assert [line for line in lines if not LINE_STARTS.match(line)] == []
    assert FORBIDDEN.search(text) is None
    assert "\t" not in text
    headers = [line for line in lines if line.startswith(("▌ ", "▸ ", "· "))]
    assert len(headers) == len(items)
    newest, moves = None, 0  # a segment line each time a row is of a later segment than all before
    for row in items:
        if newest is None or task.lineage.index(row.session_id) > task.lineage.index(newest):
            moves += newest is not None
            newest = row.session_id
    assert text.count("── segment ") == moves
    assert segments.newest == newest
    if full:  # every printable line of every text is there
        for row in items:
            for part in (row.text or "").split("\n"):
                if (
                    part.isprintable()
                    and len(part) > 3
                    and not part.startswith("{")
                    and "OUT-OF-BAND" not in part
                ):
                    assert part in text


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
    rows_module._minute.cache_clear()
    try:
        check_times()
    finally:
        monkeypatch.undo()
        time.tzset()
        rows_module._minute.cache_clear()


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
    assert rows_module.when(stamp, utc=utc) == reference_when(stamp, utc)


@settings(max_examples=500, deadline=None)
@given(
    text=st.lists(st.sampled_from(["a", "\n", "\n\n", "x" * 150, "y" * 900, "é", " "]), max_size=60).map(
        "".join
    )
)
def test_a_cut_keeps_the_first_and_the_last_lines(text: str) -> None:
    kept = cut(text)
    short = len(text) <= 2000 and text.count("\n") < 12
    if short:
        assert kept == (text, "", 0, 0, False)
        return
    assert text.startswith(kept.head)
    assert text.endswith(kept.tail)
    assert len(kept.head) + kept.chars + len(kept.tail) == len(text)
    assert kept.chars > 0  # something is left out, said between the two
    assert len(kept.head) <= 666
    assert len(kept.tail) <= 1334
    assert kept.head.count("\n") < 4
    assert kept.tail.count("\n") < 8
    middle = text[len(kept.head) : len(text) - len(kept.tail)]
    if not kept.inside:  # whole lines: the head ends and the tail starts at a line break
        assert middle.startswith("\n")
        assert middle.endswith("\n")
        assert kept.lines == middle.count("\n") - 1
    last = text.rsplit("\n", 1)[-1]
    assert kept.tail.endswith(last[-1334:])  # the end is always shown


@pytest.mark.parametrize(
    ("text", "shown", "note"),
    [
        (
            "\n".join(f"line {i}" for i in range(13)),
            ["line 0", "line 3", "line 5", "line 12"],
            "… 1 line left out (--full)",
        ),
        (
            "\n".join(f"line {i}" for i in range(120)),
            ["line 3", "line 112", "line 119"],
            "… 108 lines left out (--full)",
        ),
        ("x" * 5000, ["x" * 666], "… 3,000 chars left out (--full)"),
    ],
)
def test_a_cut_tool_output_says_what_it_left_out(text: str, shown: list[str], note: str) -> None:
    blocks = tool_blocks(text, View())
    assert [block[0][1] for block in blocks] == ["output", "cut", "output"]
    assert blocks[1][0][0] == note
    body = "\n".join(block[0][0] for block in blocks)
    for line in shown:
        assert line in body.split("\n")
    assert tool_blocks(text, View(full=True)) == [((text, "output"),)]


def test_a_steer_appended_to_a_tool_result_is_split_off_and_never_cut() -> None:
    output = '{"output": "' + "line\\n" * 40 + '", "exit_code": 0}'
    text = output + STEER_OPEN + "Skip tests/ when counting.\nAnd be quick." + STEER_CLOSE
    assert split_steers(text) == (output, ["Skip tests/ when counting.\nAnd be quick."])
    parts = [block[0] for block in tool_blocks(text, View())]
    assert [kind for _, kind in parts] == ["output", "cut", "output", "status", "steer"]
    assert parts[-1][0].endswith("\nSkip tests/ when counting.\nAnd be quick.")
    assert parts[3][0] == "exit 0"  # the output before the steer decodes as JSON again


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
    steers = [part for ((part, kind),) in tool_blocks(text, View()) if kind == "steer"]
    assert [part.split("\n", 1)[1] for part in steers] == ["first", "second ^[[2J"]


@pytest.mark.parametrize(("count", "words"), [(0, "0 rows shown"), (1, "1 row shown"), (2, "2 rows shown")])
def test_the_footer_counts_rows_in_the_singular_too(count: int, words: str) -> None:
    from hermes_task.core.documents import BackendInfo, Coverage, TranscriptDoc
    from hermes_task.render.rows import footer_text

    rows = [Row(id=i, session_id="s1", role="user", text="x") for i in range(count)]
    doc = TranscriptDoc(
        task=TaskInfo(root_id="s1", tip_id="s1", lineage=["s1"]),
        backend=BackendInfo(contract="current"),
        rows=rows,
        coverage=Coverage(unique_rows=count, has_older=False, at_start=True),
    )
    assert footer_text(doc) == f"task s1 · unknown · {words}"


PIPED = """
import sys

import httpx

sys.path.insert(0, sys.argv[1])
from tests.support.replay import BASE_URL, Replay

replay = Replay(sys.argv[2])
manifest = replay.manifest
from hermes_task.cli.app import app
from hermes_task.cli.options import Environment

for args in (["show", manifest["rich"]["id"]], ["older", manifest["long"]["id"], "--all"]):
    try:
        app([*args, "--url", BASE_URL], prog_name="hermes-task", obj=Environment(transport=httpx.MockTransport(replay)))
    except SystemExit as exc:
        print(f"exit {exc.code}", file=sys.stderr)
print(" ".join(sorted(sys.modules)), file=sys.stderr)
"""


def test_piped_show_and_older_import_no_rich() -> None:
    """The plain painter needs no rich (its import is about 70 ms of every piped run)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run(
        [sys.executable, "-c", PIPED, str(root), "iot"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=root,
        env={
            "PATH": "/usr/bin:/bin",
            "NO_COLOR": "1",
            "XDG_CONFIG_HOME": "/nonexistent",
            "HERMES_DASHBOARD_TOKEN": TOKEN,
            "HERMES_TASK_STORE": os.environ["HERMES_TASK_STORE"],
            **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"},  # a run against a source tree
        },
    )
    lines = proc.stderr.splitlines()
    assert lines[:2] == ["exit 0", "exit 0"], proc.stderr[-2000:]
    assert proc.stdout.count("rows shown") == 2
    modules = set(lines[-1].split())
    assert "hermes_task.render.rows" in modules
    assert not {m for m in modules if m.split(".")[0] == "rich"}


def test_the_documented_example_is_what_the_painter_prints(monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/commands.md "Piped rows" shows the format on a transcript that has every kind of
    line: the painter prints exactly that block."""
    from pathlib import Path

    from hermes_task.core.documents import BackendInfo, Coverage, TranscriptDoc, Usage

    docs = (Path(__file__).resolve().parents[2] / "docs" / "commands.md").read_text()
    section = docs.split("### Piped rows", 1)[1]
    block = section.split("```text\n", 1)[1].split("```\n", 1)[0]
    root, tip = "20261130_163400_1f2d7b", "20261130_163404_cb0d97"
    output = "\n".join(f"src/mod_{i}.py:{i}: TODO" for i in range(120))
    result = json.dumps({"output": output, "exit_code": 1, "error": "grep: tests/: No such file"})
    call = ToolCall(id="call_1", name="terminal", arguments='{"command": "grep -rn TODO src/"}')
    at = 1796056440.0  # 2026-11-30 16:34 UTC
    rows = [
        Row(
            id=1,
            session_id=root,
            role="user",
            text="Count TODO markers under src/ and list the files",
            timestamp=at + 1,
        ),
        Row(
            id=2,
            session_id=root,
            role="assistant",
            text=None,
            reasoning="Start with grep.",
            tool_calls=[call],
            timestamp=at + 2,
        ),
        Row(
            id=3,
            session_id=root,
            role="tool",
            text=result,
            tool_name="terminal",
            tool_call_id="call_1",
            timestamp=at + 3,
        ),
        Row(
            id=5,
            session_id=tip,
            role="user",
            text="[System: the previous call was cut off]",
            kind="system_notice",
            timestamp=at + 64,
        ),
        Row(id=6, session_id=tip, role="assistant", text="Found 120 TODO markers.", timestamp=at + 65),
    ]
    task = TaskInfo(
        root_id=root,
        tip_id=tip,
        lineage=[root, tip],
        state="ended",
        end_reason="agent_close",
        goal="Count TODO markers under src/ and list the files",
        segments=[SegmentInfo(id=root, end_reason="compression"), SegmentInfo(id=tip)],
        usage=Usage(
            input_tokens=3940,
            output_tokens=465,
            cache_read_tokens=1600,
            cache_write_tokens=70,
            reasoning_tokens=60,
            api_calls=11,
            cost_usd=0.0401,
            cost_kind="estimated",
            complete=True,
            segments=2,
        ),
    )
    doc = TranscriptDoc(
        task=task,
        backend=BackendInfo(contract="current"),
        rows=rows,
        coverage=Coverage(unique_rows=5, has_older=False, at_start=True),
    )
    monkeypatch.setenv("TZ", "Europe/Paris")
    time.tzset()
    rows_module._minute.cache_clear()
    try:
        assert "".join(transcript_chunks(doc, View(), 100)) == block
    finally:
        monkeypatch.undo()
        time.tzset()
        rows_module._minute.cache_clear()
