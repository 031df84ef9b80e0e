"""`recover --watch` against the in-memory dashboard, for a test that runs it on a real
pseudo-terminal (tests/unit/test_live_screen.py): `python -m tests.unit.pty_scenarios NAME`.

The CLI runs as it does for a user (`app(obj=Environment(...))`: stdout, stderr and the tty
test are the process's own, the terminal's), with only the dashboard (respx) and the clock
(no real waiting) replaced. Each scenario is a parent whose background unit completes on the
third sleep, on a 0.19-like (legacy) dashboard, so the first read warns:
- `retry`: the dashboard fails once while the table is shown (a `retrying:` note);
- `interrupt`: Ctrl-C while the table is shown;
- `crash`: an internal error while the table is shown (exit 1);
- `debug`: `--debug`, its request lines written while the table is shown.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from hermes_task.cli.app import app
from hermes_task.cli.options import Environment
from tests.support.clock import Clock
from tests.support.conversations import Conversations
from tests.support.dashboard import serving
from tests.unit.test_recover_cli import P
from tests.unit.test_watch import background, complete


def scenario(name: str, dash: Conversations) -> dict[int, Callable[[], None]]:
    def fail_once() -> None:
        dash.status = 500

    def recover() -> None:
        dash.status = None

    def interrupt() -> None:
        raise KeyboardInterrupt

    def crash() -> None:
        raise RuntimeError("a bug")

    finish = complete(dash, ("completed", "completed"))
    if name == "retry":
        return {1: fail_once, 2: recover, 3: finish}
    if name == "interrupt":
        return {2: interrupt}
    if name == "crash":
        return {2: crash}
    if name == "debug":
        return {3: finish}
    raise SystemExit(f"unknown scenario {name}")


def main(name: str) -> None:
    # A readable store that proposes nothing: the screens show the watch, not a store warning.
    import os
    import sqlite3
    import tempfile

    from tests.unit.conftest import SCHEMA

    path = os.path.join(tempfile.mkdtemp(prefix="hermes-task-pty-"), "state.db")
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA)
    conn.execute("INSERT INTO sessions (id, source, started_at) VALUES (?, 'cli', 0)", (P,))
    conn.commit()
    conn.close()
    os.environ["HERMES_TASK_STORE"] = path
    dash = Conversations()
    dash.contract = "legacy"
    background(dash)
    clock = Clock()
    clock.hooks.update(scenario(name, dash))
    with serving(dash.handle):
        debug = ["--debug"] if name == "debug" else []
        argv = ["recover", P, "--watch", "--exit-status", *debug]
        app(argv, obj=Environment(clock=clock, sleep=clock.sleep))


if __name__ == "__main__":
    main(sys.argv[1])
