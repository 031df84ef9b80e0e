"""The demo (tools/demo.py) on a small real terminal, for each backend of the suite (issue 26
item 6): it runs its steps in order, each within one screen, never waits in a pager (a pager
that would hang is configured: the run must finish), prints each warning once, takes the
parent from `parents` and the child from `recover`, and on a terminal waits for Enter."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from tests.support.backends import BACKEND_NAMES
from tests.support.terminal import run_on_terminal

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
ROWS = 24


def steps(seen: list[str]) -> dict[str, list[str]]:
    """Each `# N.` step's screen lines, from its title to the next title or demo line."""
    out: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in seen:
        if line.startswith("# "):
            current = out.setdefault(line, [])
        elif line.startswith(("demo: ", "(the next steps")):
            current = None
        if current is not None:
            current.append(line)
    return out


@pytest.mark.parametrize("name", BACKEND_NAMES)
def test_the_demo_on_an_80_by_24_terminal(name: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES")}
    env |= {"PYTHONPATH": str(ROOT), "PAGER": "sleep 600"}  # a pager the demo must not start
    screen = run_on_terminal(
        [sys.executable, str(ROOT / "tools" / "demo.py"), "--backend", name],
        env,
        columns=80,
        rows=ROWS,
        timeout=120,
        replies=[("press Enter", "\r")],
    )
    assert screen.code == 0, "\n".join(screen.seen)
    assert not screen.cursor_hidden
    seen = screen.seen
    found = steps(seen)
    titles = [title.split()[1] for title in found]
    assert titles == ["0.", "the", "1.", "2.", "3.", "4."], titles
    for title, lines in found.items():
        assert len(lines) <= ROWS, (title, lines)  # one screen
    warnings = [line for line in seen if line.startswith("warning: ")]
    assert len(warnings) == len(set(warnings)), warnings  # each warning once
    blocks = [[line for line in lines if line.strip()] for lines in found.values()]
    listed, piped_parent, table, piped_child, _show, watch = blocks
    assert piped_parent[1].startswith("$ hermes-task parents | cut -f1")
    parent = piped_parent[-1].strip()
    assert parent in listed[3].split()  # the first chat `parents` listed (after title, $, header)
    child = piped_child[-1].strip()
    assert any(child in line.split() for line in table)  # whole in recover's table
    assert any(line.startswith("every task ended (completed)") for line in watch)
    assert "Stop it: press Enter or Ctrl-C here." in seen
    assert seen[-1] == "dashboard stopped."
