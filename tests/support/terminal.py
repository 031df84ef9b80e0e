"""Run a program on a real pseudo-terminal of a chosen size and capture what the screen shows.

No mock of `isatty`: `pty.openpty` gives the process a terminal, `TIOCSWINSZ` its size, and
stdin, stdout and stderr are all that terminal, as in a shell. What it wrote is read from the
other end until the process closes it (answering prompts on the way: `replies`).

Two views of it:
- `Screen.text` is the bytes with `\\r\\n` made `\\n` and every escape sequence (SGR colours,
  cursor moves, the cursor's hide/show) removed: the characters a person sees, line by line,
  for output that does not move the cursor back up;
- `Screen.seen` is what a terminal of that size shows once the program ended: the bytes fed
  to pyte (a VT100 emulator), the lines scrolled off the top kept, each line without its
  trailing blanks. A live display that redraws in place appears there once, as its last
  frame, exactly where the terminal left it. `Screen.cursor_hidden` is the emulator's cursor
  state at the end (a program must show again the cursor it hid).
"""

from __future__ import annotations

import codecs
import fcntl
import os
import pty
import re
import select
import signal
import struct
import subprocess
import sys
import termios
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import pyte

ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")
HISTORY = 10_000  # lines of scroll-back the emulator keeps


@dataclass(frozen=True)
class Screen:
    raw: str  # what the terminal received, escapes included
    code: int
    columns: int = 80
    rows: int = 50

    @property
    def text(self) -> str:
        return ESCAPES.sub("", self.raw).replace("\r\n", "\n").replace("\r", "")

    @property
    def lines(self) -> list[str]:
        return self.text.split("\n")

    def _emulated(self) -> pyte.HistoryScreen:
        screen = pyte.HistoryScreen(self.columns, self.rows, history=HISTORY)
        pyte.Stream(screen).feed(self.raw)
        return screen

    @property
    def seen(self) -> list[str]:
        """The scroll-back and the screen, as the terminal shows them at the end; the blank
        lines under the last written one dropped."""
        screen = self._emulated()
        top = ["".join(line[x].data for x in range(self.columns)).rstrip() for line in screen.history.top]
        lines = top + [line.rstrip() for line in screen.display]
        while lines and not lines[-1]:
            lines.pop()
        return lines

    @property
    def cursor_hidden(self) -> bool:
        return bool(self._emulated().cursor.hidden)


def _spawn(
    argv: Sequence[str], env: Mapping[str, str], columns: int, rows: int
) -> tuple[int, subprocess.Popen[bytes]]:
    """`argv` started on a new `rows` x `columns` pseudo-terminal: its master side and the
    process. `env` is the whole environment, less COLUMNS and LINES (the terminal's size decides)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    clean = {k: v for k, v in env.items() if k not in ("COLUMNS", "LINES")}
    clean.setdefault("TERM", "xterm-256color")
    proc = subprocess.Popen(
        list(argv), stdin=slave, stdout=slave, stderr=slave, env=clean, start_new_session=True
    )
    os.close(slave)
    return master, proc


def run_on_terminal(
    argv: Sequence[str],
    env: Mapping[str, str],
    *,
    columns: int,
    rows: int = 50,
    timeout: float = 120,
    replies: Sequence[tuple[str, str | Callable[[], object]]] = (),
) -> Screen:
    """`argv` on a `rows` x `columns` terminal, with `env` as its whole environment (COLUMNS
    and LINES removed: the terminal's own size decides). Each `(prompt, reply)` of `replies`
    is done once, in order, when the output so far shows `prompt` (escapes stripped): a
    string is typed, a callable called (a change to the world the program watches).
    `timeout` only guards against a hang: a program silent that long fails the test."""
    master, proc = _spawn(argv, env, columns, rows)
    shown = bytearray()
    pending = list(replies)
    try:
        while True:
            ready, _, _ = select.select([master], [], [], timeout)
            if not ready:
                _stop(proc)
                raise AssertionError(f"the program wrote nothing for {timeout}s: {bytes(shown[-400:])!r}")
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: every process holding the terminal has closed it
                break
            if not chunk:
                break
            shown += chunk
            if pending and pending[0][0] in ESCAPES.sub("", shown.decode("utf-8", errors="replace")):
                reply = pending.pop(0)[1]
                if isinstance(reply, str):
                    os.write(master, reply.encode())
                else:
                    reply()
    finally:
        os.close(master)
    code = proc.wait(timeout=timeout)
    return Screen(shown.decode("utf-8", errors="replace"), code, columns, rows)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """End a hung program as Ctrl-C on its terminal would (SIGINT to its process group), so it
    stops what it started elsewhere (the demo's dashboard has a process group of its own);
    then kill the group."""
    os.killpg(proc.pid, signal.SIGINT)
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def on_terminal(
    args: Sequence[str], env: Mapping[str, str], *, columns: int, rows: int = 50, timeout: float = 120
) -> Screen:
    """`python -m hermes_task ARGS` on a `rows` x `columns` terminal (`run_on_terminal`)."""
    argv = [sys.executable, "-m", "hermes_task", *args]
    return run_on_terminal(argv, env, columns=columns, rows=rows, timeout=timeout)


Display = list[str]  # what the emulated terminal shows now, a string per line
Step = tuple[Callable[[Display], bool], str | Callable[[], object]]


def drive_screen(
    argv: Sequence[str],
    env: Mapping[str, str],
    *,
    columns: int,
    rows: int,
    steps: Sequence[Step],
    timeout: float = 120,
) -> tuple[Screen, list[Display]]:
    """`argv` on a `rows` x `columns` terminal (as `run_on_terminal`), driven by what the
    screen shows *now*: a full-screen program redraws in place, so each step waits until the
    emulated display (pyte, fed as the bytes arrive) satisfies its predicate, keeps that
    display, then types its string or calls its callable. Returns the run and the displays
    the steps saw, in order. A step never satisfied fails after `timeout` seconds of silence
    with the display it waited on."""
    master, proc = _spawn(argv, env, columns, rows)
    screen = pyte.Screen(columns, rows)
    stream = pyte.Stream(screen)
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    shown = bytearray()
    pending = list(steps)
    frames: list[Display] = []
    try:
        while True:
            ready, _, _ = select.select([master], [], [], timeout)
            if not ready:
                _stop(proc)
                raise AssertionError(
                    f"no step matched for {timeout}s; the screen shows:\n" + "\n".join(screen.display)
                )
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: every process holding the terminal has closed it
                break
            if not chunk:
                break
            shown += chunk
            stream.feed(decoder.decode(chunk))
            display = [line.rstrip() for line in screen.display]
            while pending and pending[0][0](display):
                frames.append(display)
                reply = pending.pop(0)[1]
                if isinstance(reply, str):
                    os.write(master, reply.encode())
                else:
                    reply()
    finally:
        os.close(master)
    code = proc.wait(timeout=timeout)
    assert not pending, f"{len(pending)} steps never matched (exit {code}); the screen shows:\n" + "\n".join(
        screen.display
    )
    return Screen(shown.decode("utf-8", errors="replace"), code, columns, rows), frames


__all__ = ["Screen", "drive_screen", "on_terminal", "run_on_terminal"]
