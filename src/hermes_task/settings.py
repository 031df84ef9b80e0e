"""Effective settings: flag > environment > config file > default; URL normalisation.

The config file is TOML at `$XDG_CONFIG_HOME/hermes-task/config.toml` (else
`~/.config/hermes-task/config.toml`), with named gateways:

    default_gateway = "local"
    [gateways.local]
    url = "http://127.0.0.1:9119"
    profile = "default"
    token_file = "~/.config/hermes-task/local.token"
    username = "admin"
    password_file = "local.password"      # relative paths are relative to the config file
    request_timeout = 10
    store = "~/.hermes/state.db"         # else found by dashboard/storepath.py; no_store = true

Secrets are never values here: only paths to files that hold them. An unknown key, a
mistyped value, malformed TOML or a gateway name that the file does not define is a usage
error (exit 2) with a one-line message, never a silent default.
"""

from __future__ import annotations

import ipaddress
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

from hermes_task.core.sanitize import clean_line
from hermes_task.dashboard.storepath import choose_store
from hermes_task.failures import Code, HermesError

DEFAULT_URL = "http://127.0.0.1:9119"
DEFAULT_REQUEST_TIMEOUT = 10.0
TOP_KEYS = frozenset({"default_gateway", "gateways", "store", "no_store"})
GATEWAY_KEYS = frozenset(
    {"url", "profile", "token_file", "username", "password_file", "request_timeout", "store", "no_store"}
)
TOKEN_ENVS = ("HERMES_DASHBOARD_TOKEN", "HERMES_DASHBOARD_SESSION_TOKEN")

Source = Literal["flag", "env", "config", "default"]


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
    sources: Mapping[str, Source] = field(default_factory=dict, compare=False, repr=False)
    store: Path | None = None
    store_off: str | None = None

    @property
    def loopback(self) -> bool:
        return is_loopback(self.url)


def config_path(env: Mapping[str, str]) -> Path:
    """`$XDG_CONFIG_HOME/hermes-task/config.toml`; a relative XDG_CONFIG_HOME is ignored
    (XDG Base Directory spec), so `~/.config` is used instead."""
    xdg = env.get("XDG_CONFIG_HOME") or ""
    base = xdg if os.path.isabs(xdg) else str(Path(env.get("HOME") or Path.home()) / ".config")
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


def _bad(path: Path, what: str) -> HermesError:
    return HermesError(Code.CONFIG, f"{path}: {what}")


def load_config(path: Path) -> dict[str, object]:
    """The parsed, validated config file; `{}` when there is none. Every key is known and
    every value has its type, else `config_invalid`."""
    if not path.exists():
        return {}
    try:
        with path.open("rb") as handle:
            data = tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise _bad(path, clean_line(str(exc))) from None
    unknown = set(data) - TOP_KEYS
    if unknown:
        raise _bad(path, f"unknown keys {sorted(unknown)} (known: {sorted(TOP_KEYS)})")
    if not isinstance(data.get("default_gateway", ""), str):
        raise _bad(path, "default_gateway must be a string")
    if not isinstance(data.get("store", "-"), str) or not isinstance(data.get("no_store", False), bool):
        raise _bad(path, "store must be a path string and no_store true or false")
    gateways = data.get("gateways", {})
    if not isinstance(gateways, dict) or not all(isinstance(v, dict) for v in gateways.values()):
        raise _bad(path, "[gateways.NAME] must be tables")
    for name, table in gateways.items():
        unknown = set(table) - GATEWAY_KEYS
        if unknown:
            raise _bad(path, f"gateway {name!r} has unknown keys {sorted(unknown)}")
        for key, value in table.items():
            if key == "request_timeout":
                ok = isinstance(value, int | float) and not isinstance(value, bool) and value > 0
            elif key == "no_store":
                ok = isinstance(value, bool)
            else:
                ok = isinstance(value, str) and value != ""
            if not ok:
                raise _bad(path, f"gateway {name!r}: {key} has the wrong type or is empty")
    return data


def gateway_names(env: Mapping[str, str]) -> list[str]:
    """The gateway names of the config file, sorted; `[]` when the file is absent or
    invalid (used by shell completion, which must never fail loudly)."""
    try:
        gateways = load_config(config_path(env)).get("gateways", {})
    except HermesError:
        return []
    return sorted(gateways) if isinstance(gateways, dict) else []


