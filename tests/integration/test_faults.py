"""Faults between the CLI and both real backends: nothing lost, nothing duplicated, documented exits.

`tests/support/fault_proxy.py` sits on 127.0.0.1 in front of a real dashboard and injects 5xx
answers, connection resets, delays past the request timeout, truncated and slow bodies on a
deterministic schedule while `show`, `follow` and `older --all` run:

- show: one fault on any one request costs the client's single retry and nothing else (the
  clean run's document, exit 0); a fault that also hits that retry (`Rule.at(..., repeat=2)`)
  is exit 7 with `error.retryable` true and only rows of the clean run; a slow body is the
  clean run's document;
- follow: continues through faults that outlast the client's retry while rows are appended,
  then ends with every row exactly once;
- older --all: one fault anywhere is the clean run's document; a fault that also hits the
  retry leaves every row once, or a typed failure with a subset of them: never a gap.

Each GET is retried once by the client (src/hermes_task/dashboard/client.py); the periodic
schedules below repeat each fault on its retry (`repeat=2`), so that a read really fails.
`tests/integration/test_fault_matrix.py` puts one fault at each request of the parent
commands on every backend.

Every run carries the backend's token; it must never appear on stdout or stderr.
"""

from __future__ import annotations

import http.server
import json
import secrets
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.integration.test_whole import own_uids
from tests.support import harness, tally
from tests.support.backends import BACKEND_NAMES
from tests.support.cli_runner import Run, cli_env
from tests.support.fault_proxy import FaultProxy, Rule
from typer.testing import CliRunner

from hermes_task.cli.app import app

# What these prove is hermes-task's own behaviour (tests/conftest.py: reference backends only).
pytestmark = [pytest.mark.integration, pytest.mark.client_side]
ERROR_FAULTS = ("500", "502", "503", "reset", "truncate", "delay")
EXPECTED_CODE = {
    "500": "server_error",
    "502": "server_error",
    "503": "server_error",
    "reset": "network",
    "truncate": "network",
    "delay": "timeout",
}
TIMEOUT = "3"  # --request-timeout for these runs: a loaded machine answers well within it
DELAY = 6.0  # what a `delay` fault waits: past TIMEOUT, so the read times out


def hermes(url: str, token: str, *args: str) -> Run:
    """The CLI in-process (CliRunner) over real HTTP to `url`; checks the token stays secret."""
    result = CliRunner().invoke(app, [*args, "--url", url], env=cli_env(token))
    run = Run(result.exit_code, result.stdout, result.stderr)
    assert token not in run.stdout + run.stderr, "the token leaked"
    return run


def keys(rows: list[dict[str, Any]]) -> list[tuple[str, int]]:
    return [(r["session_id"], r["id"]) for r in rows]


def durable_of(backend: Any) -> Any:
    """Each c1 row's durable identity: its `message_uid` where the backend gives one (iot: a
    row carried into a later segment is the same row, and a read that stopped early may show
    the later copy), else (session_id, id)."""
    c1 = backend.manifest["c1"]
    uid_of = {key: uid for seg in ("root", "mid", "tip") for key, uid in own_uids(backend, c1[seg])}

    def durable(rows: list[tuple[str, int]]) -> set[object]:
        return {uid_of.get(key) or key for key in rows}

    return durable


