"""A closed stdout (`hermes-task show ... | head`) ends the program quietly, with status 0.

Python's SIGPIPE recipe: the closed stdout is pointed at /dev/null, so the interpreter's final
flush cannot raise again, and the process exits 0. Every layer of the CLI that can meet the
closed pipe ends through here: the shell (`shell.run`), the rich consoles (`quiet_console.py`)
and the console script (`app.main`). Invariant: importing this module imports nothing beyond
the standard library (the console script imports it before any command).
"""

from __future__ import annotations

import os
import sys
from typing import Any, NoReturn


def quiet_pipe_exit(stdout: Any = None) -> NoReturn:
    """Silence the closed `stdout` (default: `sys.stdout`), exit 0."""
    silence(stdout)
    raise SystemExit(0)


def silence(stdout: Any = None) -> None:
    """Point a closed stdout at /dev/null, so the interpreter's final flush stays quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, (stdout or sys.stdout).fileno())
    except (OSError, ValueError, AttributeError):
        pass
