"""Effective settings: flag > environment > config file > default; URL normalisation.

The config file is TOML at `$XDG_CONFIG_HOME/hermes-task/config.toml` (else
`~/.config/hermes-task/config.toml`), with named gateways:

    default_gateway = "local"
    [gateways.local]
    url = "http://127.0.0.1:9119"
    profile = "default"
    token_file = "~/.config/hermes-task/local.token"
    username = "admin"
    password_file = "~/.config/hermes-task/local.password"

Secrets are never values here: only paths to files that hold them.
"""

from __future__ import annotations

import ipaddress
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from hermes_task.failures import Code, HermesError
from hermes_task.sanitize import clean_line

DEFAULT_URL = "http://127.0.0.1:9119"
DEFAULT_REQUEST_TIMEOUT = 10.0
GATEWAY_KEYS = frozenset({"url", "profile", "token_file", "username", "password_file", "request_timeout"})


@dataclass(frozen=True)
class Settings:
    url: str
    profile: str | None
    token_file: Path | None
    token_env: str | None
    username: str | None
    password_file: Path | None
    password_env: str | None
    request_timeout: float
    gateway: str | None

    @property
    def loopback(self) -> bool:
        return is_loopback(self.url)


def config_path(env: Mapping[str, str]) -> Path:
    base = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME") or Path.home()) / ".config")
    return Path(base) / "hermes-task" / "config.toml"


def normalise_url(raw: str) -> str:
    """`scheme://host[:port][/prefix]`, lower-case scheme and host, default port dropped,
    trailing slashes removed. Userinfo, query and fragment are refused (a password in a
    URL would leak into process listings)."""
    try:
        parts = urlsplit(raw.strip())
        port = parts.port
    except ValueError:
        raise HermesError(Code.USAGE, f"invalid --url {clean_line(raw)!r}") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        raise HermesError(Code.USAGE, "--url must be an http:// or https:// URL with a host")
    if parts.username or parts.password:
        raise HermesError(Code.USAGE, "--url may not carry credentials")
    if parts.query or parts.fragment:
        raise HermesError(Code.USAGE, "--url may not carry a query or fragment")
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    if port is not None and port != {"http": 80, "https": 443}[scheme]:
        host = f"{host}:{port}"
    path = parts.path.rstrip("/")
    return urlunsplit((scheme, host, path, "", ""))


def is_loopback(url: str) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def load_config(path: Path) -> dict[str, object]:
    if not path.exists():
        return {}
    try:
        with path.open("rb") as handle:
            data = tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise HermesError(Code.CONFIG, f"{path}: {clean_line(str(exc))}") from None
    gateways = data.get("gateways", {})
    if not isinstance(gateways, dict) or not all(isinstance(v, dict) for v in gateways.values()):
        raise HermesError(Code.CONFIG, f"{path}: [gateways.NAME] must be tables")
    for name, table in gateways.items():
        unknown = set(table) - GATEWAY_KEYS
        if unknown:
            raise HermesError(Code.CONFIG, f"{path}: gateway {name!r} has unknown keys {sorted(unknown)}")
        for key, value in table.items():
            ok = isinstance(value, int | float) if key == "request_timeout" else isinstance(value, str)
            if not ok:
                raise HermesError(Code.CONFIG, f"{path}: gateway {name!r}: {key} has the wrong type")
    return data


def _expand(value: str | None) -> Path | None:
    return Path(os.path.expanduser(value)) if value else None


def resolve(
    *,
    env: Mapping[str, str],
    url: str | None = None,
    gateway: str | None = None,
    profile: str | None = None,
    token_file: str | None = None,
    username: str | None = None,
    password_file: str | None = None,
    request_timeout: float | None = None,
) -> Settings:
    """Merge flags, environment, the config file and defaults, in that order."""
    data = load_config(config_path(env))
    gateways = data.get("gateways", {})
    assert isinstance(gateways, dict)
    name = gateway or env.get("HERMES_TASK_GATEWAY") or data.get("default_gateway")
    table: dict[str, object] = {}
    if name is not None:
        if not isinstance(name, str) or name not in gateways:
            raise HermesError(Code.UNKNOWN_GATEWAY, clean_line(str(name)))
        table = gateways[name]

    def pick(flag: str | None, env_name: str | None, key: str) -> str | None:
        if flag is not None:
            return flag
        if env_name and env.get(env_name):
            return env[env_name]
        value = table.get(key)
        return value if isinstance(value, str) else None

    raw_url = pick(url, "HERMES_DASHBOARD_URL", "url") or DEFAULT_URL
    timeout = request_timeout
    if timeout is None:
        configured = table.get("request_timeout")
        timeout = float(configured) if isinstance(configured, int | float) else DEFAULT_REQUEST_TIMEOUT
    if timeout <= 0:
        raise HermesError(Code.USAGE, "the request timeout must be positive")
    return Settings(
        url=normalise_url(raw_url),
        profile=pick(profile, "HERMES_TASK_PROFILE", "profile"),
        token_file=_expand(pick(token_file, None, "token_file")),
        token_env=env.get("HERMES_DASHBOARD_TOKEN") or env.get("HERMES_DASHBOARD_SESSION_TOKEN") or None,
        username=pick(username, "HERMES_DASHBOARD_USERNAME", "username"),
        password_file=_expand(pick(password_file, None, "password_file")),
        password_env=env.get("HERMES_DASHBOARD_PASSWORD") or None,
        request_timeout=timeout,
        gateway=name if isinstance(name, str) else None,
    )
