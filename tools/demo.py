"""The demo: the workflow of the README, walked against a real local Hermes dashboard.

It seeds a disposable home through the backend package's own APIs (a chat whose tasks are
still running; then a parent chat that delegated two tasks, one rotated twice by the real
compression path), starts the dashboard on 127.0.0.1 and runs hermes-task the way the
README's workflow does, each step with an id a previous step printed: `parents` (and piped,
field 1: the parent id), `recover PARENT` (the table), the same piped (field 5: the child id),
`show CHILD --tail 3`, then `recover --watch --exit-status` on the other chat, whose tasks
complete a few seconds later. Each step fits one screen and runs without a pager
(`HERMES_TASK_PAGER=cat`, said once); a warning about the setup is printed by the first step
that meets it, and the later steps pass `--quiet` (said once). On a terminal the dashboard
then stays up (URL, token file and commands printed) until Enter or Ctrl-C; with stdin not a
terminal it stops at once unless `--keep` (then: until Ctrl-C or SIGTERM), and says how to
keep it. It is always stopped by its own process group, and the home is removed.
`--backend NAME` takes any backend of tests/support/harness/ (official: hermes-agent 0.19.0,
the default; iot; official018; axisrow). Progress lines say "building" only when something is
built. Run it through tools/demo.sh, which puts the repository root on PYTHONPATH (for
tests.support).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
import shlex
import shutil
import signal
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


QUIET_NOTE = (
    "(the next steps pass --quiet: a warning about the setup (this backend, the local store)\n"
    "would say the same on every run; warnings about a task are still printed)"
)


class Steps:
    """The walk-through's commands: each printed as a user would type it, then run; after
    `quiet()`, with `--quiet` (said once)."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self.quiet_now = False

    def quiet(self) -> None:
        """From the next step on, pass --quiet (the setup's warnings were said once)."""
        print(f"\n{QUIET_NOTE}", flush=True)
        self.quiet_now = True

    def run(self, title: str, args: list[str], *, pipe: str = "") -> subprocess.CompletedProcess[str]:
        """Print the command, run it, show its output (piped: its stderr; stdout returned)."""
        if self.quiet_now:
            args = [*args, "--quiet"]
        shown = " ".join(shlex.quote(a) if " " in a else a for a in args)
        print(f"\n# {title}\n$ hermes-task {shown}{pipe}", flush=True)
        argv = [str(VENV_BIN / "hermes-task"), *args]
        if pipe:
            proc = subprocess.run(argv, env=self.env, capture_output=True, text=True)
            sys.stderr.write(proc.stderr)
            return proc
        return subprocess.CompletedProcess(args, subprocess.call(argv, env=self.env), "", "")


def field(piped: str, number: int) -> str | None:
    """Field `number` (1-based) of the first tab-separated line that has it non-empty."""
    for line in piped.splitlines():
        fields = line.split("\t")
        if len(fields) >= number and fields[number - 1]:
            return fields[number - 1]
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


