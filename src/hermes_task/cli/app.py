"""The command tree, assembled top-down: the typer app, its root options and every command.

Commands live one per module, each a typer app of its own (`options.command_app()`) that
knows nothing of the root; this module names them in the order a user meets them
(`COMMANDS`). The root group is click's lazy group: `get_command` imports a command's module
and converts its typer app (`typer.main.get_command`) only when that command is looked up, so
`show` never imports follow's, recover's or config's modules nor pays for typer turning their
signatures into options (issue 18). `--help`, usage errors and completion are typer's and
click's own. Invariant: importing this module imports typer, not rich, httpx, core or a
command module.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Annotated, Any

import typer
from typer._click import exceptions

from hermes_task import __version__
from hermes_task.cli.closed_pipe import quiet_pipe_exit
from hermes_task.cli.environment import Environment

# name: (module, attribute): the typer app of each command, in the order a user meets them.
COMMANDS: dict[str, tuple[str, str]] = {
    "show": ("hermes_task.cli.show", "app"),
    "follow": ("hermes_task.cli.follow", "app"),
    "older": ("hermes_task.cli.older", "app"),
    "parents": ("hermes_task.cli.parents", "app"),
    "recover": ("hermes_task.cli.recover", "app"),
    "search": ("hermes_task.cli.search", "app"),
    "export": ("hermes_task.cli.export", "app"),
    "tui": ("hermes_task.cli.tui", "app"),
    "completion": ("hermes_task.cli.meta", "completion_app"),
    "schema": ("hermes_task.cli.meta", "schema_app"),
    "config": ("hermes_task.cli.meta", "config_app"),
}

if os.environ.get("_HERMES_TASK_COMPLETE"):
    # A shell asks for completions: meta registers typer's shell classes on import.
    from hermes_task.cli import meta as _meta  # noqa: F401


class LazyGroup(typer.core.TyperGroup):
    """The root group: click's lazy-loading pattern (`list_commands`/`get_command`) over
    `COMMANDS`. A command is imported and converted once, when looked up, then kept in
    `self.commands` as `add_command` keeps any other."""

    def list_commands(self, ctx: Any) -> list[str]:
        return [*COMMANDS, *(name for name in self.commands if name not in COMMANDS)]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            module, attribute = COMMANDS[cmd_name]
            command_app = getattr(importlib.import_module(module), attribute)
            self.add_command(typer.main.get_command(command_app), cmd_name)
        return self.commands.get(cmd_name)

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        if args and args[0] not in self.list_commands(ctx):
            # typer suggests close names ("Did you mean 'show'?") from the commands it holds:
            # on an unknown name, every command is loaded first.
            for name in COMMANDS:
                self.get_command(ctx, name)
        return super().resolve_command(ctx, args)

    def main(self, *args: Any, **kwargs: Any) -> Any:
        """Usage errors spelled like every other failure: `error: invalid usage: …` first,
        then the usage line and a hint (click's own `Error: …` comes last, capitalised)."""
        if kwargs.get("standalone_mode", True) is False:
            return super().main(*args, **kwargs)
        try:
            code = super().main(*args, **{**kwargs, "standalone_mode": False})
        except exceptions.NoArgsIsHelpError as exc:
            exc.show()  # the help itself, not an error
            sys.exit(exc.exit_code)
        except exceptions.UsageError as exc:
            ctx = exc.ctx
            lines = [f"error: invalid usage: {exc.format_message()}"]
            if ctx is not None:
                lines.append(ctx.get_usage())
                if ctx.command.get_help_option(ctx) is not None:
                    lines.append(f"hint: try '{ctx.command_path} {ctx.help_option_names[0]}' for help")
            sys.stderr.write("\n".join(lines) + "\n")
            sys.exit(exc.exit_code)
        except exceptions.ClickException as exc:
            sys.stderr.write(f"error: {exc.format_message()}\n")
            sys.exit(exc.exit_code)
        except typer.Abort:
            sys.stderr.write("error: aborted\n")
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)


app = typer.Typer(
    name="hermes-task",
    cls=LazyGroup,
    help=(
        "See what Hermes Agent delegated subagent tasks did and are doing, read-only, "
        "over the Hermes dashboard's HTTP API."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"hermes-task {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", "-V", help="Print the version and exit.", is_eager=True, callback=_version),
    ] = False,
) -> None:
    """hermes-task: read-only views of delegated Hermes Agent tasks."""


def main() -> None:
    """Console-script entry point."""
    try:
        app(obj=Environment())
    except BrokenPipeError:
        quiet_pipe_exit()
