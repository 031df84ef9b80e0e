"""The demo: the workflow of the README, walked against a real local Hermes dashboard.

It seeds a disposable home through the backend package's own APIs (a parent chat that
delegated tasks; a child rotated twice by the real compression path), starts the dashboard on
127.0.0.1 and runs hermes-task the way the README's workflow does, each step with an id the
previous step printed: `recover PARENT` (the table), the same piped (the child id is field 5 of
the tool's own output, never taken from the seeding), `show CHILD_ID`, then `recover --watch
--exit-status` on a second chat whose tasks complete a few seconds later. On a terminal the
dashboard then stays up (URL, token file and commands printed) until Enter or Ctrl-C; it is
always stopped by its own process group, and the home is removed. `--backend NAME` takes any
backend of tests/support/harness/ (official: hermes-agent 0.19.0, the default; iot;
official018; axisrow). Progress lines say "building" only when something is built.
Run it through tools/demo.sh, which puts the repository root on PYTHONPATH (for tests.support).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from tests.support import harness

VENV_BIN = Path(sys.executable).parent
WATCH_GOALS = ["Run the unit tests", "Build the wheel"]
WATCH_DELAY = 3.0


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def step(
    title: str, args: list[str], env: dict[str, str], *, pipe: str = ""
) -> subprocess.CompletedProcess[str]:
    """Print the command as a user would type it, run it, show its output; return it."""
    shown = " ".join(shlex.quote(a) if " " in a else a for a in args)
    print(f"\n# {title}\n$ hermes-task {shown}{pipe}", flush=True)
    if pipe:
        proc = subprocess.run([str(VENV_BIN / "hermes-task"), *args], env=env, capture_output=True, text=True)
        sys.stderr.write(proc.stderr)
        return proc
    code = subprocess.call([str(VENV_BIN / "hermes-task"), *args], env=env)
    return subprocess.CompletedProcess(args, code, "", "")


def first_child_id(piped: str) -> str | None:
    """Field 5 (child session) of the first task line of `recover`'s piped output that has one."""
    for line in piped.splitlines():
        fields = line.split("\t")
        if len(fields) >= 5 and fields[4]:
            return fields[4]
    return None


def prepare(name: str) -> None:
    venv = harness.venv_path(name)
    spec = harness.BACKENDS[name]
    if (venv / harness.MARKER_NAME).exists():
        say(f"demo: {name} backend ({spec.dist}=={spec.version}): cached in {venv}")
        return
    say(f"demo: first run: building the {name} backend venv ({spec.dist}=={spec.version}), about 1-2 minutes")
    started = time.monotonic()
    harness.ensure_venv(name)
    say(f"demo: built in {time.monotonic() - started:.0f} s")


def hold(backend: Any, home: Path, token_file: Path, parent: str, child: str | None) -> None:
    """On a terminal, keep the dashboard up for the user's own commands until Enter or Ctrl-C."""
    pgid = backend.pid
    print(
        "\nTry it yourself. The demo dashboard runs at "
        f"{backend.url}; its token is in {token_file}.\n"
        f'  export PATH="{VENV_BIN}:$PATH"   # hermes-task is {VENV_BIN / "hermes-task"}\n'
        f"  export HERMES_DASHBOARD_URL={backend.url} HERMES_HOME={home / 'hermes'}\n"
        f"  hermes-task recover {parent} --token-file {token_file}\n"
        + (f"  hermes-task follow {child} --token-file {token_file}\n" if child else ""),
        flush=True,
    )
    if not sys.stdin.isatty():
        print("(stdin is not a terminal: stopping the dashboard now)", flush=True)
        return
    print(f"Stop it: press Enter or Ctrl-C here (or from elsewhere: kill -TERM -{pgid}).", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        sys.stdin.readline()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--backend",
        choices=list(harness.BACKENDS),
        default="official",
        help="; ".join(f"{n}: {s.dist}=={s.version}" for n, s in harness.BACKENDS.items()),
    )
    args = parser.parse_args()
    started = time.monotonic()
    prepare(args.backend)
    home = Path(tempfile.mkdtemp(prefix="hermes-task-demo-"))
    codes: list[int] = []
    try:
        say(
            "demo: seeding a disposable home: a parent chat that delegated two tasks, and a second one still running"
        )
        manifest = harness.seed_demo(args.backend, home, WATCH_GOALS)
        seeded = time.monotonic()
        token = secrets.token_urlsafe(32)
        token_file = home / "dashboard.token"
        token_file.write_text(token + "\n", encoding="utf-8")
        token_file.chmod(0o600)
        with harness.start(args.backend, home, token) as backend:
            spec = backend.spec
            up = time.monotonic()
            say(f"demo: dashboard {spec.dist}=={spec.version} at {backend.url} (pid {backend.pid})")
            env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
            env |= {"HERMES_DASHBOARD_URL": backend.url, "HERMES_DASHBOARD_TOKEN": token}
            env |= {"HERMES_HOME": str(home / "hermes"), "XDG_CONFIG_HOME": str(home / "config")}
            parent = manifest["parent"]
            codes.append(step("1. the tasks a parent chat delegated", ["recover", parent], env).returncode)
            piped = step("2. the same, piped: one tab-separated line per task; field 5 is the child id",
                         ["recover", parent], env, pipe=" | cut -f5 | grep . | sed -n 1p")  # fmt: skip
            child = first_child_id(piped.stdout)
            codes.append(piped.returncode)
            if child is None:
                say("demo: recover printed no child id (the local store was not usable)")
                codes.append(1)
            else:
                print(child, flush=True)
                codes.append(step("3. show that task (rotated twice: its newer segments are proven)",
                                  ["show", child], env).returncode)  # fmt: skip
            unit = manifest["watch"]
            timer = threading.Timer(WATCH_DELAY, backend.complete_unit, (unit, ["completed", "completed"]))
            timer.start()
            try:
                codes.append(step("4. a second chat, tasks still running: wait for all of them, as a CI step would",
                                  ["recover", unit["parent"], "--watch", "--exit-status", "--timeout", "60"],
                                  env).returncode)  # fmt: skip
            finally:
                timer.join()
            done = time.monotonic()
            say(
                f"\ndemo: {done - started:.1f} s (seeding {seeded - started:.1f} s, dashboard start "
                f"{up - seeded:.1f} s, the four steps {done - up:.1f} s)"
            )
            hold(backend, home, token_file, parent, child)
        print("dashboard stopped.", flush=True)
        return max(codes)
    finally:
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
