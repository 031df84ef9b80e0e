"""Run the CLI on a real pseudo-terminal of a chosen size and capture what the screen shows.

No mock of `isatty`: `pty.openpty` gives the process a terminal, `TIOCSWINSZ` its size, and
stdin, stdout and stderr are all that terminal, as in a shell. What it wrote is read from the
other end until the process closes it; `Screen.text` is that with `\\r\\n` made `\\n` and every
escape sequence (SGR colours, cursor moves, the cursor's hide/show) removed: the characters a
person sees, line by line, for output that does not move the cursor back up.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")


@dataclass(frozen=True)
class Screen:
    raw: str  # what the terminal received, escapes included
    code: int

    @property
    def text(self) -> str:
        return ESCAPES.sub("", self.raw).replace("\r\n", "\n").replace("\r", "")

    @property
    def lines(self) -> list[str]:
        return self.text.split("\n")


def on_terminal(
    args: Sequence[str], env: Mapping[str, str], *, columns: int, rows: int = 50, timeout: float = 120
) -> Screen:
    """`python -m hermes_task ARGS` on a `rows` x `columns` terminal, with `env` as its whole
    environment (COLUMNS and LINES removed: the terminal's own size decides)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    clean = {k: v for k, v in env.items() if k not in ("COLUMNS", "LINES")}
    clean.setdefault("TERM", "xterm-256color")
    proc = subprocess.Popen(
        [sys.executable, "-m", "hermes_task", *args],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=clean,
        start_new_session=True,
    )
    os.close(slave)
    shown = bytearray()
    try:
        while True:
            ready, _, _ = select.select([master], [], [], timeout)
            if not ready:
                proc.kill()
                raise AssertionError(f"the CLI wrote nothing for {timeout}s: {bytes(shown[-400:])!r}")
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: every process holding the terminal has closed it
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(master)
    code = proc.wait(timeout=timeout)
    return Screen(shown.decode("utf-8", errors="replace"), code)


__all__ = ["Screen", "on_terminal"]
