"""The pager for long `show`/`older` output on a terminal: its choice and `Stream`
(docs/configuration.md "Colour, pager and debugging")."""

from __future__ import annotations

import contextlib
import shlex
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

DEFAULT_PAGER = "less -FRX"
PAGER_ENVS = ("HERMES_TASK_PAGER", "PAGER")


def pager_setting(env: Mapping[str, str]) -> tuple[str | None, str]:
    """(command line, None when paging is off; an env name or "default")."""
    for name in PAGER_ENVS:
        if name in env:
            value = env[name].strip()
            return (None if value in ("", "cat") else value), name
    return DEFAULT_PAGER, "default"


def pager_command(env: Mapping[str, str]) -> list[str] | None:
    """The pager's argv, or None when paging is off or the command line cannot be split."""
    line, _ = pager_setting(env)
    if line is None:
        return None
    try:
        argv = shlex.split(line)
    except ValueError:
        return None
    return argv or None


def should_page(requested: bool | None, lines: int, height: int) -> bool:
    """`--pager` pages always, `--no-pager` never, by default only output taller than the screen."""
    return requested if requested is not None else lines >= height


@dataclass(kw_only=True)
class Stream:
    """Rendered text fed in pieces, held until it is taller than the screen, then piped to the
    pager as it comes; written directly when the pager is off or cannot start, or the text fits."""

    requested: bool | None
    height: int
    env: Mapping[str, str]
    write: Callable[[str], None]
    encoding: str = "utf-8"
    held: list[str] = field(init=False, default_factory=list)
    lines: int = field(init=False, default=0)
    proc: subprocess.Popen[bytes] | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.argv = pager_command(self.env)
        self.direct = self.argv is None or self.requested is False

    def feed(self, text: str) -> None:
        if self.direct:
            self.write(text)
        elif self.proc is not None:
            self._send(text)
        else:
            self.held.append(text)
            self.lines += text.count("\n")
            if should_page(self.requested, self.lines, self.height) and self.lines:
                self._start()

    def _start(self) -> None:
        assert self.argv is not None
        pager_env = {"LESS": "FRX", "LV": "-c", **self.env}
        try:
            self.proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, env=pager_env)
        except OSError:
            self.direct = True
            self.write("".join(self.held))
        else:
            self._send("".join(self.held))
        self.held = []

    def _send(self, text: str) -> None:
        stdin = self.proc.stdin if self.proc is not None else None
        if stdin is None or stdin.closed:
            return
        try:
            stdin.write(text.encode(self.encoding, "replace"))
            stdin.flush()
        except OSError:  # the user quit the pager before the end: fine
            with contextlib.suppress(OSError):
                stdin.close()

    def close(self) -> bool:
        """End the text and wait for the pager; True when it showed the text."""
        if self.proc is None:
            if self.held:
                self.write("".join(self.held))
                self.held = []
            return False
        # BrokenPipeError (an OSError): the user quit the pager before the end, fine.
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        while True:
            with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is the pager's while it runs
                self.proc.wait()
                return True
