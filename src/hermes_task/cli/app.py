"""The command tree, assembled top-down: the typer app, its root options and every command.

Commands live one per module and know nothing of the app; this module registers them in
the order a user meets them. Invariant: importing this module imports typer and the command
modules only — no rich, httpx or core module — so `--help` and `--version` start fast.
"""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer

from hermes_task import __version__
from hermes_task.cli import follow, meta, older, recover, show
from hermes_task.cli.environment import Environment
from hermes_task.cli.shell import quiet_pipe_exit

COMMAND_ORDER = ("show", "follow", "older", "recover", "completion", "schema", "config")


class _Group(typer.core.TyperGroup):
    """Commands listed in the order a user meets them, not alphabetically."""

    def list_commands(self, ctx: Any) -> list[str]:
        names = super().list_commands(ctx)
        rank = {name: i for i, name in enumerate(COMMAND_ORDER)}
        return sorted(names, key=lambda name: rank.get(name, len(rank)))

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


app.command()(show.show)
app.command()(follow.follow)
app.command()(older.older)
app.command()(recover.recover)
app.command(rich_help_panel="Setup")(meta.completion)
app.command(rich_help_panel="Setup")(meta.schema)
app.add_typer(meta.config_app, rich_help_panel="Setup")


def main() -> None:
    """Console-script entry point."""
    try:
        app(obj=Environment())
    except BrokenPipeError:
        quiet_pipe_exit()
