"""Effective settings: flag > environment > config file > default; URL normalisation.

The config file, its gateways and its errors: docs/configuration.md, "Configuration"."""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Annotated, Literal, TypeVar
from urllib.parse import urlsplit, urlunsplit

import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType, field

from hermes_task.core.sanitize import clean_line
from hermes_task.failures import Code, HermesError
from hermes_task.store.location import choose_store

DEFAULT_URL = "http://127.0.0.1:9119"
DEFAULT_REQUEST_TIMEOUT = 10.0
TOKEN_ENVS = ("HERMES_DASHBOARD_TOKEN", "HERMES_DASHBOARD_SESSION_TOKEN")

_T = TypeVar("_T", bound=Struct)
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
    return urlunsplit((scheme, host, parts.path.rstrip("/"), "", ""))


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


def _line_of(text: str, *needles: str) -> int | None:
    """The first line (1-based) of `text` that holds a key or table header named in `needles`."""
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        for needle in needles:
            if stripped.startswith(needle) and stripped[len(needle) :].lstrip()[:1] in ("=", "]", ".", ""):
                return number
    return None


NonEmpty = Annotated[str, Meta(min_length=1)] | UnsetType


class Gateway(Struct, frozen=True, forbid_unknown_fields=True):
    """One `[gateways.NAME]` table: every key optional, each of its type."""

    url: NonEmpty = UNSET
    profile: NonEmpty = UNSET
    token_file: NonEmpty = UNSET
    username: NonEmpty = UNSET
    password_file: NonEmpty = UNSET
    request_timeout: Annotated[float, Meta(gt=0)] | UnsetType = UNSET
    store: NonEmpty = UNSET
    no_store: bool | UnsetType = UNSET


class Config(Struct, frozen=True, forbid_unknown_fields=True):
    """The config file; its gateways are checked one by one (`Gateway`), so that an error
    names the gateway."""

    default_gateway: str | UnsetType = UNSET
    gateways: dict[str, dict[str, object]] = {}
    store: str | UnsetType = UNSET
    no_store: bool = False


_UNKNOWN = re.compile(r"Object contains unknown field `(.+)`")
_TOML_AT = re.compile(r"\s*\(at (?:line (\d+), column \d+|end of document)\)")


def _bad(path: Path, what: str, line: int | None = None) -> HermesError:
    """`config_invalid` naming the file, and the line when it is known (`PATH:LINE: what`)."""
    return HermesError(Code.CONFIG, f"{path}:{line}: {what}" if line else f"{path}: {what}")


def _convert(path: Path, text: str, data: object, kind: type[_T], gateway: str | None) -> _T:
    """`data` as `kind`, else `config_invalid`: msgspec's message, the key it is about (a
    gateway's keys under `gateway 'NAME': `) and that key's line."""
    try:
        return msgspec.convert(data, kind)
    except msgspec.ValidationError as exc:
        message, _, at = str(exc).partition(" - at `$")
        keys = [key for key in at.rstrip("`").replace("[...]", "").split(".") if key]
        unknown = _UNKNOWN.fullmatch(message)
        if unknown:
            keys.append(unknown.group(1))
            known = ", ".join(sorted(kind.__struct_fields__))
            what = f"unknown key {'.'.join(keys)!r} (known: {known})"
        else:
            what = f"{'.'.join(keys)}: {message}" if keys else message
        if gateway is None:
            line = _line_of(text, *keys[:1], "[gateways") if keys else None
        else:  # the key's line inside the gateway's table, else the table's header line
            line = _line_of(text, f"[gateways.{gateway}", f'[gateways."{gateway}"')
            found = _line_of("\n".join(text.splitlines()[line:]), *keys[:1]) if line else None
            line = line + found if line and found else line
            what = f"gateway {gateway!r}: {what}"
        raise _bad(path, clean_line(what), line) from None


def load_config(path: Path) -> tuple[Config, dict[str, Gateway]]:
    """The decoded config file and its gateways by name; empty when there is none. Malformed
    TOML, an unknown key or a value of the wrong type is `config_invalid` naming its line."""
    if not path.exists():
        return Config(), {}
    import tomllib  # lazy: only with a config file (its import is start-up time of every run)

    try:
        text = path.read_bytes().decode("utf-8")
        data = tomllib.loads(text)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        message = clean_line(str(exc))
        at = _TOML_AT.search(message)
        line = int(at.group(1)) if at and at.group(1) else None
        if at and line is None and isinstance(exc, tomllib.TOMLDecodeError):
            line = text.count("\n") + 1  # "at end of document"
        raise _bad(path, _TOML_AT.sub("", message).strip() if at else message, line) from None
    config = _convert(path, text, data, Config, None)
    gateways = {name: _convert(path, text, table, Gateway, name) for name, table in config.gateways.items()}
    return config, gateways


