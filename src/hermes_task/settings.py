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
    store = "~/.hermes/state.db"         # else found by store/location.py; no_store = true

Secrets are never values here: only paths to files that hold them. An unknown key, a
mistyped value, malformed TOML or a gateway name that the file does not define is a usage
error (exit 2) with a one-line message, never a silent default.
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

from msgspec import Struct, field

from hermes_task.core.sanitize import clean_line
from hermes_task.failures import Code, HermesError
from hermes_task.store.location import choose_store

DEFAULT_URL = "http://127.0.0.1:9119"
DEFAULT_REQUEST_TIMEOUT = 10.0
TOP_KEYS = frozenset({"default_gateway", "gateways", "store", "no_store"})
GATEWAY_KEYS = frozenset(
    {"url", "profile", "token_file", "username", "password_file", "request_timeout", "store", "no_store"}
)
TOKEN_ENVS = ("HERMES_DASHBOARD_TOKEN", "HERMES_DASHBOARD_SESSION_TOKEN")

Source = Literal["flag", "env", "config", "default"]


class Settings(Struct, frozen=True):
    url: str
    profile: str | None
    token_file: Path | None
    token_env: str | None
    username: str | None
    password_file: Path | None
    password_env: str | None
    request_timeout: float
    gateway: str | None
    sources: Mapping[str, Source] = field(default_factory=dict)
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
    return is_loopback_host((urlsplit(url).hostname or "").lower())


def is_loopback_host(host: str) -> bool:
    """`localhost` or a loopback IP literal (a name other than `localhost` is not trusted)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _bad(path: Path, what: str, line: int | None = None) -> HermesError:
    """`config_invalid` naming the file, and the line when it is known (`PATH:LINE: what`)."""
    where = f"{path}:{line}" if line else str(path)
    return HermesError(Code.CONFIG, f"{where}: {what}")


def _line_of(text: str, *needles: str) -> int | None:
    """The first line (1-based) of `text` that holds a key or table header named in `needles`."""
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        for needle in needles:
            if stripped.startswith(needle) and stripped[len(needle) :].lstrip()[:1] in ("=", "]", ".", ""):
                return number
    return None


def load_config(path: Path) -> dict[str, object]:
    """The parsed, validated config file; `{}` when there is none. Every key is known and
    every value has its type, else `config_invalid`."""
    if not path.exists():
        return {}
    text, data = _read_toml(path)
    unknown = set(data) - TOP_KEYS
    if unknown:
        first = sorted(unknown)
        raise _bad(path, f"unknown keys {first} (known: {sorted(TOP_KEYS)})", _line_of(text, *first))
    if not isinstance(data.get("default_gateway", ""), str):
        raise _bad(path, "default_gateway must be a string", _line_of(text, "default_gateway"))
    if not isinstance(data.get("store", "-"), str) or not isinstance(data.get("no_store", False), bool):
        raise _bad(path, "store must be a path string and no_store true or false", _line_of(text, "store"))
    gateways = data.get("gateways", {})
    if not isinstance(gateways, dict) or not all(isinstance(v, dict) for v in gateways.values()):
        raise _bad(path, "[gateways.NAME] must be tables", _line_of(text, "gateways", "[gateways"))
    for name, table in gateways.items():
        _check_gateway(path, text, name, table)
    return data


def _read_toml(path: Path) -> tuple[str, dict[str, object]]:
    """The file's text and its TOML; `config_invalid` naming the line of a syntax error."""
    import tomllib  # only with a config file: its import is start-up time of every run

    try:
        text = path.read_bytes().decode("utf-8")
        return text, tomllib.loads(text)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        message = clean_line(str(exc))
        at = _TOML_AT.search(message)
        line = int(at.group(1)) if at and at.group(1) else None
        if at and line is None and isinstance(exc, tomllib.TOMLDecodeError):
            line = text.count("\n") + 1  # "at end of document"
        raise _bad(path, _TOML_AT.sub("", message).strip() if at else message, line) from None