def _expand(value: str | None, base: Path | None) -> Path | None:
    if not value:
        return None
    path = Path(os.path.expanduser(value))
    return base / path if base is not None and not path.is_absolute() else path


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
    store: str | None = None,
    no_store: bool = False,
) -> Settings:
    """Merge flags, environment, the config file and defaults, in that order; `sources`
    names where each setting came from. A secret from the environment beats a secret file
    named in the config file, and a file given as a flag beats both."""
    path = config_path(env)
    data = load_config(path)
    gateways = data.get("gateways", {})
    assert isinstance(gateways, dict)
    sources: dict[str, Source] = {}
    name: str | None = None
    candidates: tuple[tuple[object, Source], ...] = (
        (gateway, "flag"),
        (env.get("HERMES_TASK_GATEWAY"), "env"),
        (data.get("default_gateway"), "config"),
    )
    for value, source in candidates:
        if value:
            name, sources["gateway"] = str(value), source
            break
    table: dict[str, object] = {}
    if name is not None:
        if name not in gateways:
            known = ", ".join(sorted(gateways)) or "none defined"
            raise HermesError(Code.UNKNOWN_GATEWAY, f"{clean_line(name)} (known: {known})")
        table = gateways[name]

    def pick(key: str, flag: str | None, env_name: str | None) -> str | None:
        if flag is not None:
            sources[key] = "flag"
            return flag
        if env_name and env.get(env_name):
            sources[key] = "env"
            return env[env_name]
        value = table.get(key)
        if isinstance(value, str):
            sources[key] = "config"
            return value
        return None

    raw_url = pick("url", url, "HERMES_DASHBOARD_URL") or DEFAULT_URL
    timeout = request_timeout
    if timeout is not None:
        sources["request_timeout"] = "flag"
    else:
        configured = table.get("request_timeout")
        if isinstance(configured, int | float):
            timeout, sources["request_timeout"] = float(configured), "config"
        else:
            timeout = DEFAULT_REQUEST_TIMEOUT
    if timeout <= 0:
        raise HermesError(Code.USAGE, "the request timeout must be positive")
    token_env = next((env[n] for n in TOKEN_ENVS if env.get(n)), None)
    password_env = env.get("HERMES_DASHBOARD_PASSWORD") or None
    base = path.parent
    # flag file > env secret > config file: the config's file only when no env secret is set.
    token_path = pick("token_file", token_file, None) if token_file or not token_env else None
    password_path = pick("password_file", password_file, None) if password_file or not password_env else None
    final_url = normalise_url(raw_url)
    final_profile = pick("profile", profile, "HERMES_TASK_PROFILE")
    explicit_store = pick("store", store, "HERMES_TASK_STORE")
    if explicit_store is None and isinstance(data.get("store"), str):
        explicit_store, sources["store"] = str(data["store"]), "config"
    off = no_store or table.get("no_store", data.get("no_store")) is True
    explicit = _expand(explicit_store, base if sources.get("store") == "config" else None)
    store_path, store_off = choose_store(
        env, final_profile, explicit, off=off, loopback=is_loopback(final_url)
    )
    return Settings(
        url=final_url,
        profile=final_profile,
        store=store_path,
        store_off=store_off,
        token_file=_expand(token_path, base if sources.get("token_file") == "config" else None),
        token_env=token_env,
        username=pick("username", username, "HERMES_DASHBOARD_USERNAME"),
        password_file=_expand(password_path, base if sources.get("password_file") == "config" else None),
        password_env=password_env,
        request_timeout=timeout,
        gateway=name,
        sources=sources,
    )


def _file_state(path: Path) -> str:
    return f"set (from file {path})" if os.access(path, os.R_OK) else f"not readable (file {path})"


def explain(settings: Settings, env: Mapping[str, str]) -> list[tuple[str, str | float | None, Source]]:
    """(name, value, source) of every effective connection setting, for `config show`.
    Secrets are described, never shown: "set (from file X)", "set (from env NAME)" or
    "not set"; a token file named by `--token-file` or the config file is reported as such."""
    src = settings.sources
    rows: list[tuple[str, str | float | None, Source]] = [
        ("gateway", settings.gateway, src.get("gateway", "default")),
        ("url", settings.url, src.get("url", "default")),
        ("profile", settings.profile, src.get("profile", "default")),
        ("request_timeout", settings.request_timeout, src.get("request_timeout", "default")),
        ("username", settings.username, src.get("username", "default")),
    ]
    token_var = next((n for n in TOKEN_ENVS if env.get(n)), None)
    token: tuple[str, Source]
    if settings.username:
        token = ("not used (password login)", "default")
    elif settings.token_file is not None:
        token = (_file_state(settings.token_file), src.get("token_file", "flag"))
    elif token_var is not None:
        token = (f"set (from env {token_var})", "env")
    elif settings.loopback:
        token = ("not set (discovered from the local dashboard when needed)", "default")
    else:
        token = ("not set", "default")
    rows.append(("token", *token))
    password: tuple[str, Source]
    if settings.password_file is not None:
        password = (_file_state(settings.password_file), src.get("password_file", "flag"))
    elif settings.password_env:
        password = ("set (from env HERMES_DASHBOARD_PASSWORD)", "env")
    else:
        password = ("not set", "default")
    rows.append(("password", *password))
    return rows