@pytest.fixture
def upstream() -> Iterator[str]:
    """A tiny JSON server on 127.0.0.1 (for the proxy's own test: no backend needed)."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_GET(self) -> None:
            body = json.dumps({"path": self.path, "host": self.headers["Host"], "pad": "x" * 4000}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_the_proxy_schedule_is_deterministic(upstream: str) -> None:
    rules = [Rule.parse("503+reset+truncate:every=3,phase=1"), Rule.parse("slow:path=/b,seconds=0.001")]
    outcomes = []
    with FaultProxy(upstream, rules) as front, httpx.Client(base_url=front.url, timeout=2) as client:
        for path in ("/a", "/a", "/b", "/a", "/a", "/b", "/a"):
            try:
                response = client.get(path)
                outcomes.append(f"{response.status_code} {response.json().get('host', '-')}")
            except httpx.HTTPError as exc:
                outcomes.append(type(exc).__name__)
        assert front.injected() == {"503": 1, "reset": 1, "truncate": 1, "slow": 2}
        assert front.requests() == [f"GET {p}" for p in ("/a", "/a", "/b", "/a", "/a", "/b", "/a")]
    host = upstream.removeprefix("http://")
    # rule 1 fires on requests 1, 4, 7 (every 3rd, phase 1), rotating its faults; rule 2 on
    # every /b request rule 1 let through (3 and 6): slow, but complete
    assert outcomes == [
        "503 -",
        f"200 {host}",
        f"200 {host}",
        "ReadError",
        f"200 {host}",
        f"200 {host}",
        "RemoteProtocolError",
    ]


@pytest.fixture
def proxy(backend: Any) -> Iterator[FaultProxy]:
    with FaultProxy(backend.url) as front:
        yield front


def _show_args(backend: Any) -> list[str]:
    c1 = backend.manifest["c1"]
    return ["show", c1["root"], "--tip", c1["tip"], "--json", "--request-timeout", TIMEOUT, "--debug"]


def test_show_rides_out_one_fault_and_fails_retryably_when_it_persists(
    backend: Any, proxy: FaultProxy
) -> None:
    clean = hermes(proxy.url, backend.token, *_show_args(backend))
    assert clean.code == 0, clean.stderr
    baseline = keys(clean.json()["rows"])
    flow = len(proxy.requests())
    assert flow >= 3
    durable = durable_of(backend)
    for fault in ERROR_FAULTS:
        for position in range(1, flow + 1):
            # once: the client's retry of that read gets the answer
            proxy.set_rules([Rule.at(position, fault, seconds=DELAY)])
            run = hermes(proxy.url, backend.token, *_show_args(backend))
            assert proxy.injected() == {fault: 1}
            assert run.code == 0, (fault, position, run.stderr)
            assert run.json() == clean.json(), (fault, position)
            tally.count(f"faults.show.{fault}")
            # twice in a row: the read and its retry fail, the command fails retryably
            proxy.set_rules([Rule.at(position, fault, seconds=DELAY, repeat=2)])
            run = hermes(proxy.url, backend.token, *_show_args(backend))
            assert proxy.injected() == {fault: 2}
            assert run.code == 7, (fault, position, run.stderr)
            doc = run.json()
            assert doc["error"]["code"] == EXPECTED_CODE[fault]
            assert doc["error"]["retryable"] is True
            shown = keys(doc["rows"])
            assert len(shown) == len(set(shown))
            assert durable(shown) <= durable(baseline)
            message = next(line for line in run.stderr.splitlines() if not line.startswith("debug: "))
            assert message.startswith("error: ")
            tally.count(f"faults.show.{fault}", 2)
    for position in range(1, flow + 1):
        proxy.set_rules([Rule(("slow",), every=1000, phase=position, seconds=0.002)])
        run = hermes(proxy.url, backend.token, *_show_args(backend))
        assert run.code == 0, run.stderr
        assert keys(run.json()["rows"]) == baseline
        tally.count("faults.show.slow")


def test_show_under_a_periodic_fault_is_all_or_typed(backend: Any, proxy: FaultProxy) -> None:
    """Every (n+1)th request fails, and its retry too, n being a clean show's request count:
    a show sometimes meets a fault and sometimes not."""
    baseline = keys(hermes(proxy.url, backend.token, *_show_args(backend)).json()["rows"])
    every = len(proxy.requests()) + 1
    durable = durable_of(backend)
    proxy.set_rules([Rule(("503", "reset", "truncate"), every=every, repeat=2)])
    outcomes = set()
    for _ in range(every):
        run = hermes(proxy.url, backend.token, *_show_args(backend))
        outcomes.add(run.code)
        assert run.code in (0, 7), run.stderr
        shown = keys(run.json()["rows"])
        assert shown == baseline if run.code == 0 else durable(shown) <= durable(baseline)
    assert outcomes == {0, 7}
    for fault, n in proxy.injected().items():
        tally.count(f"faults.show.{fault}", n)


# -- follow: a backend of our own, since the test appends rows and ends the task -------------


@pytest.fixture(params=BACKEND_NAMES)
def own_backend(request: pytest.FixtureRequest, seeded_home: Any, tmp_path: Path) -> Iterator[Any]:
    home = seeded_home(request.param, tmp_path / "home")
    try:
        server = harness.start(request.param, home, secrets.token_urlsafe(32))
    except harness.HarnessError as exc:
        pytest.fail(f"starting {request.param}: {exc}", pytrace=False)
    yield server
    server.stop()


def stored_rows(backend: Any, sid: str) -> list[tuple[str, int]]:
    """Every displayed row of `sid`, read straight from the backend (no proxy, no CLI)."""
    req = urllib.request.Request(
        f"{backend.url}/api/sessions/{sid}/messages?limit=500&offset=0", headers=backend.auth_headers()
    )
    with urllib.request.urlopen(req, timeout=10) as resp:
        body = json.loads(resp.read())
    return [(m["session_id"], m["id"]) for m in body["messages"] if m.get("display_kind") != "hidden"]


def _follow_cli(*, url: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "hermes_task",
        "follow",
        "--json",
        "--interval",
        "0.5",
        "--request-timeout",
        "1",
        "--debug",
        "--url",
        url,
    ]


def test_follow_rides_through_faults_and_reports_every_row_once(own_backend: Any) -> None:
    running = own_backend.manifest["running"]["id"]
    with FaultProxy(
        # every 7th request and its retry: about every other cycle of 3 reads fails, as every
        # 4th single fault did before the client retried (every 4th twice fails every cycle)
        own_backend.url,
        [Rule(("503", "reset", "truncate", "502", "delay", "500"), every=7, repeat=2)],
    ) as front:
        cmd = _follow_cli(url=front.url)
        cmd.insert(4, running)
        lines: list[str] = []
        with subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cli_env(own_backend.token)
        ) as proc:
            out = threading.Thread(target=lambda: lines.extend(proc.stdout or []), daemon=True)
            errors: list[str] = []
            err = threading.Thread(target=lambda: errors.extend(proc.stderr or []), daemon=True)
            out.start()
            err.start()
            try:
                for _ in range(3):
                    time.sleep(1.0)
                    own_backend.append_rows(running, 3)
                own_backend.end_session(running, "agent_close")
                code = proc.wait(timeout=60)
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
            out.join(timeout=5)
            err.join(timeout=5)
        stderr = "".join(errors)
        injected = front.injected()
    assert own_backend.token not in "".join(lines) + stderr
    events = [json.loads(line) for line in lines]
    assert code == 0, stderr[-2000:]
    assert events[-1]["type"] == "result"
    assert events[-1]["exit_code"] == 0
    seen = [(e["session_id"], e["id"]) for e in events if e["type"] == "row"]
    expected = stored_rows(own_backend, running)
    lost = len(set(expected) - set(seen))
    duplicated = len(seen) - len(set(seen))
    tally.observe("rows_lost", lost)
    tally.observe("rows_duplicated", duplicated)
    tally.observe("rows_checked", len(expected))
    for fault, n in injected.items():
        tally.count(f"faults.follow.{fault}", n)
    assert sum(injected.values()) >= 2, injected
    assert any(e["type"] == "error" and e["retryable"] for e in events)
    assert (lost, duplicated) == (0, 0)
    assert sorted(seen) == sorted(expected)


# -- older --all: every row once, or a typed failure with a subset: never a silent gap --------


def _older_args(backend: Any) -> list[str]:
    return [
        "older",
        backend.manifest["long"]["id"],
        "--all",
        "--json",
        "--request-timeout",
        TIMEOUT,
        "--debug",
    ]


def test_older_all_is_complete_or_a_typed_failure_under_faults(backend: Any, proxy: FaultProxy) -> None:
    expected = stored_rows(backend, backend.manifest["long"]["id"])
    clean = hermes(proxy.url, backend.token, *_older_args(backend))
    assert clean.code == 0, clean.stderr
    baseline = keys(clean.json()["rows"])
    assert sorted(baseline) == sorted(expected)
    assert len(baseline) == len(set(baseline))
    flow = len(proxy.requests())
    checked = lost = duplicated = 0
    for fault in ERROR_FAULTS:  # once: the client's retry of that read gets the answer
        for position in range(1, flow + 1):
            proxy.set_rules([Rule.at(position, fault, seconds=DELAY)])
            run = hermes(proxy.url, backend.token, *_older_args(backend))
            assert proxy.injected() == {fault: 1}
            assert run.code == 0, (fault, position, run.stderr)
            assert run.json() == clean.json(), (fault, position)
            checked += len(expected)
            tally.count(f"faults.older.{fault}")
    for fault in (*ERROR_FAULTS, "slow"):  # twice in a row (slow: once, it is no failure)
        for position in range(1, flow + 1):
            twice = fault != "slow"
            proxy.set_rules(
                [Rule.at(position, fault, seconds=DELAY if twice else 0.002, repeat=2 if twice else 1)]
            )
            run = hermes(proxy.url, backend.token, *_older_args(backend))
            assert proxy.injected() == {fault: 2 if twice else 1}
            doc = run.json()
            shown = keys(doc["rows"])
            duplicated += len(shown) - len(set(shown))
            if run.code == 0:
                assert doc["coverage"]["at_start"] is True
                assert doc["coverage"]["has_older"] is False
                checked += len(expected)
                lost += len(set(expected) - set(shown))
                assert shown == baseline, (fault, position)
            else:
                assert fault != "slow", run.stderr
                assert run.code == 7, (fault, position, run.stderr)
                assert doc["error"]["code"] == EXPECTED_CODE[fault]
                assert doc["error"]["retryable"] is True
                assert set(shown) <= set(baseline)
            tally.count(f"faults.older.{fault}", 2 if twice else 1)
    tally.observe("rows_checked", checked)
    tally.observe("rows_lost", lost)
    tally.observe("rows_duplicated", duplicated)
    assert (lost, duplicated) == (0, 0)


# -- password logins: the password never shows, also when the login or a read fails -----------


def test_password_file_logins_keep_the_password_secret(gated_backend: Any, tmp_path: Path) -> None:
    tip = gated_backend.manifest["c1"]["tip"]
    wrong = tmp_path / "wrong"
    wrong.write_text("not-the-password\n")
    login = [
        "show",
        tip,
        "--json",
        "--debug",
        "--username",
        gated_backend.username,
        "--request-timeout",
        "10",  # no `delay` fault here: a loaded machine may take seconds over the password hash
    ]
    env = {k: v for k, v in cli_env("").items() if k != "HERMES_DASHBOARD_TOKEN"}
    with FaultProxy(gated_backend.url) as front:
        cases = [
            ("ok", str(gated_backend.password_file), [], 0, None),
            ("rejected", str(wrong), [], 3, "auth_rejected"),
            (
                "login 503",
                str(gated_backend.password_file),
                [Rule(("503",), path="/auth/password-login")],
                7,
                "server_error",
            ),
            (
                "login reset",
                str(gated_backend.password_file),
                [Rule(("reset",), path="/auth/password-login")],
                7,
                "network",
            ),
            (
                "read 502",
                str(gated_backend.password_file),
                [Rule(("502",), path="/api/sessions/")],
                7,
                "server_error",
            ),
        ]
        for name, password_file, rules, code, error in cases:
            front.set_rules(rules)
            result = CliRunner().invoke(
                app, [*login, "--password-file", password_file, "--url", front.url], env=env
            )
            assert result.exit_code == code, (name, result.stderr)
            assert gated_backend.password not in result.stdout + result.stderr, name
            assert "hermes_session" not in result.stdout + result.stderr, name
            doc = json.loads(result.stdout)
            assert doc["kind"] == ("transcript" if code == 0 else "error")
            if error is not None:
                assert doc["error"]["code"] == error
            tally.count(f"secrets.password file (real gated dashboard), {name}")
