"""What `config show` says about each effective setting: its value and where it came from.

Secrets are described, never shown: "set (from file X)", "set (from env NAME)" or "not set".
Invariant: no returned value is ever a token or a password.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from hermes_task.settings import TOKEN_ENVS, Settings, Source


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
