"""The harness's command line, ``python -m tests.support.harness ensure|up|capture`` from the
repository root: ``ensure`` builds (or verifies) cached venvs side by side, ``up`` seeds a
scratch home and serves one backend until SIGTERM/SIGINT (printing its URL, token file, PID and
manifest as one JSON line), ``capture`` regenerates ``fixtures/<backend>/`` with
tools/capture_task_history_fixture.py in the backend's venv. Invariant: a command only calls
the harness's Python API (nothing here starts, seeds or stops a backend by other means), and a
``HarnessError`` becomes one ``harness: ...`` line on stderr and exit status 1.
"""

from __future__ import annotations

import argparse
import json
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.support.harness.homes import REPO_ROOT, seed, support_env
from tests.support.harness.server import start
from tests.support.harness.specs import BACKENDS, HarnessError
from tests.support.harness.venvs import ensure_venv, isolated_env, venv_python

DESCRIPTION = "Run the real Hermes dashboard backends on 127.0.0.1 for tests, demos and benchmarks."
CAPTURE_SCRIPT = REPO_ROOT / "tools" / "capture_task_history_fixture.py"


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
        env = support_env(isolated_env())
        cmd = [str(venv_python(venv)), str(CAPTURE_SCRIPT), "--out", str(out), "--name", name]
        print(f"{name}: capturing into {out / name}", flush=True)
        rc = subprocess.call(cmd, env=env, stdin=subprocess.DEVNULL)
        if rc != 0:
            return rc
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.support.harness", description=DESCRIPTION)
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
