"""The CLI on a real pseudo-terminal of a chosen size (issue 26 items 1 and 4): no mock of isatty,
the screen captured and stripped of escape sequences (tests/support/terminal.py).

On every real backend, `recover PARENT` prints every child session id it knows (the same run's
`--json`) whole, on one line, at 80, 100 and 120 columns, as it does each delegation and
subagent id; no line is wider than the screen. `parents` prints each chat's id whole too.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from tests.support.cli_runner import backend_store_env, cli_env, hermes_task
from tests.support.terminal import Screen, on_terminal

from hermes_task.render.terminal_rows import width_of

pytestmark = pytest.mark.integration

WIDTHS = [80, 100, 120]


def terminal_env(backend: Any) -> dict[str, str]:
    """What a user's shell would hold: the token, the backend's home (its store), colour on."""
    env = cli_env(backend.token, **backend_store_env(backend))
    env.pop("NO_COLOR", None)
    return env


def screen_of(backend: Any, *args: str, columns: int) -> Screen:
    return on_terminal([*args, "--url", backend.url], terminal_env(backend), columns=columns)


def ids_of(tasks: list[dict[str, Any]]) -> list[str]:
    out: list[str] = []
    for task in tasks:
        out += [task[k] for k in ("child_session_id", "delegation_id", "subagent_id") if task[k]]
        out += ids_of(task["children"])
    return out


def widest(screen: Screen) -> int:
    """The widest line hermes-task laid out: a stderr message is one line the terminal wraps."""
    return max(width_of(line) for line in screen.lines if not line.startswith(("warning: ", "error: ")))


def words_on_lines(screen: Screen) -> list[set[str]]:
    return [set(line.split()) for line in screen.lines]


@pytest.mark.parametrize("columns", WIDTHS)
@pytest.mark.parametrize("which", ["parent", "store"])
def test_recover_prints_every_id_it_knows_whole_at_any_width(backend: Any, which: str, columns: int) -> None:
    parent = backend.manifest["parent"] if which == "parent" else backend.manifest["store"]["parent"]
    known = hermes_task(backend, "recover", parent, "--json")
    assert known.code == 0, known.stderr
    tasks = known.json()["tasks"]
    children = [t["child_session_id"] for t in tasks if t["child_session_id"]]
    if which == "parent":  # the store assigns every seeded task its child on every backend
        assert children == [e["child"] for e in backend.manifest["expected_tasks"]]
    else:
        assert len(children) >= 4, tasks  # same-goal tasks are ambiguous; the others are known
    screen = screen_of(backend, "recover", parent, columns=columns)
    assert screen.code == 0, screen.text
    lines = words_on_lines(screen)
    for ref in ids_of(tasks):
        assert any(ref in words for words in lines), (columns, ref, screen.text)
    assert "\x1b" not in screen.text
    assert widest(screen) <= columns, screen.text
    if columns == 80:  # 22-character ids and the rest do not fit: a block per task
        assert any(line.startswith("  child session  ") for line in screen.lines), screen.text
    if columns == 120 and which == "parent":
        assert screen.lines[0].split()[:4] == ["#", "status", "time", "goal"], screen.text


@pytest.mark.parametrize("columns", [80, 120])
def test_parents_on_a_terminal_prints_each_chat_id_whole(backend: Any, columns: int) -> None:
    known = hermes_task(backend, "parents", "--json", "--limit", "100")
    assert known.code == 0, known.stderr
    ids = [p["id"] for p in json.loads(known.stdout)["parents"]]
    assert backend.manifest["parent"] in ids
    screen = screen_of(backend, "parents", "--limit", "100", columns=columns)
    assert screen.code == 0, screen.text
    lines = words_on_lines(screen)
    for sid in ids:
        assert any(sid in words for words in lines), (columns, sid, screen.text)
    assert widest(screen) <= columns, screen.text
