"""Run the CLI: `hermes_task` as a subprocess against a real backend (the truest
integration), and `invoke` in-process through typer's CliRunner for the unit tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from typer.testing import CliRunner, Result

from hermes_task.cli.app import app
from hermes_task.cli.options import Environment
from tests.support.replay import BASE_URL
from tests.support.replay import TOKEN as REPLAY_TOKEN


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


# -- in-process, through typer's CliRunner (the unit tests) ---------------------------------------

# What every in-process run sees: the replay token, no colour, a fixed width and no user config.
CLI_ENV: dict[str, str | None] = {
    "HERMES_DASHBOARD_TOKEN": REPLAY_TOKEN,
    "NO_COLOR": "1",
    "COLUMNS": "100",
    "XDG_CONFIG_HOME": "/nonexistent",
}


# The Environment the unit tests' CLI runs get (a tty, a fake clock): a fixture or a test
# pushes one and clears the list after; the command helpers pass the last one (none: the real one).
ENVIRONMENT: list[Environment] = []


def invoke(
    command: str,
    *args: str,
    env: Mapping[str, str | None] | None = None,
    environment: Environment | None = None,
    url: str = BASE_URL,
) -> Result:
    """`hermes-task COMMAND ARGS --url URL` in-process: `CLI_ENV` updated by `env` (None
    removes a variable) and `environment` as the injected Environment (None: the real one)."""
    return CliRunner().invoke(
        app, [command, *args, "--url", url], env={**CLI_ENV, **(env or {})}, obj=environment
    )


def recording(seen: list[Any], real: Callable[..., None]) -> Callable[..., None]:
    """`real` (an output function a test patches), remembering each document it is given."""

    def record(console: Any, doc: Any, **view: Any) -> None:
        seen.append(doc)
        real(console, doc, **view)

    return record
