"""The process environment a command runs in, injected so tests replace it instead of patching.

`Environment` carries what the commands would otherwise take from globals: the environment
variables, stdout and stderr, the tty test, the clock, the idle sleep and the HTTP transport.
`hermes-task` builds the real one; a test passes its own as typer's context object
(`CliRunner().invoke(app, args, obj=Environment(...))`). Invariant: no command reads
`os.environ`, `sys.stdout`, `time.monotonic` or constructs an httpx transport except through
the `Environment` it was given.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TextIO

from msgspec import Struct

if TYPE_CHECKING:
    import httpx


def stream_isatty(stream: Any) -> bool:
    """Whether `stream` is a terminal; a closed or fake stream is not."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


class Environment(Struct):
    """What a command may touch of the outside world. `stdout`/`stderr` default to the
    streams current at the time of use (CliRunner swaps `sys.stdout` per invocation);
    `sleep` None means the idle sleep that also watches stdout for a closed pipe;
    `variables` None means `os.environ` as it is when read."""

    variables: Mapping[str, str] | None = None
    stdout_stream: TextIO | None = None
    stderr_stream: TextIO | None = None
    isatty: Callable[[Any], bool] = stream_isatty
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] | None = None
    transport: httpx.BaseTransport | None = None

    @property
    def environ(self) -> Mapping[str, str]:
        return self.variables if self.variables is not None else dict(os.environ)

    @property
    def stdout(self) -> TextIO:
        return self.stdout_stream if self.stdout_stream is not None else sys.stdout

    @property
    def stderr(self) -> TextIO:
        return self.stderr_stream if self.stderr_stream is not None else sys.stderr

    def write_stdout(self, text: str) -> None:
        self.stdout.write(text)
        self.stdout.flush()


def current(ctx: Any) -> Environment:
    """The Environment of the running command (`ctx` is typer's Context): its context
    object, else the real one."""
    obj = ctx.find_root().obj if ctx is not None else None
    return obj if isinstance(obj, Environment) else Environment()