def _check_gateway(path: Path, text: str, name: str, table: dict[str, object]) -> None:
    """`[gateways.NAME]`: known keys only, each of its type (a positive number, a boolean, or
    a non-empty string); `config_invalid` naming the key's line."""
    header = _line_of(text, f"[gateways.{name}", f'[gateways."{name}"')
    unknown = set(table) - GATEWAY_KEYS
    if unknown:
        line = _key_line(text, header, sorted(unknown))
        raise _bad(path, f"gateway {name!r} has unknown keys {sorted(unknown)}", line)
    for key, value in table.items():
        if not _gateway_value_ok(key, value):
            line = _key_line(text, header, [key])
            raise _bad(path, f"gateway {name!r}: {key} has the wrong type or is empty", line)


def _gateway_value_ok(key: str, value: object) -> bool:
    if key == "request_timeout":
        return isinstance(value, int | float) and not isinstance(value, bool) and value > 0
    if key == "no_store":
        return isinstance(value, bool)
    return isinstance(value, str) and value != ""


_TOML_AT = re.compile(r"\s*\(at (?:line (\d+), column \d+|end of document)\)")


def _key_line(text: str, header: int | None, keys: list[str]) -> int | None:
    """The line of one of `keys` inside the table that starts at line `header`."""
    if header is None:
        return None
    body = "\n".join(text.splitlines()[header:])
    found = _line_of(body, *keys)
    return header + found if found else header


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


def _gateway_name(
    flag: str | None, env: Mapping[str, str], data: Mapping[str, object], sources: dict[str, Source]
) -> str | None:
    """The gateway named by the flag, else the environment, else the config's default."""
    candidates: tuple[tuple[object, Source], ...] = (
        (flag, "flag"),
        (env.get("HERMES_TASK_GATEWAY"), "env"),
        (data.get("default_gateway"), "config"),
    )
    for value, source in candidates:
        if value:
            sources["gateway"] = source
            return str(value)
    return None


def _gateway_table(name: str | None, gateways: dict[str, dict[str, object]]) -> dict[str, object]:
    """The named gateway's table (`{}` without a name); `unknown_gateway` when the config
    has none of that name."""
    if name is None:
        return {}
    if name not in gateways:
        known = ", ".join(sorted(gateways)) or "none defined"
        raise HermesError(Code.UNKNOWN_GATEWAY, f"{clean_line(name)} (known: {known})")
    return gateways[name]


class _Pick:
    """One setting by precedence: its flag, else its environment variable (when it has
    one), else the gateway's table; `sources` records which one gave it."""

    def __init__(
        self, env: Mapping[str, str], table: Mapping[str, object], sources: dict[str, Source]
    ) -> None:
        self.env, self.table, self.sources = env, table, sources

    def __call__(self, key: str, flag: str | None, env_name: str | None) -> str | None:
        if flag is not None:
            self.sources[key] = "flag"
            return flag
        if env_name and self.env.get(env_name):
            self.sources[key] = "env"
            return self.env[env_name]
        value = self.table.get(key)
        if isinstance(value, str):
            self.sources[key] = "config"
            return value
        return None


def _request_timeout(flag: float | None, table: Mapping[str, object], sources: dict[str, Source]) -> float:
    """The flag's timeout, else the gateway's, else the default; `usage` when not positive."""
    if flag is not None:
        sources["request_timeout"] = "flag"
        timeout = flag
    else:
        configured = table.get("request_timeout")
        if isinstance(configured, int | float):
            timeout, sources["request_timeout"] = float(configured), "config"
        else:
            timeout = DEFAULT_REQUEST_TIMEOUT
    if timeout <= 0:
        raise HermesError(Code.USAGE, "the request timeout must be positive")
    return timeout


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
    use_config: bool = True,
) -> Settings:
    """Merge flags, environment, the config file and defaults, in that order; `sources`
    names where each setting came from. A secret from the environment beats a secret file
    named in the config file, and a file given as a flag beats both. `use_config=False`
    leaves the file out (what `config show` can still say about an invalid one)."""
    path = config_path(env)
    data = load_config(path) if use_config else {}
    gateways = data.get("gateways", {})
    assert isinstance(gateways, dict)
    sources: dict[str, Source] = {}
    name = _gateway_name(gateway, env, data, sources)
    table = _gateway_table(name, gateways)
    pick = _Pick(env, table, sources)
    raw_url = pick("url", url, "HERMES_DASHBOARD_URL") or DEFAULT_URL
    timeout = _request_timeout(request_timeout, table, sources)
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
