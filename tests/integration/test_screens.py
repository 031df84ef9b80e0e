"""The live screens on a real pseudo-terminal, on every real backend (issue 26 items 4, 5, 8):
no mock of isatty, the screen read back through a terminal emulator (tests/support/terminal.py).

- `recover --watch` until done: nothing before the first read, the setup's warning once
  and above the table, the last frame kept with the verdict, the cursor shown, every child
  id whole;
- `follow --parent --tail 2`: each task's last rows prefixed, the setup's warning once (not
  once per task), each child id whole on its task's status line;
- `show CHILD` through the pager set to `cat`: every segment id of the lineage whole, no line
  wider than the screen.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
from tests.integration.test_terminal import terminal_env
from tests.support.backends import legacy_stderr
from tests.support.cli_runner import hermes_task
from tests.support.terminal import run_on_terminal

from hermes_task.render.terminal_rows import width_of

pytestmark = pytest.mark.integration

GOALS = ["Run the unit tests", "Build the wheel"]


def cli(backend: Any, *args: str) -> list[str]:
    return [sys.executable, "-m", "hermes_task", *args, "--url", backend.url]


def words(lines: list[str]) -> list[set[str]]:
    return [set(line.split()) for line in lines]


def whole(ref: str, lines: list[str]) -> bool:
    return any(ref in each for each in words(lines))


def notes_stand_alone(seen: list[str]) -> None:
    """Each note starts its line: none is glued to the end of another line."""
    for line in seen:
        first = min((line.find(w) for w in ("warning: ", "retrying: ", "error: ") if w in line), default=0)
        assert first == 0, (line, seen)


def setup_warning(backend: Any) -> str:
    return legacy_stderr(backend.features).strip()


def test_recover_watch_on_a_terminal_until_every_task_ended(backend: Any) -> None:
    unit = backend.watch_parent(GOALS)
    done = lambda: backend.complete_unit(unit, ["completed", "completed"])  # noqa: E731
    screen = run_on_terminal(
        cli(backend, "recover", unit["parent"], "--watch", "--exit-status", "--timeout", "90"),
        terminal_env(backend),
        columns=100,
        rows=40,
        timeout=90,
        replies=[("(Ctrl-C stops)", done)],  # the table is shown: the tasks complete now
    )
    assert screen.code == 0, screen.text
    assert not screen.cursor_hidden
    assert "no delegated tasks" not in screen.text
    seen = screen.seen
    warning = setup_warning(backend)
    if warning:  # said before the first table, once
        assert screen.text.startswith(warning[:60])
        assert sum(line.startswith("warning: ") for line in seen) == 1
    notes_stand_alone(seen)
    assert seen[-1] == "every task ended (completed) · 2 of 2 tasks terminal"
    assert not any("Ctrl-C stops" in line for line in seen)
    for child in unit["children"]:
        assert whole(child, seen), (child, seen)
    assert max(width_of(line) for line in seen) <= 100


def test_follow_parent_on_a_terminal_tails_each_task_and_warns_once(backend: Any) -> None:
    unit = backend.watch_parent(GOALS)
    done = lambda: backend.complete_unit(unit, ["completed", "failed"])  # noqa: E731
    screen = run_on_terminal(
        cli(backend, "follow", "--parent", unit["parent"], "--tail", "2", "--exit-status", "--timeout", "90"),
        terminal_env(backend),
        columns=100,
        rows=40,
        timeout=90,
        replies=[("1.2 │ ▌ user", done)],  # both tasks' rows are shown: the unit completes now
    )
    assert screen.code == 8, screen.text  # one task failed, by the parent's verdict
    text = screen.text.split("\n")  # stderr news are whole lines there (the terminal wraps them)
    warning = setup_warning(backend)
    assert sum(line.startswith("warning: ") for line in text) == (1 if warning else 0), screen.text
    for number, child, goal in zip(["1.1", "1.2"], unit["children"], GOALS, strict=True):
        assert sum(f"· child {child}" in line for line in text) == 1, (child, screen.text)
        assert f"{number} │ ▌ user" in "\n".join(text)
        assert f"{number} │   {goal}" in text, screen.text
    assert any(line.startswith("1.2 │ ✗ failed") for line in text), screen.text
    notes_stand_alone(screen.seen)
    assert not screen.cursor_hidden


def test_show_through_the_pager_set_to_cat_prints_every_segment_id_whole(backend: Any) -> None:
    root = backend.manifest["c1"]["root"]
    known = hermes_task(backend, "show", root, "--json")
    assert known.code == 0, known.stderr
    lineage = known.json()["task"]["lineage"]
    assert len(lineage) >= 2
    env = terminal_env(backend) | {"PAGER": "cat"}
    screen = run_on_terminal(cli(backend, "show", root), env, columns=80, rows=24, timeout=60)
    assert screen.code == 0, screen.text
    seen: list[str] = screen.seen
    for sid in lineage:
        assert whole(sid, seen), (sid, seen[-5:])
    assert any(line.startswith(f"task {root} · ") for line in seen[-5:]), seen[-5:]  # the footer
    laid_out = [line for line in seen if not line.startswith(("warning: ", "error: "))]
    assert max(width_of(line) for line in laid_out) <= 80
    assert "(END)" not in screen.text
    assert json.loads(known.stdout)["task"]["root_id"] == root
