"""Issue 16, item 12: `--tail`, `--role`, `--quiet`, one spelling of "error:", and terminal
lines that are neither padded nor broken mid-message."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from rich.segment import Segment
from typer.testing import CliRunner

from hermes_task.cli.app import app
from hermes_task.cli.options import Environment, RoleName
from hermes_task.cli.session import QuietNotes
from hermes_task.core.documents import WarningItem
from hermes_task.core.projection import ROLES
from hermes_task.core.ui_strings import SETUP_WARNINGS, WarningCode
from hermes_task.reading.polling import PollConfig
from hermes_task.render.terminal import strip_line_ends
from tests.support.cli_runner import invoke
from tests.support.dashboard import serving
from tests.support.replay import BASE_URL, TOKEN, Replay
from tests.unit.test_follow_cli import CLOCKS, Dash, FakeTime
from tests.unit.test_follow_cli import events as follow_events
from tests.unit.test_follow_cli import run as follow_run
from tests.unit.test_poll import Clock, Lineage, X, follow, running

ENV = {"HERMES_DASHBOARD_TOKEN": TOKEN, "NO_COLOR": "1", "COLUMNS": "100", "XDG_CONFIG_HOME": "/nonexistent"}
MISSING = "20000101_000000_000000"


@pytest.fixture(params=["official", "iot"])
def replay(request: pytest.FixtureRequest) -> Iterator[Replay]:
    rep = Replay(request.param)
    with serving(rep):
        yield rep


def show(*args: str, tty: bool = False, env: dict[str, str] | None = None) -> Any:
    obj = Environment(isatty=lambda stream: True) if tty else None
    return invoke("show", *args, env={"LINES": "1000", **(env or {})}, environment=obj)


def doc_of(result: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(result.stdout)
    return data


# -- --tail and --role on show ----------------------------------------------------------------


def test_show_tail_keeps_the_last_rows_and_the_whole_coverage(replay: Replay) -> None:
    c1 = replay.manifest["c1"]
    whole = doc_of(show(c1["root"], "--tip", c1["tip"], "--json"))
    result = show(c1["root"], "--tip", c1["tip"], "--json", "--tail", "3")
    assert result.exit_code == 0, result.stderr
    data = doc_of(result)
    assert data["rows"] == whole["rows"][-3:]
    assert data["coverage"] == whole["coverage"]  # still counts every row of the window
    assert data["warnings"] == whole["warnings"]
    assert sum(s["rows_shown"] for s in data["task"]["segments"]) == 3
    assert doc_of(show(c1["root"], "--tip", c1["tip"], "--json", "--tail", "0"))["rows"] == []
    many = doc_of(show(c1["root"], "--tip", c1["tip"], "--json", "--tail", "100000"))
    assert many["rows"] == whole["rows"]


def test_show_role_filters_rows_in_json_and_on_the_terminal(replay: Replay) -> None:
    c1 = replay.manifest["c1"]
    whole = doc_of(show(c1["root"], "--tip", c1["tip"], "--json"))
    data = doc_of(show(c1["root"], "--tip", c1["tip"], "--json", "--role", "tool"))
    tools = [r for r in whole["rows"] if r["role"] == "tool"]
    assert tools
    assert data["rows"] == tools
    assert data["coverage"] == whole["coverage"]
    both = doc_of(show(c1["root"], "--tip", c1["tip"], "--json", "--role", "USER", "--role", "assistant"))
    assert both["rows"] == [r for r in whole["rows"] if r["role"] in ("user", "assistant", "agent")]
    last_tool = doc_of(show(c1["root"], "--tip", c1["tip"], "--json", "--role", "tool", "--tail", "1"))
    assert last_tool["rows"] == tools[-1:]  # --tail counts the rows --role kept
    text = show(c1["root"], "--tip", c1["tip"], "--role", "user")
    assert text.exit_code == 0
    assert "▌ tool" not in text.stdout
    assert "▌ assistant" not in text.stdout
    assert "▌ user" in text.stdout
    users = sum(r["role"] == "user" for r in whole["rows"])
    assert f"· {users} rows shown" in text.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--tail", "-1"], "Invalid value for '--tail': -1 is below 0 (0 prints no row)"),
        (["--tail", "many"], "Invalid value for '--tail': 'many' is not a valid int."),
        (["--role", "robot"], "Invalid value for '--role': 'robot' is not one of"),
    ],
)
@pytest.mark.parametrize("command", ["show", "follow"])
def test_bad_tail_and_role_values_are_usage_errors(command: str, args: list[str], message: str) -> None:
    result = CliRunner().invoke(app, [command, MISSING, *args, "--url", BASE_URL], env=ENV)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith(f"error: invalid usage: {message}")


def test_the_role_names_are_one_list() -> None:
    assert tuple(RoleName) == ROLES


# -- --tail and --role on follow -------------------------------------------------------------


@pytest.mark.parametrize(("tail", "kept"), [(None, 3), (2, 2), (0, 0)])
def test_follow_tail_cuts_only_the_rows_already_there(tail: int | None, kept: int) -> None:
    client, first = running(rows=3)
    later: list[tuple[str, int]] = []
    clock = Clock([lambda: later.extend(client.append(X, 2)), lambda: client.end(X, "agent_close")])
    from hermes_task.core.projection import RowFilter

    outcome, recorder = follow(client, clock, rows=RowFilter(tail=tail))
    assert outcome.exit_code == 0
    assert recorder.row_keys == first[len(first) - kept :] + later
    assert len(later) == 2


def test_follow_role_filters_every_report() -> None:
    client: Lineage
    client, first = running(rows=2)
    client.rows[X][0]["role"] = "user"
    clock = Clock([lambda: client.append(X, 2), lambda: client.end(X, "agent_close")])
    from hermes_task.core.projection import RowFilter

    outcome, recorder = follow(client, clock, rows=RowFilter(roles=frozenset({"user"})))
    assert outcome.exit_code == 0
    assert recorder.row_keys == first[:1]  # the appended rows are assistant rows


def test_follow_cli_tail_zero_prints_only_new_rows() -> None:
    served = Dash("iot")
    fake = FakeTime(pytest.MonkeyPatch())
    CLOCKS.append(fake)
    try:
        with serving(served.handle):
            fake.steps = [lambda: served.append("Pass 2: 43 passed."), lambda: served.end("agent_close")]
            result = follow_run(served.sid, "--json", "--tail", "0")
    finally:
        CLOCKS.remove(fake)
    assert result.exit_code == 0, result.stderr
    rows = [e for e in follow_events(result) if e["type"] == "row"]
    assert [r["text"] for r in rows] == ["Pass 2: 43 passed."]
    assert follow_events(result)[-1]["exit_code"] == 0


def test_follow_config_selects_nothing_by_default() -> None:
    assert PollConfig().rows.select([]) == []
    assert not PollConfig().rows.roles
    assert PollConfig().rows.tail is None


# -- --quiet ------------------------------------------------------------------------------------


def test_quiet_drops_the_repeating_warnings_from_stderr_only() -> None:
    rep = Replay("official")  # 0.19: every command warns legacy_backend
    with serving(rep):
        c1 = rep.manifest["c1"]
        loud = show(c1["root"], "--no-hint")
        quiet = show(c1["root"], "--no-hint", "--quiet")
        short = show(c1["root"], "--no-hint", "-q")
        as_json = show(c1["root"], "--no-hint", "--quiet", "--json")
    assert "warning: legacy backend" in loud.stderr
    assert "warning: partial history" in loud.stderr
    assert quiet.exit_code == 0
    assert quiet.stdout == loud.stdout
    assert quiet.stderr.splitlines() == [
        line for line in loud.stderr.splitlines() if "legacy backend" not in line
    ]
    assert "warning: partial history" in quiet.stderr  # about the task: always said
    assert short.stderr == quiet.stderr
    assert [w["code"] for w in doc_of(as_json)["warnings"]] == ["legacy_backend", "partial_history"]
    assert as_json.stderr == ""


COMMAND_LINES = [["show"], ["follow"], ["older"], ["parents"], ["recover"], ["search"], ["export"], ["completion"],
                 ["schema"], ["config", "path"], ["config", "show"], ["tui"]]  # fmt: skip


def test_every_command_takes_quiet_as_the_readme_says() -> None:
    from hermes_task.cli.app import COMMANDS

    assert {line[0] for line in COMMAND_LINES} == set(COMMANDS)
    for line in COMMAND_LINES:
        assert "--quiet" in CliRunner().invoke(app, [*line, "--help"], env=ENV).stdout, line


@pytest.mark.parametrize(
    "argv", [["schema"], ["schema", "tasks"], ["completion", "bash"], ["config", "path"]]
)
def test_quiet_where_nothing_warns_changes_nothing(argv: list[str]) -> None:
    plain = CliRunner().invoke(app, argv, env=ENV)
    quiet = CliRunner().invoke(app, [*argv, "--quiet"], env=ENV)
    short = CliRunner().invoke(app, [*argv, "-q"], env=ENV)
    assert quiet.exit_code == short.exit_code == plain.exit_code == 0
    assert quiet.stdout == short.stdout == plain.stdout != ""


def test_quiet_follow_keeps_json_warning_events() -> None:
    served = Dash("official")
    fake = FakeTime(pytest.MonkeyPatch())
    CLOCKS.append(fake)
    try:
        with serving(served.handle):
            fake.steps = [lambda: served.end("agent_close")]
            text = follow_run(served.sid, "--quiet")
            fake.steps = [lambda: served.end("agent_close")]
            as_json = follow_run(served.sid, "--quiet", "--json")
    finally:
        CLOCKS.remove(fake)
    assert text.exit_code == 0, text.stderr
    assert "legacy" not in text.stderr
    assert text.stderr.splitlines() == [f"task {served.sid} ended (agent_close) · 3 rows"]
    codes = [e["code"] for e in follow_events(as_json) if e["type"] == "warning"]
    assert codes == ["legacy_backend"]


class Notes:
    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    def warning(self, item: WarningItem) -> None:
        self.seen.append(("warning", item.code))

    def child_warning(self, entry: str, item: WarningItem) -> None:
        self.seen.append((entry, item.code))

    def result(self, outcome: str) -> None:
        self.seen.append(("result", outcome))


def test_quiet_notes_drop_only_repeating_warnings_and_pass_the_rest() -> None:
    inner = Notes()
    notes = QuietNotes(inner)
    for code in (
        WarningCode.legacy_backend,
        WarningCode.store_unavailable,
        WarningCode.partial_history,
        WarningCode.gap,
    ):
        notes.warning(WarningItem(code=code, message=code))
        notes.child_warning("1.1", WarningItem(code=code, message=code))
    notes.result("ended")
    assert inner.seen == [
        ("warning", "partial_history"),
        ("1.1", "partial_history"),
        ("warning", "gap"),
        ("1.1", "gap"),
        ("result", "ended"),
    ]
    assert frozenset({"legacy_backend", "store_unavailable"}) == SETUP_WARNINGS


# -- terminal lines ---------------------------------------------------------------------------


def test_terminal_lines_carry_no_trailing_spaces(replay: Replay) -> None:
    c1 = replay.manifest["c1"]
    result = show(c1["root"], "--tip", c1["tip"], "--no-pager", tty=True, env={"COLUMNS": "70"})
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) > 20
    assert [line for line in lines if line != line.rstrip()] == []
    coloured = show(c1["root"], "--tip", c1["tip"], "--no-pager", "--color", "always", tty=True)
    assert coloured.exit_code == 0, coloured.stderr
    # a padded line ends in a space and then a reset code: look past rich's SGR codes
    visible = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in coloured.stdout.splitlines()]
    assert "\x1b[" in coloured.stdout
    assert len(visible) > 20
    assert [line for line in visible if line.endswith(" ")] == []


def test_terminal_error_messages_stay_one_line() -> None:
    with serving(Replay("iot")):
        result = show(MISSING, tty=True, env={"COLUMNS": "40"})
    assert result.exit_code == 4
    assert result.stderr.splitlines() == [
        f"error: session not found: {MISSING} (GET /api/sessions/{MISSING})",
        "hint: check the full id; a just-started child may need a moment to be flushed",
    ]


def test_strip_line_ends_removes_only_trailing_spaces() -> None:
    from rich.control import Control

    move = Control.move_to(0, 0).segment
    segments = [Segment("a  "), Segment("b \t "), Segment("   \n"), move, Segment("c "), Segment("  \nd  ")]
    out = list(strip_line_ends(segments))
    assert "".join(s.text for s in out) == "a  b \t\n" + move.text + "c\nd  "
    assert move in out


# -- one spelling of "error:" ------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["show"],
        ["show", "a", "b"],
        ["show", "x", "--bogus"],
        ["follow"],
        ["follow", "x", "--interval", "0.1"],
        ["older", "x", "--all", "--pages", "2"],
        ["nosuch"],
        ["schema", "nope"],
        ["config", "nope"],
        ["show", ""],
        ["show", "x", "--url", "ftp://x"],
        ["show", MISSING, "--url", "http://127.0.0.1:9"],
        ["follow", "..", "--json", "--url", "http://127.0.0.1:9"],
        ["recover", MISSING, "--url", "http://127.0.0.1:9", "--request-timeout", "0.5"],
    ],
)
@pytest.mark.parametrize("tty", [False, True])
def test_every_failure_is_spelled_error_colon(args: list[str], tty: bool) -> None:
    obj = Environment(isatty=lambda stream: True) if tty else None
    result = CliRunner().invoke(app, args, env={**ENV, "COLUMNS": "40"}, obj=obj)
    assert result.exit_code in (2, 7)
    first = result.stderr.splitlines()[0]
    assert first.startswith("error: ")
    assert "Error" not in result.stderr
    assert [line for line in result.stderr.splitlines() if "error" in line.lower()] == [first]
