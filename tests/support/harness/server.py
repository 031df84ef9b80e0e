"""A running backend dashboard: ``start`` launches one on 127.0.0.1 (an OS-assigned port, read
from the ready line it prints) against a seeded home and waits until ``/api/status`` answers
200; ``Backend`` is the handle tests hold (URL, token or password login, manifest, ``get``) with
the store mutations the suite drives through the backend's own code (``append_rows``,
``rotate``, ``end_session``, ``watch_parent``, ``complete_unit``). Invariant: a server binds
only loopback, even gated (iot through ``HERMES_DASHBOARD_PUBLIC_URL``, the others through
``tests/support/gated_dashboard.py``), and is stopped only through its own process group
(``processes.py``), also when it fails to start.
"""

from __future__ import annotations

import contextlib
import http.cookiejar
import json
import re
import secrets
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from tests.support.harness.homes import (
    SEED_TIMEOUT,
    backend_env,
    run_seed_tool,
    start_seed_tool,
    support_env,
    write_secret,
)
from tests.support.harness.processes import STOP_TIMEOUT, terminate_group, track
from tests.support.harness.specs import BackendSpec, HarnessError, spec_named
from tests.support.harness.venvs import ensure_venv, tail

# Run by a backend's interpreter with the repository root on PYTHONPATH (``support_env``).
GATED_MODULE = "tests.support.gated_dashboard"
GATED_USERNAME = "admin"
READY_RE = re.compile(rb"HERMES_(?:DASHBOARD|BACKEND)_READY port=(\d+)")
START_TIMEOUT = 30.0


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
        return tail(path.read_text("utf-8", "replace"), lines)
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
        terminate_group(self._proc, timeout)

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
        """Append *n* rows to a session through SessionDB.append_message; return its new row count.
        One commit per row: the bench's 80,000-row appends take minutes on a busy disk, so the
        bound grows with *n* (20 ms a row) above the seeding tool's default."""
        timeout = max(SEED_TIMEOUT, n * 0.02)
        out = run_seed_tool(
            self.name, self.home, "append", "--session", session_id, "--n", str(n), timeout=timeout
        )
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

    def chain(self, rotations: int, *, fork: bool = False) -> dict[str, Any]:
        """A new plain chat rotated *rotations* times (``seeding chain``): root, tip, segments
        (oldest first), answer, sibling (``fork``: a second continuation of the last
        compressed segment)."""
        args = ["chain", "--rotations", str(rotations), *(["--fork"] if fork else [])]
        out = run_seed_tool(self.name, self.home, *args)
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

    def fan_out(self, goals: list[str], *, finished: bool = False, nested: int = 0) -> dict[str, Any]:
        """A new parent that dispatched *goals* in one background unit, seeded fast
        (``seeding fan-out``, tests/support/seeding/fanout.py): parent, delegation_id, goals,
        children, dispatched_at; ``finished``: every child ended and the completion row
        written; ``nested``: each child dispatched that many goals (``grandchildren``)."""
        args = ["fan-out", "--goals-json", json.dumps(goals), "--nested", str(nested)]
        out = run_seed_tool(self.name, self.home, *args, *(["--finished"] if finished else []))
        result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
        return result

    def writer(self) -> subprocess.Popen[str]:
        """A process appending one row per stdin line ``SESSION_ID TEXT`` through SessionDB,
        printing ``{"id", "at"}`` per commit (``seeding writer``); close stdin to end it."""
        return start_seed_tool(self.name, self.home, "writer")

    def rotated_parent(self) -> dict[str, Any]:
        """A new parent chat rotated by compression whose later segment delegates a task
        whose child rotates too (``seeding rotated-parent``, tests/support/seeding/rotparent.py)."""
        out = run_seed_tool(self.name, self.home, "rotated-parent")
        result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
        return result

    def compacted_child(self) -> dict[str, Any]:
        """A new parent whose background child was compacted in place, its goal row
        archived (``seeding compacted-child``, tests/support/seeding/compacted.py)."""
        out = run_seed_tool(self.name, self.home, "compacted-child")
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

    def held_unit(self, goals: list[str]) -> dict[str, Any]:
        """``watch_parent`` plus the ledger record Hermes writes at dispatch (``seeding
        held-unit``): parent, delegation_id, goals, children, dispatched_at, and ``ledger``
        (whether this package has the durable async_delegations ledger)."""
        out = run_seed_tool(self.name, self.home, "held-unit", "--goals-json", json.dumps(goals))
        result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
        return result

    def finish_held(self, unit: dict[str, Any], statuses: list[str] | None) -> dict[str, Any]:
        """Close a held unit's children; with *statuses*, Hermes records the unit's completion
        for the parent (``delivery_state='pending'``), never delivered to its transcript."""
        args = [
            "finish-held",
            "--parent",
            unit["parent"],
            "--delegation",
            unit["delegation_id"],
            "--goals-json",
            json.dumps(unit["goals"]),
            "--children-json",
            json.dumps(unit["children"]),
            "--dispatched-at",
            str(unit["dispatched_at"]),
        ]
        if statuses is not None:
            args += ["--statuses-json", json.dumps(statuses)]
        out = run_seed_tool(self.name, self.home, *args)
        result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
        return result


def start(name: str, home: Path, token: str, *, gated: bool = False) -> Backend:
    """Start *name* on 127.0.0.1 (OS-assigned port) against *home*; wait until /api/status is 200.

    ``gated=True`` turns on the password (basic) login gate while still binding only loopback:
    iot via ``HERMES_DASHBOARD_PUBLIC_URL``, the others via ``tests/support/gated_dashboard.py``
    (``BackendSpec.gate``).
    """
    spec = spec_named(name)
    venv = ensure_venv(name)
    home = Path(home).resolve()
    home.mkdir(parents=True, exist_ok=True)
    env = backend_env(name, home, token=token)
    username = password = password_file = None
    if gated:
        username = GATED_USERNAME
        password = secrets.token_urlsafe(18)
        password_file = write_secret(home / "password", password)
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
    track(proc)
    deadline = time.monotonic() + START_TIMEOUT
    try:
        port = _wait_ready(proc, log_path, deadline)
        _wait_status(proc, f"http://127.0.0.1:{port}", log_path, deadline)
    except BaseException:
        terminate_group(proc)
        raise
    token_file = write_secret(home / "token", token)
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
