"""The backends' virtualenvs: where they are cached (``$HERMES_TASK_BACKEND_CACHE`` or
``~/.cache/hermes-task-backends/<dist>-<version>``), building one (``python -m venv`` plus
``pip install <dist>==<version>``) with ``ensure_venv``, and the helpers to run a command and
read an interpreter's facts. Invariant: a venv counts as built only once its completion marker
(``MARKER_NAME``) is written after a checked install, so a half-built venv is rebuilt; an fcntl
lock per backend serialises parallel builders; nothing is ever written inside the repository.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.support.harness.specs import BackendSpec, HarnessError, spec_named

MARKER_NAME = ".hermes-task-venv-complete"


def cache_root() -> Path:
    """Where backend venvs live (never inside the repository or the project venv)."""
    configured = os.environ.get("HERMES_TASK_BACKEND_CACHE")
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "hermes-task-backends"


def venv_path(name: str) -> Path:
    """The backend's venv directory under ``cache_root()`` (whether or not it is built yet)."""
    return cache_root() / spec_named(name).key


def venv_python(venv: Path) -> Path:
    """The interpreter of *venv*."""
    return venv / "bin" / "python"


def _run_captured(cmd: list[str], *, what: str, timeout: float = 1800.0, **kwargs: Any) -> str:
    """Run a command, return its output; on failure raise with the captured output."""
    try:
        proc = subprocess.run(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            timeout=timeout,
            **kwargs,
        )
    except subprocess.TimeoutExpired as exc:
        partial = (exc.stdout if isinstance(exc.stdout, bytes) else b"").decode("utf-8", "replace")
        raise HarnessError(f"{what} timed out after {timeout:.0f}s\n{tail(partial)}") from None
    except OSError as exc:
        raise HarnessError(f"{what} could not run: {exc}") from None
    out: str = proc.stdout.decode("utf-8", "replace")
    if proc.returncode != 0:
        raise HarnessError(f"{what} failed (exit {proc.returncode}): {' '.join(cmd)}\n{tail(out)}")
    return out


def tail(text: str, lines: int = 60) -> str:
    """The last *lines* lines of *text*, for error messages."""
    return "\n".join(text.rstrip().splitlines()[-lines:])


def _installed_version(venv: Path, dist: str) -> str | None:
    python = venv_python(venv)
    if not python.exists():
        return None
    try:
        out = subprocess.run(
            [str(python), "-c", "import importlib.metadata as m, sys; print(m.version(sys.argv[1]))", dist],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            timeout=60,
            env=isolated_env(),
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.decode().strip() if out.returncode == 0 else None


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def ensure_venv(name: str) -> Path:
    """Return the backend's cached venv, creating it (python -m venv + pip install) if needed.

    A completion marker is written only after a successful install, so a half-built venv is
    rebuilt; an fcntl lock serialises parallel pytest sessions.  A venv built before markers
    existed is adopted when its installed version checks out.
    """
    spec = spec_named(name)
    venv = venv_path(name)
    marker = venv / MARKER_NAME
    if marker.exists() and venv_python(venv).exists():
        return venv
    try:
        return _build_venv(spec, venv, marker)
    except OSError as exc:
        raise HarnessError(f"cannot prepare the {name} venv in {venv}: {exc}") from None


def _build_venv(spec: BackendSpec, venv: Path, marker: Path) -> Path:
    name = spec.name
    with _file_lock(cache_root() / f"{spec.key}.lock"):
        if marker.exists() and venv_python(venv).exists():
            return venv
        if (
            venv.exists()
            and (venv / "bin" / spec.command).exists()
            and _installed_version(venv, spec.dist) == spec.version
        ):
            _write_marker(venv, spec, adopted=True)
            return venv
        if venv.exists():
            shutil.rmtree(venv)
        if sys.version_info[:2] >= spec.python_below:
            raise HarnessError(
                f"{spec.dist}=={spec.version} requires Python < {'.'.join(map(str, spec.python_below))}; "
                f"this is {sys.version.split()[0]} ({sys.executable})"
            )
        _run_captured([sys.executable, "-m", "venv", str(venv)], what=f"creating the {name} venv")
        _run_captured(
            [
                str(venv_python(venv)),
                "-m",
                "pip",
                "install",
                "-q",
                "--disable-pip-version-check",
                f"{spec.dist}=={spec.version}",
            ],
            what=f"pip install {spec.dist}=={spec.version}",
        )
        installed = _installed_version(venv, spec.dist)
        if installed != spec.version:
            raise HarnessError(
                f"{spec.dist} in {venv} reports version {installed!r}, expected {spec.version}"
            )
        _write_marker(venv, spec, adopted=False)
    return venv


def _write_marker(venv: Path, spec: BackendSpec, *, adopted: bool) -> None:
    data = {
        "dist": spec.dist,
        "version": spec.version,
        "python": sys.version.split()[0],
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "adopted": adopted,
    }
    tmp = venv / (MARKER_NAME + ".tmp")
    tmp.write_text(json.dumps(data) + "\n")
    tmp.replace(venv / MARKER_NAME)


def venv_python_version(venv: Path) -> tuple[int, int]:
    """(major, minor) of the Python *venv* was made with, read from its ``pyvenv.cfg``."""
    cfg = venv / "pyvenv.cfg"
    for line in cfg.read_text().splitlines():
        key, _, value = line.partition("=")
        if key.strip() in ("version", "version_info"):
            major, minor = value.strip().split(".")[:2]
            return int(major), int(minor)
    raise HarnessError(f"cannot read the Python version of {venv} from {cfg}")


def isolated_env() -> dict[str, str]:
    """The caller's environment minus anything that could steer a Hermes or Python process."""
    drop_prefixes = ("HERMES_", "PYTHON")
    return {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(drop_prefixes) and k not in ("VIRTUAL_ENV", "__PYVENV_LAUNCHER__")
    }