def gateway_names(env: Mapping[str, str]) -> list[str]:
    """The gateway names of the config file, sorted; `[]` when the file is absent or
    invalid (used by shell completion, which must never fail loudly)."""
    try:
        return sorted(load_config(config_path(env))[1])
    except HermesError:
        return []


# Each setting: a flag, else its environment variable (None: it has none), else the gateway's table.
_ENV_NAMES: dict[str, str | None] = {
    "url": "HERMES_DASHBOARD_URL",
    "profile": "HERMES_TASK_PROFILE",
    "username": "HERMES_DASHBOARD_USERNAME",
    "store": "HERMES_TASK_STORE",
    "token_file": None,
    "password_file": None,
}


def _first(key: str, layers: Iterable[tuple[object, Source]], sources: dict[str, Source]) -> str | None:
    """The first layer's value that is set (a flag's even when empty); `sources` records the layer."""
    for value, source in layers:
        if isinstance(value, str) and (value or source == "flag"):
            sources[key] = source
            return value
    return None


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
    names where each setting came from. `use_config=False` leaves the file out (what
    `config show` can still say about an invalid one)."""
    path = config_path(env)
    config, gateways = load_config(path) if use_config else (Config(), {})
    sources: dict[str, Source] = {}
    named: tuple[tuple[object, Source], ...] = (
        (gateway or None, "flag"),
        (env.get("HERMES_TASK_GATEWAY"), "env"),
        (config.default_gateway, "config"),
    )
    name = _first("gateway", named, sources)
    if name is not None and name not in gateways:
        known = ", ".join(sorted(gateways)) or "none defined"
        raise HermesError(Code.UNKNOWN_GATEWAY, f"{clean_line(name)} (known: {known})")
    table = gateways[name] if name is not None else Gateway()
    timeout = DEFAULT_REQUEST_TIMEOUT
    if request_timeout is not None:
        timeout, sources["request_timeout"] = request_timeout, "flag"
    elif isinstance(table.request_timeout, float):
        timeout, sources["request_timeout"] = table.request_timeout, "config"
    if timeout <= 0:
        raise HermesError(Code.USAGE, "the request timeout must be positive")
    token_env = next((env[n] for n in TOKEN_ENVS if env.get(n)), None)
    password_env = env.get("HERMES_DASHBOARD_PASSWORD") or None
    flags = {"url": url, "profile": profile, "username": username, "store": store}
    flags |= {"token_file": token_file, "password_file": password_file}
    secrets = {"token_file": token_env, "password_file": password_env}
    values: dict[str, str | None] = {}
    for key, var in _ENV_NAMES.items():
        layers: list[tuple[object, Source]] = [(flags[key], "flag"), (var and env.get(var), "env")]
        layers += [(getattr(table, key), "config"), (getattr(config, key, None), "config")]
        if secrets.get(key):  # flag file > env secret > config file
            layers = [(flags[key] or None, "flag")]
        values[key] = _first(key, layers, sources)

    def path_of(key: str) -> Path | None:
        """The setting as a path; a relative one from the config file under the file's folder."""
        if not values[key]:
            return None
        found = Path(os.path.expanduser(values[key] or ""))
        return path.parent / found if sources.get(key) == "config" and not found.is_absolute() else found

    final_url = normalise_url(values["url"] or DEFAULT_URL)
    off = no_store or (config.no_store if isinstance(table.no_store, UnsetType) else table.no_store)
    store_path, store_off = choose_store(
        env, values["profile"], path_of("store"), off=off, loopback=is_loopback(final_url)
    )
    return Settings(
        url=final_url,
        profile=values["profile"],
        store=store_path,
        store_off=store_off,
        token_file=path_of("token_file"),
        token_env=token_env,
        username=values["username"],
        password_file=path_of("password_file"),
        password_env=password_env,
        request_timeout=timeout,
        gateway=name,
        sources=sources,
    )
