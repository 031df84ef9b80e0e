"""`--debug` / HERMES_TASK_DEBUG: one stderr line per request start and settle; never content,
never a secret, also on failures."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from typer.testing import Result

from tests.support.cli_runner import invoke
from tests.support.dashboard import serving
from tests.support.replay import TOKEN, Replay

ENV = {"HERMES_DASHBOARD_TOKEN": TOKEN, "NO_COLOR": "1", "COLUMNS": "100", "XDG_CONFIG_HOME": "/nonexistent"}
ID = r"[0-9]{8}_[0-9]{6}_[0-9a-f]{6}"
START = re.compile(
    rf"debug: start (detail|messages|latest-descendant) GET /api/sessions/{ID}(/messages|/latest-descendant)?"
    rf" id={ID}( limit=\d+ offset=\d+ order=(latest|oldest))?"
)
RETRY = re.compile(
    rf"debug: retry (detail|messages|latest-descendant) id={ID} after (network|timeout|server_error|rate_limited)"
)
CREDENTIALS = "debug: credentials: env HERMES_DASHBOARD_TOKEN"
SETTLE = re.compile(
    rf"debug: settle (detail|messages|latest-descendant) id={ID} (HTTP \d{{3}}|network|timeout)( returned=\d+)? \d+ms"
)


@pytest.fixture(params=["official", "iot"])
def replay(request: pytest.FixtureRequest) -> Iterator[Replay]:
    rep = Replay(request.param)
    with serving(rep):
        yield rep


def show(*args: str, env: dict[str, str] | None = None) -> Result:
    return invoke("show", *args, env=env)


def debug_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("debug: ")]


STORE = re.compile(
    r"debug: store (\S+: opened read-only|query (children|knows|first_user_text): \d+ rows) in [\d.]+ ms"
)


def assert_well_formed(lines: list[str]) -> None:
    """The token's source once, first; then a start and a settle line per request, and the
    local store's lines (the store is asked about every compressed segment): its path and
    each query's duration, never an id."""
    assert lines
    assert lines[0] == CREDENTIALS
    store = [line for line in lines[1:] if line.startswith("debug: store")]
    assert all(STORE.fullmatch(line) for line in store), store
    assert not any(re.search(ID, line) for line in store)
    retries = [line for line in lines[1:] if line.startswith("debug: retry")]
    assert all(RETRY.fullmatch(line) for line in retries), retries
    requests = [line for line in lines[1:] if not line.startswith(("debug: store", "debug: retry"))]
    assert requests, "no request was logged"
    for start, settle in zip(requests[::2], requests[1::2], strict=True):
        assert START.fullmatch(start), start
        assert SETTLE.fullmatch(settle), settle
        assert start.split()[2] == settle.split()[2]  # the same kind
        assert start.split()[5] == settle.split()[3]  # the same id


def test_debug_lines_pair_each_request_and_carry_no_content(replay: Replay) -> None:
    c1 = replay.manifest["c1"]
    result = show(c1["root"], "--tip", c1["tip"], "--json", "--debug")
    assert result.exit_code == 0
    lines = debug_lines(result.stderr)
    assert lines == result.stderr.splitlines()  # nothing else on stderr
    assert_well_formed(lines)
    assert len([line for line in lines if not line.startswith("debug: store")]) == 1 + 2 * len(replay.seen)
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


def test_the_token_source_is_named_once_and_never_the_token(replay: Replay, tmp_path: Any) -> None:
    root = replay.manifest["plain"]["root"]
    token = tmp_path / "token"
    token.write_text(TOKEN)
    result = show(root, "--json", "--debug", "--token-file", str(token), env={"HERMES_DASHBOARD_TOKEN": ""})
    lines = debug_lines(result.stderr)
    assert [line for line in lines if "credentials" in line] == ["debug: credentials: flag --token-file"]
    assert lines[0] == "debug: credentials: flag --token-file"
    assert TOKEN not in result.stderr


def test_a_rejected_token_names_its_source_in_the_hint(replay: Replay) -> None:
    root = replay.manifest["plain"]["root"]
    replay.overrides[(f"/api/sessions/{root}", "")] = httpx.Response(401, json={"detail": "Unauthorized"})
    result = show(root)
    assert result.exit_code == 3
    assert "hint: check the token from env HERMES_DASHBOARD_TOKEN" in result.stderr


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
    with serving(httpx.ConnectError(f"refused {TOKEN}")):
        result = show("20261130_170941_b9b20e", "--debug")
    assert result.exit_code == 7
    lines = debug_lines(result.stderr)
    start = "debug: start detail GET /api/sessions/20261130_170941_b9b20e id=20261130_170941_b9b20e"
    # A transient failure is retried once (dashboard/client.py), then it is the read's.
    assert lines == [
        CREDENTIALS,
        start,
        lines[2],
        "debug: retry detail id=20261130_170941_b9b20e after network",
        start,
        lines[5],
    ]
    for settle in (lines[2], lines[5]):
        assert re.fullmatch(r"debug: settle detail id=20261130_170941_b9b20e network \d+ms", settle)
    assert result.stderr.splitlines()[6:] == [
        "error: could not reach the dashboard: http://127.0.0.1:9119 (GET /api/sessions/20261130_170941_b9b20e):"
        " connection refused",
        "hint: is the dashboard running? check --url",
    ]
    assert TOKEN not in result.stderr


def test_a_mistyped_body_names_the_path_of_the_mismatch_under_debug(replay: Replay) -> None:
    """The user's message stays `detail: missing or mistyped fields`; --debug adds where."""
    root = replay.manifest["plain"]["root"]
    replay.overrides[(f"/api/sessions/{root}", "")] = httpx.Response(
        200, json={"id": root, "source": None, "parent_session_id": 12}
    )
    result = show(root, "--debug", "--json")
    assert result.exit_code == 6
    assert json.loads(result.stdout)["error"]["message"].endswith(": detail: missing or mistyped fields")
    lines = debug_lines(result.stderr)
    assert re.fullmatch(rf"debug: settle detail id={root} HTTP 200 \d+ms", lines[-2])
    assert lines[-1] == (
        "debug: incompatible detail: Expected `str | null`, got `int` - at `$.parent_session_id`"
    )
    assert "debug:" not in show(root, "--json").stderr
