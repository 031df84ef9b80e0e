"""`recover --watch` on a real pseudo-terminal (issue 26 item 4), against the in-memory
dashboard (tests/unit/pty_scenarios.py) and read back through a terminal emulator
(tests/support/terminal.py): nothing is drawn before the first read; a warning or a retry is
a line of its own above the table, never glued to the state line nor drawn inside the live
region; the last frame stays; the cursor is shown again on every ending (the verdict,
Ctrl-C, an internal error, a usage error)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.support.terminal import Screen, on_terminal, run_on_terminal

ROOT = Path(__file__).resolve().parents[2]
LEGACY = "warning: legacy backend (hermes-agent 0.19.x): archived rows are not visible over HTTP"


def environment() -> dict[str, str]:
    """The test's environment: this checkout's src/ first (not an installed copy), then the root
    for tests.unit.pty_scenarios."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES", "NO_COLOR", "FORCE_COLOR"))}
    return env | {
        "HERMES_DASHBOARD_TOKEN": "t",
        "XDG_CONFIG_HOME": "/nonexistent",
        "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}",
    }


def scenario(name: str, columns: int = 120) -> Screen:
    argv = [sys.executable, "-m", "tests.unit.pty_scenarios", name]
    return run_on_terminal(argv, environment(), columns=columns, rows=30, timeout=60)


def notes_stand_alone(seen: list[str]) -> None:
    """Each note starts its line: none is glued to the end of another line."""
    for line in seen:
        first = min((line.find(w) for w in ("warning: ", "retrying: ", "error: ") if w in line), default=0)
        assert first == 0, (line, seen)


def test_the_first_read_comes_first_and_a_retry_is_a_line_above_the_table() -> None:
    screen = scenario("retry")
    assert screen.code == 0, screen.seen
    assert screen.text.startswith(LEGACY)  # nothing drawn before the first read
    assert "no delegated tasks" not in screen.text
    seen = screen.seen
    assert seen[0] == LEGACY
    assert seen[1].startswith("retrying: the dashboard failed with a server error: HTTP 500; next read in ")
    assert seen[2].split()[:3] == ["#", "status", "time"]
    assert [line.split()[:3] for line in seen[3:5]] == [["1.1", "✓", "completed"], ["1.2", "✓", "completed"]]
    assert seen[-1] == "every task ended (completed) · 2 of 2 tasks terminal"
    assert sum(line == LEGACY for line in seen) == 1
    assert not any("Ctrl-C stops" in line for line in seen)  # the state line made way for the ending
    notes_stand_alone(seen)
    assert not screen.cursor_hidden


def test_ctrl_c_keeps_the_last_table_and_shows_the_cursor() -> None:
    screen = scenario("interrupt")
    assert screen.code == 130
    seen = screen.seen
    assert [line.split()[:2] for line in seen[2:4]] == [["1.1", "running"], ["1.2", "running"]]
    assert seen[-1] == "watch stopped · 0 of 2 tasks terminal"
    notes_stand_alone(seen)
    assert not screen.cursor_hidden


def test_an_internal_error_while_the_table_is_shown_still_shows_the_cursor() -> None:
    screen = scenario("crash")
    assert screen.code == 1
    seen = screen.seen
    assert seen[1].startswith("error: internal error")
    assert seen[2].split()[:2] == ["#", "status"]
    assert not any("Ctrl-C stops" in line for line in seen)
    notes_stand_alone(seen)
    assert not screen.cursor_hidden


def test_debug_lines_are_written_above_the_table_never_inside_it() -> None:
    screen = scenario("debug")
    assert screen.code == 0, screen.seen
    seen = screen.seen
    header = [i for i, line in enumerate(seen) if line.split()[:3] == ["#", "status", "time"]]
    assert len(header) == 1, seen  # one table: no frame left behind by a line written inside it
    debug = [i for i, line in enumerate(seen) if "debug: " in line]
    later = [i for i in debug if i > 0 and "watch wait" in seen[i]]
    assert later, seen  # the cycles after the first read wrote their lines
    assert all(seen[i].startswith("debug: ") for i in debug), seen  # each a line of its own
    assert max(debug) < header[0], seen  # all above the table, which stays whole below them
    assert [line.split()[:3] for line in seen[header[0] + 1 : header[0] + 3]] == [
        ["1.1", "✓", "completed"],
        ["1.2", "✓", "completed"],
    ]
    assert seen[-1] == "every task ended (completed) · 2 of 2 tasks terminal"
    assert not screen.cursor_hidden


@pytest.mark.parametrize(
    "args", [[" 20261130_170000_aaaaaa"], ["20261130_170000_aaaaaa", "--status", "bogus"]]
)
def test_a_usage_error_on_a_terminal_draws_no_table_and_leaves_the_cursor_shown(args: list[str]) -> None:
    env = environment() | {"HERMES_DASHBOARD_URL": "http://127.0.0.1:9"}  # never reached
    screen = on_terminal(["recover", *args, "--watch"], env, columns=100, timeout=60)
    assert screen.code == 2, screen.text
    assert screen.seen[0].startswith("error: ")
    assert "no delegated tasks" not in screen.text
    assert "watching" not in screen.text
    assert not screen.cursor_hidden
