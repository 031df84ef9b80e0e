"""`hermes-task tui` on a real pseudo-terminal, on every real backend (issue 37): a seeded
parent whose two tasks run, their children proven from the backend's own store; rows written
to the first child while the screen runs appear in its transcript; the unit completes during
the test and both statuses turn; `q` exits 0 (with --exit-status: the verdict's status). The
screen is read back through a terminal emulator as it is drawn (tests/support/terminal.py
`drive_screen`), at 80x24, 100x30 and 160x45."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from tests.integration.test_terminal import terminal_env
from tests.support.terminal import Display, drive_screen

pytestmark = pytest.mark.integration

GOALS = ["Run the unit tests", "Build the wheel"]


def cli(backend: Any, *args: str) -> list[str]:
    return [sys.executable, "-m", "hermes_task", "tui", *args, "--interval", "1", "--url", backend.url]


def whole(ref: str, display: Display) -> bool:
    return any(ref in line.split() or f" {ref} " in f" {line} " for line in display)


def task_line(display: Display, number: str) -> str:
    """The table's line of a task (its number first in the cell)."""
    lines = [line for line in display if line.lstrip(" ▏▕│┃").startswith(number + " ")]
    assert lines, (number, display)
    return lines[0]


@pytest.mark.parametrize(("columns", "rows"), [(80, 24), (100, 30), (160, 45)])
def test_the_screen_shows_every_task_its_rows_as_they_arrive_and_q_exits_0(
    backend: Any, columns: int, rows: int
) -> None:
    unit = backend.watch_parent(GOALS)
    first, second = unit["children"]

    def both_proven(display: Display) -> bool:
        return whole(first, display) and whole(second, display)

    def rows_arrived(display: Display) -> bool:
        return any("pass 0: 43 passed" in line for line in display)  # the second row, a tool's

    def both_completed(display: Display) -> bool:  # in the table: each task's own line
        lines = [line.lstrip(" ▏▕│┃") for line in display]
        return all(
            any(line.startswith(f"{n} ") and "✓ completed" in line for line in lines) for n in ("1.1", "1.2")
        )

    screen, frames = drive_screen(
        cli(backend, unit["parent"], "--exit-status"),
        terminal_env(backend),
        columns=columns,
        rows=rows,
        steps=[
            (both_proven, lambda: backend.append_rows(first, 2)),
            (rows_arrived, lambda: backend.complete_unit(unit, ["completed", "completed"])),
            (both_completed, "q"),
        ],
        timeout=90,
    )
    assert screen.code == 0, "\n".join(frames[-1] if frames else screen.lines[-40:])
    proven, arrived, completed = frames
    for number in ("1.1", "1.2"):
        assert "running" in task_line(proven, number), proven
        assert "✓ completed" in task_line(completed, number), completed
    assert any(unit["parent"] in line for line in proven)  # the header names the parent
    pane = [line.split("│")[-1].strip() for line in arrived]  # side by side, or stacked below
    at = pane.index(first)  # the selected task's pane: its child id, whole, then its number
    assert pane[at + 1].startswith("task 1.1 · running"), arrived
    assert any("Appended pass 0." in line for line in arrived)  # its rows, as they arrived
    assert all(len(line) <= columns for line in completed)


def test_without_a_parent_the_parents_list_opens_the_chosen_one(backend: Any) -> None:
    """`hermes-task tui`: `parents`' list (the backend's store proposes, the dashboard proves);
    the seeded parent is the newest delegation, first; Enter opens it, its tasks and children."""
    unit = backend.watch_parent(GOALS)
    first, second = unit["children"]

    def listed(display: Display) -> bool:
        return any(unit["parent"] in line for line in display) and any(
            "Enter opens one" in line for line in display
        )

    def opened(display: Display) -> bool:
        return whole(first, display) and whole(second, display)

    screen, frames = drive_screen(
        [sys.executable, "-m", "hermes_task", "tui", "--url", backend.url],
        terminal_env(backend),
        columns=100,
        rows=30,
        steps=[(listed, "\r"), (opened, "q")],
        timeout=90,
    )
    assert screen.code == 0, "\n".join(frames[-1] if frames else screen.lines[-40:])
    parents, tasks = frames
    rows = [line for line in parents if line.strip().startswith("2026") or line.strip().startswith("20")]
    assert rows[0].split()[0] == unit["parent"], parents  # the newest delegation first, its id whole
    assert any(unit["parent"] in line for line in tasks[:3])  # the header names the chosen parent
    for number in ("1.1", "1.2"):
        assert "running" in task_line(tasks, number), tasks


def test_recursive_nests_each_childs_own_tasks_under_it(backend: Any) -> None:
    """`tui --recursive` on a fan-out nested one level (each child dispatched two goals of its
    own, running): every grandchild proven whole, each under its task in the table (`  ↳ 1.1`),
    selecting the first nested task shows its pane (`task 1.1/1.1`); `q` exits 0."""
    unit = backend.fan_out(["Shard one", "Shard two"], nested=2)
    children = unit["children"]
    grand = unit["grandchildren"]
    order = [ref for child in children for ref in (child, *grand[child])]

    def nested_shown(display: Display) -> bool:
        return all(whole(ref, display) for ref in order)

    def nested_selected(display: Display) -> bool:
        return any("task 1.1/1.1 · running" in line for line in display)

    screen, frames = drive_screen(
        cli(backend, unit["parent"], "--recursive"),
        terminal_env(backend),
        columns=160,
        rows=45,
        steps=[(nested_shown, "j"), (nested_selected, "q")],
        timeout=90,
    )
    assert screen.code == 0, "\n".join(frames[-1] if frames else screen.lines[-40:])
    shown, selected = frames
    table = [line.split("│")[0] for line in shown]  # the table, left of the transcript
    at = [next(i for i, line in enumerate(table) if ref in line.split()) for ref in order]
    assert at == sorted(at), shown  # each child's tasks right under its task
    for child in children:
        for number, ref in zip(("1.1", "1.2"), grand[child], strict=True):
            line = table[at[order.index(ref)]]
            assert f"↳ {number} " in line, shown
            assert "running" in line, shown
    pane = [line.split("│")[-1].strip() for line in selected]
    first = grand[children[0]][0]
    assert pane[pane.index(first) + 1].startswith("task 1.1/1.1 · running"), selected
