"""Credentials: a session token (file, environment, or local discovery) or a password login.

Order: `--token-file` (or the gateway's `token_file`), then `HERMES_DASHBOARD_TOKEN`; with a
username, a password login (`--password-file` or `HERMES_DASHBOARD_PASSWORD`) replaces the
token, because a gated dashboard refuses the session token. With nothing configured and a
loopback URL only, the local token is discovered: the iot host record
(`$XDG_STATE_HOME/hermes/gateway-locks/host-serve.{json,token}`) when it names this port,
then the token the dashboard injects into its own root page. Secrets stay in memory: never
in argv, output, logs or error messages.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from hermes_task.dashboard.statuses import failure_for
from hermes_task.failures import Code, HermesError
from hermes_task.settings import Settings

TOKEN_HEADER = "X-Hermes-Session-Token"
_INJECTED = re.compile(r'__HERMES_SESSION_TOKEN__\s*=\s*"([A-Za-z0-9_\-\.~+/=]{8,512})"')


def _read_secret(path: Path, what: str) -> str:
    try:
        value = path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise HermesError(Code.AUTH_MISSING, f"cannot read the {what} file ({exc.strerror})") from None
    if not value:
        raise HermesError(Code.AUTH_MISSING, f"the {what} file is empty")
    return value


def _host_record_token(settings: Settings, env: Mapping[str, str]) -> str | None:
    state = env.get("XDG_STATE_HOME") or str(Path(env.get("HOME") or Path.home()) / ".local" / "state")
    lock_dir = Path(env.get("HERMES_GATEWAY_LOCK_DIR") or Path(state) / "hermes" / "gateway-locks")
    try:
        record = json.loads((lock_dir / "host-serve.json").read_text(encoding="utf-8"))
        token = (lock_dir / "host-serve.token").read_text(encoding="utf-8").strip()
    except (OSError, ValueError):
        return None
    port = urlsplit(settings.url).port or 80
    if not isinstance(record, dict) or record.get("port") != port or not token:
        return None
    return token


def _page_token(http: httpx.Client) -> str | None:
    try:
        response = http.get("/", headers={"Accept": "text/html"})
    except httpx.HTTPError:
        return None
    if response.status_code != 200:
        return None
    match = _INJECTED.search(response.text[:65536])
    return match.group(1) if match else None


def apply_credentials(http: httpx.Client, settings: Settings, env: Mapping[str, str]) -> bool:
    """Configure `http` with the credentials in force; True when any were found."""
    if settings.username:
        if settings.password_file is not None:
            password = _read_secret(settings.password_file, "password")
        elif settings.password_env:
            password = settings.password_env
        else:
            raise HermesError(
                Code.AUTH_MISSING, "--username needs --password-file or HERMES_DASHBOARD_PASSWORD"
            )
        login(http, settings.username, password)
        return True
    token: str | None = None
    if settings.token_file is not None:
        token = _read_secret(settings.token_file, "token")
    elif settings.token_env:
        token = settings.token_env
    elif settings.loopback:
        token = _host_record_token(settings, env) or _page_token(http)
    if token is None:
        return False
    http.headers[TOKEN_HEADER] = token
    return True


def login(http: httpx.Client, username: str, password: str) -> None:
    """`POST /auth/password-login` (provider `basic`); the session cookies stay in `http`."""
    try:
        response = http.post(
            "/auth/password-login",
            json={"provider": "basic", "username": username, "password": password, "next": ""},
        )
    except httpx.TimeoutException:
        raise HermesError(Code.TIMEOUT, "password login") from None
    except httpx.HTTPError as exc:
        raise HermesError(Code.NETWORK, type(exc).__name__) from None
    if response.status_code != 200:
        raise failure_for(response, have_credentials=True, login=True)
