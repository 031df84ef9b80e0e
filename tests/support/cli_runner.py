"""Run the installed CLI as a subprocess against a real backend (the truest integration)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from typing import Any


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)


def cli_env(token: str, **extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("HERMES_", "FORCE_COLOR", "NO_COLOR")) and k != "COLUMNS"
    }
    env.update(
        {
            "HERMES_DASHBOARD_TOKEN": token,
            "NO_COLOR": "1",
            "COLUMNS": "100",
            "XDG_CONFIG_HOME": "/nonexistent",
        }
    )
    env.update(extra)
    return env


def backend_store_env(backend: Any) -> dict[str, str]:
    """HERMES_HOME of the backend's own home: the CLI finds the dashboard's store there, as a
    user's CLI finds `~/.hermes/state.db` beside the default dashboard."""
    home = getattr(backend, "home", None)
    return {"HERMES_HOME": str(home / "hermes")} if home is not None else {}


def hermes_task(backend: Any, *args: str, timeout: float = 60, **env: str) -> Run:
    """`python -m hermes_task ARGS --url backend.url` with the backend's token in the env, and
    its home as HERMES_HOME (so the backend's local store is found)."""
    proc = subprocess.run(
        [sys.executable, "-m", "hermes_task", *args, "--url", backend.url],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=cli_env(backend.token, **{**backend_store_env(backend), **env}),
        check=False,
    )
    return Run(proc.returncode, proc.stdout, proc.stderr)
