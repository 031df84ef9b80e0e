"""Where a command's output goes and how it may look: whether a stream takes colour, how wide
and tall it is, stdout as the painters' `Target`, and the rich consoles for what rich draws.

The session (`session.py`) builds each of them once, on first use, from the run's options
(`Session.target`, `Session.console()`, `Session.err_console()`); nothing else builds them.
Invariant: colour follows `--color`, then NO_COLOR, FORCE_COLOR and TERM=dumb, then whether
the stream is a terminal, for stdout and stderr alike; no rich console is made (nor rich
imported) by a command that does not draw with one.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from hermes_task.cli.common import ColorMode, Common
from hermes_task.render import FALLBACK_WIDTH, Target, sane_width

if TYPE_CHECKING:
    from rich.console import Console


def color_enabled(common: Common, stream: Any) -> bool:
    """--color, then NO_COLOR, FORCE_COLOR and TERM=dumb, then whether `stream` is a tty."""
    env = common.env.environ
    if common.color is ColorMode.always:
        return True
    if common.color is ColorMode.never or env.get("NO_COLOR"):
        return False
    if env.get("FORCE_COLOR"):
        return True
    if env.get("TERM") == "dumb":
        return False
    return common.env.isatty(stream)


def output_target(common: Common) -> Target:
    """stdout as the painters' output (`render/target.py`): a terminal or not, colour or not,
    its size (`screen_size`), written through `write_stdout`."""
    env = common.env
    tty = env.isatty(env.stdout)
    width, height = screen_size(env.environ, env.stdout, tty=tty)
    color = color_enabled(common, env.stdout)
    return Target(env.write_stdout, tty=tty, color=color, columns=width, height=height)


def rich_console(common: Common, *, stderr: bool = False) -> Console:
    """A rich console on stdout (or stderr), for what rich draws (tables, live displays):
    no markup from data, no terminal line padded with trailing spaces, never a stderr message
    broken into lines (a terminal wraps it at word boundaries of its own width, and a copied
    message stays one line), a closed pipe a quiet exit, a sane width (`rich_width`)."""
    from hermes_task.cli.quiet_console import QuietConsole  # lazy: rich, only for what rich draws

    env = common.env
    stream = env.stderr if stderr else env.stdout
    color = color_enabled(common, stream)
    tty = env.isatty(stream)
    return QuietConsole(
        stdout=env.stdout,
        trim=tty,
        file=stream,
        force_terminal=color,
        no_color=not color,
        color_system="standard" if color else None,
        markup=False,
        highlight=False,
        emoji=False,
        soft_wrap=stderr or not tty,  # one message, one line: the terminal wraps it
        width=rich_width(env.environ, stream, tty=tty),
    )


def columns(environ: Mapping[str, str]) -> int:
    """The width for a non-terminal: `COLUMNS` when it is a sane number, else 100 (a broken
    COLUMNS must never cost the error message it was about to print)."""
    return sane_width(environ.get("COLUMNS")) or 100


def screen_size(environ: Mapping[str, str], stream: Any, *, tty: bool) -> tuple[int, int]:
    """(columns, lines) of an output: a terminal's (`terminal_size`), else `columns` and 25."""
    return terminal_size(environ, stream) if tty else (columns(environ), 25)


def rich_width(environ: Mapping[str, str], stream: Any, *, tty: bool) -> int | None:
    """The width to give a rich console: `columns` off a terminal; on one, None (rich follows
    the terminal's size as it changes) unless COLUMNS is set but not sane (rich would take
    `COLUMNS=0` as it is), then `terminal_size`'s."""
    if not tty:
        return columns(environ)
    if "COLUMNS" in environ and sane_width(environ["COLUMNS"]) is None:
        return terminal_size(environ, stream)[0]
    return None


def terminal_size(environ: Mapping[str, str], stream: Any) -> tuple[int, int]:
    """(columns, lines) of the terminal `stream` is: `COLUMNS` and `LINES` when sane, else
    what the terminal reports, else 80 and 25 (`COLUMNS=0` or 99999 must not leave a
    zero-wide or absurd screen)."""
    try:
        size = os.get_terminal_size(stream.fileno())
        measured_width, measured_height = size.columns, size.lines
    except (AttributeError, ValueError, OSError):  # not a real terminal (a test's stream)
        measured_width = measured_height = 0
    width = sane_width(environ.get("COLUMNS")) or sane_width(measured_width) or FALLBACK_WIDTH
    raw = str(environ.get("LINES", "")).strip()
    height = int(raw) if raw.isdigit() and int(raw) > 0 else measured_height or 25
    return width, height
