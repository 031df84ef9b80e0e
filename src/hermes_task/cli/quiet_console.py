"""The rich console the commands draw with (tables, live displays, a styled stderr line).

`QuietConsole` is rich's `Console` with two changes: a closed stdout ends the program quietly
(rich's own broken-pipe handler exits 1), and on a terminal no line keeps rich's trailing
padding (copied lines stay clean). It is built only by `consoles.rich_console`, which chooses
its stream, colour and width; importing this module imports rich.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.console import Console
from rich.segment import Segment

from hermes_task.cli.closed_pipe import quiet_pipe_exit
from hermes_task.render.terminal import strip_line_ends


class QuietConsole(Console):
    """A rich console on `file` whose closed pipe is a quiet exit of `stdout` (module
    docstring); `trim` strips the trailing padding of every line (a terminal)."""

    def __init__(self, *, stdout: Any, trim: bool, **options: Any) -> None:
        super().__init__(**options)
        self.closed_stdout = stdout
        self.trim = trim

    def on_broken_pipe(self) -> None:
        quiet_pipe_exit(self.closed_stdout)

    def render(self, renderable: Any, options: Any = None) -> Iterable[Segment]:
        """On a terminal, every line without rich's trailing padding; piped output is never
        padded, and keeps every byte of the text."""
        rendered = super().render(renderable, options)
        return strip_line_ends(rendered) if self.trim else rendered
