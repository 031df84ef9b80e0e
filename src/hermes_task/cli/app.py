"""The command tree, assembled top-down: the typer app, its root options and every command.

Commands live one per module and know nothing of the app; this module names them in the
order a user meets them (`COMMANDS`), and the root group imports and builds a command only
when it is looked up: `show` never imports follow's, recover's or config's modules, nor
pays for typer turning their signatures into options (issue 18). Invariant: importing this
module imports typer only — no rich, httpx, core or command module — so start-up stays fast.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Iterator, MutableMapping
from typing import Annotated, Any

import typer
from typer.main import get_command_from_info, get_group_from_info
from typer.models import CommandInfo, TyperInfo

from hermes_task import __version__
from hermes_task.cli.environment import Environment
from hermes_task.cli.shell import quiet_pipe_exit

# name: (module, attribute), in the order a user meets them; an attribute that is a
# typer.Typer is a command group (`config`), anything else a command function.
COMMANDS: dict[str, tuple[str, str]] = {
    "show": ("hermes_task.cli.show", "show"),
    "follow": ("hermes_task.cli.follow", "follow"),
    "older": ("hermes_task.cli.older", "older"),
    "parents": ("hermes_task.cli.parents", "parents"),
    "recover": ("hermes_task.cli.recover", "recover"),
    "completion": ("hermes_task.cli.meta", "completion"),
    "schema": ("hermes_task.cli.meta", "schema"),
    "config": ("hermes_task.cli.meta", "config_app"),
}
COMMAND_ORDER = tuple(COMMANDS)

if os.environ.get("_HERMES_TASK_COMPLETE"):
    # A shell asks for completions: meta registers typer's shell classes on import.
    from hermes_task.cli import meta as _meta  # noqa: F401


def build_command(name: str) -> Any:
    """The click command `name`, built from its module as `app.command()` / `add_typer`
    would have built it inside the app (plain help: rich_markup_mode=None)."""
    module, attribute = COMMANDS[name]
    target = getattr(importlib.import_module(module), attribute)
    if isinstance(target, typer.Typer):
        return get_group_from_info(
            TyperInfo(target),
            pretty_exceptions_short=app.pretty_exceptions_short,
            rich_markup_mode=None,
            suggest_commands=app.suggest_commands,
        )
    return get_command_from_info(
        CommandInfo(callback=target),
        pretty_exceptions_short=app.pretty_exceptions_short,
        rich_markup_mode=None,
    )


class _Commands(MutableMapping[str, Any]):
    """The root group's commands: every name of COMMANDS, each built on first lookup."""

    def __init__(self, built: MutableMapping[str, Any]) -> None:
        self._built = dict(built)

    def __getitem__(self, name: str) -> Any:
        if name not in self._built:
            if name not in COMMANDS:
                raise KeyError(name)
            self._built[name] = build_command(name)
        return self._built[name]

    def __setitem__(self, name: str, command: Any) -> None:
        self._built[name] = command

    def __delitem__(self, name: str) -> None:
        del self._built[name]

    def __iter__(self) -> Iterator[str]:
        yield from COMMANDS
        yield from (name for name in self._built if name not in COMMANDS)

    def __len__(self) -> int:
        return len(set(COMMANDS) | set(self._built))

    def __contains__(self, name: object) -> bool:
        return name in COMMANDS or name in self._built


class _Group(typer.core.TyperGroup):
    """Commands built when looked up, listed in the order a user meets them."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.commands = _Commands(self.commands)

    def list_commands(self, ctx: Any) -> list[str]:
        return list(self.commands)

    def main(self, *args: Any, **kwargs: Any) -> Any:
        """Usage errors spelled like every other failure: `error: invalid usage: …` first,
        then the usage line and a hint (click's own `Error: …` comes last, capitalised)."""
        if kwargs.get("standalone_mode", True) is False:
            return super().main(*args, **kwargs)
        from typer._click import exceptions

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
    cls=_Group,
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
