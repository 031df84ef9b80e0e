"""Secrets never reach output: the session token, the password and the login cookie.

Every command runs with `--debug` (and the env switch) against answers that succeed and
that fail (401, 404, 5xx, a network error, a timeout, an internal error, a refused or
failing password login), with the token from the environment and from `--token-file`.
Neither stdout nor stderr (which carries the debug lines) may contain a secret, while
the debug lines must be there (so the check is not vacuous).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx
from typer.testing import CliRunner

from hermes_task.cli.app import COMMANDS, app
from tests.support import tally
from tests.support.dashboard import serving
from tests.support.replay import BASE_URL, TOKEN
from tests.support.scripted import Scripted, capture

PASSWORD = "pw-SECRET-9d41c7e2b08f4a6e"
COOKIE = "cookie-SECRET-3b7e0a94c1d2"
SECRETS = (TOKEN, PASSWORD, COOKIE)
BASE_ENV = {"NO_COLOR": "1", "COLUMNS": "100", "XDG_CONFIG_HOME": "/nonexistent"}


def _commands(backend: str) -> dict[str, list[str]]:
    m = capture(backend)["manifest"]
    out = {
        "show": ["show", m["c1"]["root"], "--tip", m["c1"]["tip"]],
        "follow": ["follow", m["rich"]["id"], "--timeout", "0.3", "--interval", "0.5"],
        "recover": ["recover", m["parent"]],
    }
    if "older" in COMMANDS:
        out["older"] = ["older", m["c1"]["root"], "--tip", m["c1"]["tip"], "--all"]
    return out


def _fault(kind: str) -> Any:
    """A respx side effect for one failure path (None: the captured answers)."""
    if kind == "unauthorized":
        return httpx.Response(401, json={"detail": "Unauthorized"})
    if kind == "not_found":
        return httpx.Response(404, json={"detail": "Session not found"})
    if kind == "server_error":
        return httpx.Response(503, text="upstream down")
    if kind == "network":
        return httpx.ConnectError("connection refused")
    if kind == "timeout":
        return httpx.ReadTimeout("timed out")
    return None


def _expected_exit(command: str, fault: str) -> int:
    """Auth failures are final everywhere; `follow` retries the rest until --timeout, then exits
    with the failure of the final stretch (never 9: the task is not known to be running)."""
    if fault == "unauthorized":
        return 3
    return 4 if fault == "not_found" else 7


def _assert_no_secret(result: Any, where: str) -> None:
    text = result.stdout + result.stderr
    for secret in SECRETS:
        assert secret not in text, f"{where}: a secret leaked"
    assert "debug: " in result.stderr, f"{where}: the debug lines are missing"


FAULTS = ("ok", "unauthorized", "not_found", "server_error", "network", "timeout")


@pytest.mark.parametrize("json_out", [False, True], ids=["terminal", "json"])
@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("source", ["env", "token_file"])
@pytest.mark.parametrize("backend", ["official", "iot"])
def test_the_token_never_appears(
    backend: str, source: str, fault: str, json_out: bool, tmp_path: Path
) -> None:
    env = dict(BASE_ENV)
    extra: list[str] = ["--debug"]
    if source == "env":
        env["HERMES_DASHBOARD_TOKEN"] = TOKEN
    else:
        (tmp_path / "token").write_text(TOKEN + "\n")
        extra += ["--token-file", str(tmp_path / "token")]
    for command, args in _commands(backend).items():
        if command == "follow" and fault != "ok" and (json_out or source != "env"):
            continue  # a failing follow waits out its --timeout: one mode per fault is enough
        script = Scripted(backend, None, corrupt=-1)
        with respx.mock(base_url=BASE_URL, assert_all_called=False) as router:
            effect = _fault(fault)
            router.route().mock(side_effect=script if effect is None else effect)
            result = CliRunner().invoke(
                app, [*args, *extra, *(["--json"] if json_out else []), "--url", BASE_URL], env=env
            )
        if fault == "ok":
            assert result.exit_code == 0, (command, result.stderr)
        else:
            assert result.exit_code == _expected_exit(command, fault), (command, fault, result.stderr)
        _assert_no_secret(result, f"{command} {fault}")
        tally.count(f"secrets.token ({source}), {fault}")


def test_an_internal_error_does_not_leak_the_token(monkeypatch: pytest.MonkeyPatch) -> None:
    from hermes_task.reading import reader as snapshot

    def boom(self: Any, probe: Any = None) -> Any:
        raise RuntimeError(f"broken state near header {TOKEN}")

    monkeypatch.setattr(snapshot.TaskReader, "refresh", boom)
    c1 = capture("iot")["manifest"]["c1"]
    env = {**BASE_ENV, "HERMES_DASHBOARD_TOKEN": TOKEN}
    with serving(Scripted("iot", None, corrupt=-1)):
        result = CliRunner().invoke(app, ["show", c1["root"], "--json", "--url", BASE_URL], env=env)
    assert result.exit_code == 1
    assert json.loads(result.stdout)["error"]["code"] == "internal"
    assert (
        result.stderr
        == "error: internal error (a bug in hermes-task): RuntimeError (rerun with --debug for the traceback)\n"
    )
    assert TOKEN not in result.stdout + result.stderr
    tally.count("secrets.token (env), internal error")


def _login_router(router: respx.MockRouter, outcome: str, script: Scripted) -> None:
    login: httpx.Response | Exception
    if outcome == "ok":
        login = httpx.Response(
            200,
            json={"ok": True, "next": "/"},
            headers={"set-cookie": f"hermes_session_at={COOKIE}; HttpOnly; Path=/"},
        )
    elif outcome == "network":
        login = httpx.ConnectError("refused")
    else:
        status = {"rejected": 401, "rate_limited": 429, "server_error": 503}[outcome]
        login = httpx.Response(status, json={"detail": f"Invalid credentials for {PASSWORD}"})
    router.post("/auth/password-login").mock(
        side_effect=[login] if isinstance(login, Exception) else None,
        return_value=login if not isinstance(login, Exception) else None,
    )

    def gated(request: httpx.Request) -> httpx.Response:
        if f"hermes_session_at={COOKIE}" not in request.headers.get("cookie", ""):
            return httpx.Response(
                401, json={"error": "unauthenticated", "detail": "Unauthorized", "reason": "no_cookie"}
            )
        return script(request)

    router.route().mock(side_effect=gated)


@pytest.mark.parametrize("outcome", ["ok", "rejected", "rate_limited", "server_error", "network"])
@pytest.mark.parametrize("backend", ["official", "iot"])
def test_password_file_logins_never_leak_the_password_or_cookie(
    backend: str, outcome: str, tmp_path: Path
) -> None:
    (tmp_path / "password").write_text(PASSWORD + "\n")
    env = {**BASE_ENV, "HERMES_TASK_DEBUG": "1"}
    for command, args in _commands(backend).items():
        with respx.mock(base_url=BASE_URL, assert_all_called=False) as router:
            _login_router(router, outcome, Scripted(backend, None, corrupt=-1))
            result = CliRunner().invoke(
                app,
                [
                    *args,
                    "--username",
                    "admin",
                    "--password-file",
                    str(tmp_path / "password"),
                    "--url",
                    BASE_URL,
                ],
                env=env,
            )
        expected = {"ok": 0, "rejected": 3, "rate_limited": 7, "server_error": 7, "network": 7}[outcome]
        assert result.exit_code == expected, (command, result.stderr)
        for secret in SECRETS:
            assert secret not in result.stdout + result.stderr, f"{command} {outcome}: a secret leaked"
        if outcome == "ok":
            assert "debug: " in result.stderr
        tally.count(f"secrets.password file (mocked dashboard), login {outcome}")
