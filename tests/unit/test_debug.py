"""`--debug` / HERMES_TASK_DEBUG: one stderr line per request start and settle; never content,
never a secret, also on failures."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import respx
from typer.testing import CliRunner

from hermes_task.cli import app
from tests.replay import BASE_URL, TOKEN, Replay

ENV = {"HERMES_DASHBOARD_TOKEN": TOKEN, "NO_COLOR": "1", "COLUMNS": "100", "XDG_CONFIG_HOME": "/nonexistent"}
ID = r"[0-9]{8}_[0-9]{6}_[0-9a-f]{6}"
START = re.compile(
    rf"debug: start (detail|messages|latest-descendant) id={ID}( limit=\d+ offset=\d+ order=(latest|oldest))?"
)
SETTLE = re.compile(
    rf"debug: settle (detail|messages|latest-descendant) id={ID} (HTTP \d{{3}}|network|timeout)( returned=\d+)? \d+ms"
)


@pytest.fixture(params=["official", "iot"])
def replay(request: pytest.FixtureRequest) -> Iterator[Replay]:
    rep = Replay(request.param)
    with respx.mock(base_url=BASE_URL, assert_all_called=False) as router:
        router.route().mock(side_effect=rep)
        yield rep


def show(*args: str, env: dict[str, str] | None = None) -> Any:
    return CliRunner().invoke(app, ["show", *args, "--url", BASE_URL], env={**ENV, **(env or {})})


def debug_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("debug: ")]


def assert_well_formed(lines: list[str]) -> None:
    assert lines
    for start, settle in zip(lines[::2], lines[1::2], strict=True):
        assert START.fullmatch(start), start
        assert SETTLE.fullmatch(settle), settle
        assert start.split()[2:4] == settle.split()[2:4]  # the same kind and id


def test_debug_lines_pair_each_request_and_carry_no_content(replay: Replay) -> None:
    c1 = replay.manifest["c1"]
    result = show(c1["root"], "--tip", c1["tip"], "--json", "--debug")
    assert result.exit_code == 0
    lines = debug_lines(result.stderr)
    assert lines == result.stderr.splitlines()  # nothing else on stderr
    assert_well_formed(lines)
    assert len(lines) == 2 * len(replay.seen)
    assert any(" messages " in line and " returned=" in line for line in lines)
    assert TOKEN not in result.stderr
    assert c1["goal"] not in result.stderr
    assert json.loads(result.stdout)["kind"] == "transcript"


def test_the_env_variable_turns_debug_on_and_no_debug_by_default(replay: Replay) -> None:
    root = replay.manifest["plain"]["root"]
    on = show(root, "--json", env={"HERMES_TASK_DEBUG": "1"})
    assert_well_formed(debug_lines(on.stderr))
    off = show(root, "--json", env={"HERMES_TASK_DEBUG": "0"})
    assert debug_lines(off.stderr) == []


@pytest.mark.parametrize(
    ("response", "exit_code", "outcome"),
    [
        (httpx.Response(401, json={"detail": f"bad token {TOKEN}"}), 3, "HTTP 401"),
        (httpx.Response(500, text=f"Traceback ... token={TOKEN}"), 7, "HTTP 500"),
    ],
)
def test_a_failure_is_settled_and_never_shows_the_token(
    replay: Replay, response: httpx.Response, exit_code: int, outcome: str
) -> None:
    root = replay.manifest["plain"]["root"]
    replay.overrides[(f"/api/sessions/{root}", "")] = response
    for extra in ((), ("--json",)):
        result = show(root, "--debug", *extra)
        assert result.exit_code == exit_code
        lines = debug_lines(result.stderr)
        assert_well_formed(lines)
        assert lines[-1].startswith(f"debug: settle detail id={root} {outcome} ")
        assert TOKEN not in result.stderr
        assert TOKEN not in result.stdout


def test_a_network_failure_is_settled_without_secrets() -> None:
    with respx.mock(base_url=BASE_URL, assert_all_called=False) as router:
        router.route().mock(side_effect=httpx.ConnectError(f"refused {TOKEN}"))
        result = show("20261130_170941_b9b20e", "--debug")
    assert result.exit_code == 7
    lines = debug_lines(result.stderr)
    assert lines == [
        "debug: start detail id=20261130_170941_b9b20e",
        lines[1],
    ]
    assert re.fullmatch(r"debug: settle detail id=20261130_170941_b9b20e network \d+ms", lines[1])
    assert result.stderr.splitlines()[2:] == [
        "error: could not reach the dashboard: ConnectError",
        "hint: is the dashboard running? check --url",
    ]
    assert TOKEN not in result.stderr
