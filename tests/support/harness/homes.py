"""A backend's scratch home and the processes run against it: the ``HERMES_HOME``/``HOME``/``XDG_*``
directories (``home_dirs``), the environment every backend interpreter gets (``backend_env``,
``support_env``), owner-only secret files, and seeding through ``python -P -m
tests.support.seeding`` in the backend's venv (``run_seed_tool``, ``seed``, ``seed_demo``).
Invariant: a backend process sees only directories under the home it is given and an
environment stripped of the caller's ``HERMES_*``/``PYTHON*`` variables, so it can never touch a
real Hermes home; seeding writes through the package's own APIs, never by hand.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from tests.support.harness.specs import HarnessError, spec_named
from tests.support.harness.venvs import (
    ensure_venv,
    isolated_env,
    tail,
    venv_path,
    venv_python,
    venv_python_version,
)

REPO_ROOT = Path(__file__).resolve().parents[3]
# Run by a backend's interpreter with REPO_ROOT on PYTHONPATH (``support_env``).
SEED_MODULE = "tests.support.seeding"
SEED_TIMEOUT = 300.0
SHIM_SOURCE = "import builtins, pathlib; builtins.Path = pathlib.Path\n"


def home_dirs(home: Path) -> dict[str, Path]:
    """The scratch directories a backend process sees, all under *home*."""
    home = Path(home)
    return {
        "HERMES_HOME": home / "hermes",
        "HOME": home / "home",
        "XDG_STATE_HOME": home / "state",
        "XDG_CONFIG_HOME": home / "config",
        "XDG_CACHE_HOME": home / "cache",
        "XDG_DATA_HOME": home / "data",
    }


def write_shim(home: Path) -> Path:
    """The harness-owned ``sitecustomize.py`` that lets the iot fork start on Python < 3.14."""
    shim = Path(home) / "shim"
    shim.mkdir(parents=True, exist_ok=True)
    (shim / "sitecustomize.py").write_text(SHIM_SOURCE)
    return shim


def backend_env(name: str, home: Path, *, token: str | None = None) -> dict[str, str]:
    """Environment for every process that runs the backend interpreter against *home*."""
    spec = spec_named(name)
    venv = venv_path(name)
    home = Path(home).resolve()
    env = isolated_env()
    for var, path in home_dirs(home).items():
        path.mkdir(parents=True, exist_ok=True)
        env[var] = str(path)
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', os.defpath)}"
    env["VIRTUAL_ENV"] = str(venv)
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["HERMES_DISABLE_LAZY_INSTALLS"] = "1"
    env["NO_COLOR"] = "1"
    if spec.needs_path_shim and venv_python_version(venv) < (3, 14):
        env["PYTHONPATH"] = str(write_shim(home))
    if token is not None:
        env["HERMES_DASHBOARD_SESSION_TOKEN"] = token
    return env


def support_env(env: dict[str, str]) -> dict[str, str]:
    """*env* with the repository root first on ``PYTHONPATH``, for the processes a backend's
    interpreter runs from this package (``python -m tests.support.seeding``, the gated launcher,
    the fixture capture). The backend's own ``tools`` package still wins over the repository's
    ``tools/`` folder: a regular package beats a namespace directory wherever it is on the path."""
    env = dict(env)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH")) if p)
    return env


def write_secret(path: Path, value: str) -> Path:
    """Write *value* to *path* readable by its owner only (mode 0600); return *path*."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(value + "\n")
    os.chmod(path, 0o600)
    return path


def run_seed_tool(name: str, home: Path, *args: str, timeout: float = SEED_TIMEOUT) -> str:
    """Run ``python -m tests.support.seeding`` with the backend interpreter against *home*;
    return its stdout."""
    venv = ensure_venv(name)
    home = Path(home).resolve()
    env = support_env(backend_env(name, home))
    cmd = [str(venv_python(venv)), "-P", "-m", SEED_MODULE, *args]
    try:
        proc = subprocess.run(
            cmd, capture_output=True, stdin=subprocess.DEVNULL, cwd=home, env=env, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        raise HarnessError(f"seeding {' '.join(args)} timed out after {timeout:.0f}s") from None
    if proc.returncode != 0:
        raise HarnessError(
            f"seeding {' '.join(args)} failed for {name} (exit {proc.returncode}):\n"
            f"{tail(proc.stderr.decode('utf-8', 'replace'))}"
        )
    log = home / "seed.log"
    with open(log, "ab") as handle:
        handle.write(proc.stderr)
    return proc.stdout.decode("utf-8", "replace")


def start_seed_tool(name: str, home: Path, *args: str) -> subprocess.Popen[str]:
    """Start ``python -m tests.support.seeding ARGS`` (a long-running one: ``writer``) with the
    backend interpreter against *home*, stdin and stdout piped as text; the caller ends it by
    closing its stdin and waiting for it."""
    venv = ensure_venv(name)
    home = Path(home).resolve()
    env = support_env(backend_env(name, home))
    cmd = [str(venv_python(venv)), "-P", "-m", SEED_MODULE, *args]
    log = open(home / "seed.log", "ab")  # noqa: SIM115 (the process keeps it open)
    try:
        return subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, cwd=home, env=env, text=True
        )
    finally:
        log.close()


def seed(name: str, home: Path) -> dict[str, Any]:
    """Seed every scenario into *home* (see tests/support/seeding) and return the manifest."""
    home = Path(home).resolve()
    out = home / "manifest.json"
    run_seed_tool(name, home, "seed", "--out", str(out), "--name", name)
    manifest: dict[str, Any] = json.loads(out.read_text())
    return manifest


def seed_demo(name: str, home: Path, watch_goals: list[str]) -> dict[str, Any]:
    """Seed only what tools/demo.py walks (``seeding demo``): one process, so a few
    seconds instead of the whole suite's scenarios; return its manifest (parent, c1, c2, watch)."""
    home = Path(home).resolve()
    out = home / "manifest.json"
    run_seed_tool(name, home, "demo", "--out", str(out), "--watch-goals-json", json.dumps(watch_goals))
    manifest: dict[str, Any] = json.loads(out.read_text())
    return manifest