def hold(backend: Any, home: Path, token_file: Path, parent: str, child: str | None, *, keep: bool) -> None:
    """Keep the dashboard up for the user's own commands: on a terminal until Enter or Ctrl-C;
    with `keep` until Ctrl-C or SIGTERM, wherever stdin is. Otherwise say how to keep it."""
    interactive = sys.stdin.isatty()
    if not (keep or interactive):
        print(
            "\nstdin is not a terminal, so the demo stops its dashboard now. To keep it running for "
            "your own commands: run bash tools/demo.sh from a terminal (it waits for Enter), or "
            "bash tools/demo.sh --keep (it runs until Ctrl-C or kill -TERM, and prints the commands).",
            flush=True,
        )
        return
    print(
        "\nTry it yourself. The demo dashboard runs at "
        f"{backend.url}; its token is in {token_file}.\n"
        f'  export PATH="{VENV_BIN}:$PATH"   # hermes-task is {VENV_BIN / "hermes-task"}\n'
        f"  export HERMES_DASHBOARD_URL={backend.url} HERMES_HOME={home / 'hermes'}\n"
        f"  export HERMES_DASHBOARD_TOKEN=$(cat {token_file})\n"
        "  hermes-task parents\n"
        f"  hermes-task recover {parent}\n" + (f"  hermes-task follow {child}\n" if child else ""),
        flush=True,
    )
    stop = threading.Event()
    previous = signal.signal(signal.SIGTERM, lambda _signum, _frame: stop.set())
    try:
        if interactive and not keep:
            print("Stop it: press Enter or Ctrl-C here.", flush=True)
            with contextlib.suppress(KeyboardInterrupt):
                sys.stdin.readline()
            return
        print(f"Stop it: Ctrl-C here, or kill -TERM {os.getpid()}.", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            while not stop.wait(0.5):
                pass
    finally:
        signal.signal(signal.SIGTERM, previous)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--backend",
        choices=list(harness.BACKENDS),
        default="official",
        help="; ".join(f"{n}: {s.dist}=={s.version}" for n, s in harness.BACKENDS.items()),
    )
    parser.add_argument(
        "--keep",
        action="store_true",
        help="keep the dashboard up after the steps until Ctrl-C or SIGTERM, even when stdin is not a terminal",
    )
    args = parser.parse_args()
    started = time.monotonic()
    prepare(args.backend)
    home = Path(tempfile.mkdtemp(prefix="hermes-task-demo-"))
    codes: list[int] = []
    try:
        say("demo: seeding a disposable home: a chat whose tasks still run, then one whose tasks ended")
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
            env |= {"HERMES_TASK_PAGER": "cat"}
            say(
                "demo: the steps run without a pager (HERMES_TASK_PAGER=cat); on your own terminal a "
                "transcript taller than the screen opens in less (q quits)"
            )
            steps = Steps(env)
            codes.append(
                steps.run("0. the newest chats that delegated: find the parent", ["parents"]).returncode
            )
            found = steps.run("   the same, piped: field 1 is the chat id; take the first",
                              ["parents"], pipe=" | cut -f1 | sed -n 1p")  # fmt: skip
            codes.append(found.returncode)
            parent = field(found.stdout, 1) or manifest["parent"]
            print(parent, flush=True)
            if parent != manifest["parent"]:
                say(f"demo: parents did not list the seeded chat {manifest['parent']} first")
                codes.append(1)
            codes.append(steps.run("1. the tasks that chat delegated", ["recover", parent]).returncode)
            steps.quiet()  # the first step that reads transcripts said the setup's warnings
            piped = steps.run("2. the same, piped: one tab-separated line per task; field 5 is the child id",
                              ["recover", parent], pipe=" | cut -f5 | grep . | sed -n 1p")  # fmt: skip
            child = field(piped.stdout, 5)
            codes.append(piped.returncode)
            if child is None:
                say("demo: recover printed no child id (the local store was not usable)")
                codes.append(1)
            else:
                print(child, flush=True)
                codes.append(steps.run("3. its last rows (rotated twice: the footer counts the proven segments)",
                                       ["show", child, "--tail", "3"]).returncode)  # fmt: skip
            unit = manifest["watch"]
            timer = threading.Timer(WATCH_DELAY, backend.complete_unit, (unit, ["completed", "completed"]))
            timer.start()
            try:
                codes.append(steps.run("4. the other chat, still running: wait for every task, as CI would",
                                       ["recover", unit["parent"], "--watch", "--exit-status", "--timeout", "60"]
                                       ).returncode)  # fmt: skip
            finally:
                timer.join()
            done = time.monotonic()
            say(
                f"\ndemo: {done - started:.1f} s (seeding {seeded - started:.1f} s, dashboard start "
                f"{up - seeded:.1f} s, the steps {done - up:.1f} s)"
            )
            hold(backend, home, token_file, parent, child, keep=args.keep)
        print("dashboard stopped.", flush=True)
        return max(codes)
    finally:
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
