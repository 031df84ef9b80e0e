"""Credentials: a session token (file, environment, or local discovery) or a password login.
The order and the discovery: docs/configuration.md, "Connecting"; with a username, the
password login replaces the token (a gated dashboard refuses it). The host record counts only
when it names this host (loopback names are one host) and port. Secrets stay in memory.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from hermes_task.dashboard.client import failure_for, transport_failure
from hermes_task.failures import Code, HermesError
from hermes_task.settings import TOKEN_ENVS, Settings, is_loopback_host

TOKEN_HEADER = "X-Hermes-Session-Token"
_INJECTED = re.compile(r'__HERMES_SESSION_TOKEN__\s*=\s*"([A-Za-z0-9_\-\.~+/=]{8,512})"')


def _read_secret(path: Path, what: str, source: str | None) -> tuple[str, str]:
    """The secret in the `what` ("token", "password") file, and where that file was named."""
    try:
        value = path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise HermesError(Code.AUTH_MISSING, f"cannot read the {what} file ({exc.strerror})") from None
    if not value:
        raise HermesError(Code.AUTH_MISSING, f"the {what} file is empty")
    return value, f"flag --{what}-file" if source == "flag" else f"file ({what}_file of the config file)"


def _host_record_token(settings: Settings, env: Mapping[str, str]) -> str | None:
    state = env.get("XDG_STATE_HOME") or str(Path(env.get("HOME") or Path.home()) / ".local" / "state")
    lock_dir = Path(env.get("HERMES_GATEWAY_LOCK_DIR") or Path(state) / "hermes" / "gateway-locks")
    try:
        record = json.loads((lock_dir / "host-serve.json").read_text(encoding="utf-8"))
        token = (lock_dir / "host-serve.token").read_text(encoding="utf-8").strip()
    except (OSError, ValueError):
        return None
    url = urlsplit(settings.url)
    port = url.port or (443 if url.scheme == "https" else 80)
    recorded = record.get("host") if isinstance(record, dict) else None
    if not isinstance(recorded, str) or record.get("port") != port or not token:
        return None
    host, recorded = (url.hostname or "").lower(), recorded.lower().strip("[]")
    if recorded != host and not (is_loopback_host(recorded) and is_loopback_host(host)):
        return None  # another dashboard's record: same port, another host
    return token


def _page_token(http: httpx.Client) -> str | None:
    try:
        response = http.get("/", headers={"Accept": "text/html"})
    except httpx.HTTPError:
        return None
    match = _INJECTED.search(response.text[:65536]) if response.status_code == 200 else None
    return match.group(1) if match else None


def apply_credentials(http: httpx.Client, settings: Settings, env: Mapping[str, str]) -> str | None:
    """Configure `http` with the credentials in force; return where they came from ("flag
    --token-file", "env HERMES_DASHBOARD_TOKEN", "file token_file of the config file",
    "discovery (host record)", ...) or None when none were found. Never the secret."""
    source = settings.sources
    if settings.username:
        if settings.password_file is not None:
            password, origin = _read_secret(settings.password_file, "password", source.get("password_file"))
        elif settings.password_env:
            password = settings.password_env
            origin = "env HERMES_DASHBOARD_PASSWORD"
        else:
            raise HermesError(
                Code.AUTH_MISSING, "--username needs --password-file or HERMES_DASHBOARD_PASSWORD"
            )
        login(http, settings.username, password)
        return f"password login ({origin})"
    token: str | None = None
    if settings.token_file is not None:
        token, origin = _read_secret(settings.token_file, "token", source.get("token_file"))
    elif settings.token_env:
        token = settings.token_env
        origin = f"env {next((n for n in TOKEN_ENVS if env.get(n)), TOKEN_ENVS[0])}"
    elif settings.loopback:
        token, origin = _host_record_token(settings, env), "discovery (host record)"
        if token is None:
            token, origin = _page_token(http), "discovery (dashboard page)"
    if token is None:
        return None
    http.headers[TOKEN_HEADER] = token
    return origin


def login(http: httpx.Client, username: str, password: str) -> None:
    """`POST /auth/password-login` (provider `basic`); the session cookies stay in `http`."""
    route = "POST /auth/password-login"
    try:
        response = http.post(
            route.split()[1],
            json={"provider": "basic", "username": username, "password": password, "next": ""},
        )
    except httpx.HTTPError as exc:
        raise transport_failure(exc, http.base_url, route) from None
    if response.status_code != 200:
        raise failure_for(response, credentials=None, login=True)
