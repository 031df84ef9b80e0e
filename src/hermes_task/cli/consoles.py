"""Where a command's output goes and how it may look: whether a stream takes colour, stdout as
the painters' `Target`, and the rich consoles for what rich draws.

The session (`session.py`) builds each of them once, on first use, from the run's options
(`Session.target`, `Session.console()`, `Session.err_console()`); nothing else builds them.
Invariant: colour follows `--color`, then NO_COLOR, FORCE_COLOR and TERM=dumb, then whether
the stream is a terminal, for stdout and stderr alike; no rich console is made (nor rich
imported) by a command that does not draw with one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hermes_task.cli.common import ColorMode, Common
from hermes_task.cli.environment import rich_width, screen_size

if TYPE_CHECKING:
    from rich.console import Console

    from hermes_task.render.target import Target


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
    its size (`environment.screen_size`), written through `write_stdout`."""
    from hermes_task.render.target import Target

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
