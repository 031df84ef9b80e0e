"""Issue 26: `COLUMNS=0` or an absurd width falls back to a sane one (the terminal's own size,
else 80) instead of blank lines or no table; on a real pseudo-terminal (no mock of isatty),
`show` and `recover` against the captured exchanges."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from hermes_task.cli.session import columns, terminal_size
from hermes_task.render.terminal_rows import width_of
from tests.support.replay import TOKEN, Replay

ROOT = Path(__file__).resolve().parents[2]
SGR = re.compile(r"\x1b\[[0-9;]*m")
RUN = """
import sys

import httpx

sys.path.insert(0, sys.argv[1])
from tests.support.replay import BASE_URL, Replay

replay = Replay(sys.argv[2])
from hermes_task.cli.app import app
from hermes_task.cli.options import Environment

try:
    app([*sys.argv[3:], "--url", BASE_URL], prog_name="hermes-task", obj=Environment(transport=httpx.MockTransport(replay)))
except SystemExit as exc:
    print(f"exit {exc.code}", file=sys.stderr)
"""


def on_a_terminal(
    args: list[str], *, columns: str | None, size: tuple[int, int] = (0, 0), backend: str = "iot"
) -> tuple[str, str]:
    """Run the CLI with stdout on a new pseudo-terminal of `size` (rows, columns; 0 x 0 is
    what a fresh one reports) and COLUMNS as given; (what the terminal showed, stderr)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", size[0], size[1], 0, 0))
    env = {
        "PATH": "/usr/bin:/bin",
        "HERMES_DASHBOARD_TOKEN": TOKEN,
        "XDG_CONFIG_HOME": "/nonexistent",
        "HERMES_TASK_PAGER": "",
        "TERM": "xterm",
        "TZ": "UTC",
        "HERMES_TASK_STORE": os.environ["HERMES_TASK_STORE"],  # conftest's empty store
        **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"},  # a run against a source tree
    }
    if columns is not None:
        env["COLUMNS"] = columns
    proc = subprocess.Popen(
        [sys.executable, "-c", RUN, str(ROOT), backend, *args],
        stdout=slave,
        stderr=subprocess.PIPE,
        env=env,
        cwd=ROOT,
    )
    os.close(slave)
    shown = bytearray()
    while True:
        ready, _, _ = select.select([master], [], [], 30)
        if not ready:
            proc.kill()
            raise AssertionError("the CLI stopped writing")
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        shown += chunk
    os.close(master)
    assert proc.stderr is not None
    with proc.stderr:
        err = proc.stderr.read().decode()
    proc.wait(timeout=30)
    return shown.decode().replace("\r\n", "\n"), err


@pytest.mark.parametrize("value", ["0", "5", "99999", "abc"])
def test_show_on_a_terminal_with_an_absurd_columns_paints_at_80(value: str) -> None:
    rich = Replay("iot").manifest["rich"]["id"]
    shown, err = on_a_terminal(["show", rich, "--no-pager"], columns=value)
    assert err.endswith("exit 0\n"), err
    lines = SGR.sub("", shown).split("\n")
    assert "▌ user" in lines[lines.index("") + 1]  # the first row, under the goal and usage lines
    assert max(width_of(line) for line in lines) <= 80
    assert max(width_of(line) for line in lines) > 60  # wrapped at 80, not at a narrower width
    assert sum(1 for line in lines if line.strip()) > 20


def test_show_on_a_terminal_takes_its_own_width_when_columns_is_absurd() -> None:
    rich = Replay("iot").manifest["rich"]["id"]
    shown, err = on_a_terminal(["show", rich, "--no-pager"], columns="0", size=(50, 52))
    assert err.endswith("exit 0\n"), err
    widths = [width_of(line) for line in SGR.sub("", shown).split("\n")]
    assert 45 < max(widths) <= 52


@pytest.mark.parametrize("value", ["0", "99999"])
def test_recover_on_a_terminal_with_an_absurd_columns_prints_its_table(value: str) -> None:
    replay = Replay("iot")
    shown, err = on_a_terminal(["recover", replay.manifest["parent"]], columns=value)
    assert err.endswith("exit 0\n"), err
    text = SGR.sub("", shown)
    assert "5 tasks · 4 terminal · running" in text
    assert max(width_of(line) for line in text.split("\n")) <= 80


def test_the_width_rules() -> None:
    class Fake:
        def fileno(self) -> int:
            raise ValueError("no terminal")

    assert terminal_size({"COLUMNS": "0"}, Fake()) == (80, 25)
    assert terminal_size({"COLUMNS": "120", "LINES": "40"}, Fake()) == (120, 40)
    assert terminal_size({"COLUMNS": "100000", "LINES": "0"}, Fake()) == (80, 25)
    assert columns({"COLUMNS": "0"}) == 100  # piped: the goal line is cut at 100 by default
    assert columns({"COLUMNS": "60"}) == 60
