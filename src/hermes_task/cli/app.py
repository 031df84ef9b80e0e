"""The command tree: the root app (a lazy group: a command's module is imported only when that
command is looked up), the commands that describe the tool itself (`completion`, `schema`,
`config`) and `parents`. Invariant: importing this module imports typer and `options.py` only."""

from __future__ import annotations

import contextlib
import importlib
import io
import os
import sys
from enum import StrEnum
from typing import Annotated, Any

import typer
from typer.completion import get_completion_inspect_parameters, shell_complete

from hermes_task import __version__
from hermes_task.cli.options import (
    CONNECTION,
    Common,
    Environment,
    Header,
    Quiet,
    Utc,
    argument,
    command_app,
    current,
    with_common,
)

PROG = "hermes-task"
COMPLETE_VAR = "_HERMES_TASK_COMPLETE"

# name: (module, attribute): the typer app of each command, in the order a user meets them.
COMMANDS: dict[str, tuple[str, str]] = {
    "show": ("hermes_task.cli.show", "app"),
    "follow": ("hermes_task.cli.follow", "app"),
    "older": ("hermes_task.cli.older", "app"),
    "parents": ("hermes_task.cli.app", "parents_app"),
    "recover": ("hermes_task.cli.recover", "app"),
    "search": ("hermes_task.cli.search", "app"),
    "export": ("hermes_task.cli.export", "app"),
    "tui": ("hermes_task.cli.tui", "app"),
    "completion": ("hermes_task.cli.app", "completion_app"),
    "schema": ("hermes_task.cli.app", "schema_app"),
    "config": ("hermes_task.cli.app", "config_app"),
}

if os.environ.get(COMPLETE_VAR):  # a shell asks: register typer's shell classes (`add_completion` is off)
    get_completion_inspect_parameters()


class LazyGroup(typer.core.TyperGroup):
    """The root group: click's lazy-loading pattern over `COMMANDS`, each converted once."""

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
            # typer suggests close names ("Did you mean 'show'?") from the commands it holds.
            for name in COMMANDS:
                self.get_command(ctx, name)
        return super().resolve_command(ctx, args)

    def main(self, *args: Any, **kwargs: Any) -> Any:
        """Usage errors spelled like every other failure: `error: invalid usage: …`, usage, hint."""
        if kwargs.get("standalone_mode", True) is False:
            return super().main(*args, **kwargs)
        try:
            code = super().main(*args, **{**kwargs, "standalone_mode": False})
        except typer.TyperException as exc:  # the base of every error of typer's vendored click
            ctx = getattr(exc, "ctx", None)  # a usage error's (click's UsageError has no public name)
            if ctx is not None and exc.format_message() == ctx.get_help():
                # no_args_is_help: the help itself (on stderr, exit 2), as click shows it
                typer.echo(exc.format_message(), err=True, color=ctx.color)
            elif hasattr(exc, "ctx"):
                lines = [f"error: invalid usage: {exc.format_message()}"]
                if ctx is not None:
                    lines.append(ctx.get_usage())
                    if ctx.command.get_help_option(ctx) is not None:
                        lines.append(f"hint: try '{ctx.command_path} {ctx.help_option_names[0]}' for help")
                sys.stderr.write("\n".join(lines) + "\n")
            else:
                sys.stderr.write(f"error: {exc.format_message()}\n")
            sys.exit(exc.exit_code)
        except typer.Abort:
            sys.stderr.write("error: aborted\n")
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)


app = command_app(
    name="hermes-task",
    cls=LazyGroup,
    help=(
        "See what Hermes Agent delegated subagent tasks did and are doing, read-only, "
        "over the Hermes dashboard's HTTP API."
    ),
    no_args_is_help=True,
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
    try:
        app(obj=Environment())
    except BrokenPipeError:
        from hermes_task.cli.session import quiet_pipe_exit  # lazy: only once stdout was closed

        quiet_pipe_exit()


Shell = StrEnum("Shell", "bash zsh fish")
SchemaName = StrEnum("SchemaName", "transcript events tasks parents search error config")


def completion_script(shell: str) -> str:
    """The completion script for `shell` (tools/regen.py too): typer's answer to `source_SHELL`."""
    get_completion_inspect_parameters()  # registers typer's shell classes
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        shell_complete(typer.main.get_command(completion_app), {}, PROG, COMPLETE_VAR, f"source_{shell}")
    return printed.getvalue().strip() + "\n"


completion_app = command_app()


@completion_app.command()
def completion(
    ctx: typer.Context,
    # An explicit metavar keeps the usage line `{shell}` (typer 0.28 would append the choices).
    shell: Annotated[Shell, argument("shell", "bash, zsh or fish.")],
    quiet: Quiet = False,
) -> None:
    """Print the shell completion script for SHELL.

    bash: eval "$(hermes-task completion bash)" in ~/.bashrc;
    zsh: eval "$(hermes-task completion zsh)" in ~/.zshrc, after compinit;
    fish: hermes-task completion fish > ~/.config/fish/completions/hermes-task.fish
    """
    current(ctx).write_stdout(completion_script(shell.value))


schema_app = command_app()


@schema_app.command()
def schema(
    ctx: typer.Context,
    name: Annotated[
        SchemaName | None,
        argument(
            "name",
            "Which document (transcript, events, tasks, parents, search, error, config); without it, the list of schemas.",
        ),
    ] = None,
    quiet: Quiet = False,
) -> None:
    """Print the JSON Schema (draft 2020-12) of an output document."""
    from hermes_task.render import jsontext as schemas  # lazy: the schema generator, only for `schema`

    write = current(ctx).write_stdout
    if name is None:
        width = max(len(n) for n in schemas.NAMES)
        for each in schemas.NAMES:
            write(f"{each:<{width}}  {schemas.description(each)}\n")
        return
    write(schemas.render(name.value))


config_app = command_app(
    name="config",
    help="Where the config file is and which settings are in force.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@config_app.command("path")
def config_path(ctx: typer.Context, quiet: Quiet = False) -> None:
    """Print the config file's path ($XDG_CONFIG_HOME/hermes-task/config.toml)."""
    from hermes_task import settings  # lazy: the config file, kept off --help
    from hermes_task.core.sanitize import clean_line  # lazy: as settings
    from hermes_task.failures import HermesError  # lazy: as settings

    del quiet  # accepted as on every command; a broken config file is still said
    env = current(ctx)
    path = settings.config_path(dict(env.environ))
    env.write_stdout(f"{path}\n")
    try:
        settings.load_config(path)
    except HermesError as exc:  # the path is still the answer; what is wrong, a warning
        env.stderr.write(f"warning: {clean_line(exc.message)}\n")


@config_app.command("show")
@with_common(pager=False)
def config_show(**shared: Any) -> None:
    """Print the effective settings and where each came from (flag, env, config, default).

    Takes the same connection options as the other commands, so it shows what they would
    use. Token and password are never printed: only whether and where they are set.
    """
    common = Common.of(shared)
    from hermes_task import settings  # lazy: the work, off --help
    from hermes_task.cli.pager import pager_setting  # lazy: as settings
    from hermes_task.cli.session import Session, shell  # lazy: as settings
    from hermes_task.core.documents import ConfigDoc, ConfigValue  # lazy: as settings
    from hermes_task.core.sanitize import clean_line  # lazy: as settings
    from hermes_task.failures import Code, HermesError  # lazy: as settings
    from hermes_task.render.jsontext import document, explain  # lazy: as settings

    with shell(Session(common)) as session:
        env = dict(common.env.environ)
        path = settings.config_path(env)
        invalid: HermesError | None = None
        try:
            resolved = session.settings
        except HermesError as exc:
            if exc.code is not Code.CONFIG:
                raise
            # Say what is wrong (file and line), then what can be said without the file.
            invalid = exc
            given = {k: getattr(common, k) for k in CONNECTION if k != "gateway"}  # a gateway is the file's
            resolved = settings.resolve(env=env, use_config=False, **given)
        values = {name: ConfigValue(value=v, source=s) for name, v, s in explain(resolved, env)}
        pager, pager_from = pager_setting(env)
        values["pager"] = ConfigValue(
            value=pager or "off", source="default" if pager_from == "default" else "env"
        )
        doc = ConfigDoc(
            path=str(path),
            exists=path.exists(),
            gateways=settings.gateway_names(env),
            settings=values,
            error=invalid.message if invalid is not None else None,
        )
        if common.json:
            common.env.write_stdout(document(doc))
        else:
            if invalid is not None:
                from rich.text import Text  # lazy: rich, only for a broken config file's error line

                session.err_console().print(Text(f"error: {invalid.message}", style="bold red"))
            found = " (invalid: see the error above)" if doc.error else "" if doc.exists else " (not found)"
            lines = [
                f"config file  {clean_line(doc.path)}{found}",
                f"gateways     {', '.join(clean_line(g) for g in doc.gateways) or '(none)'}",
                "",
            ]
            shown = {k: "-" if v.value is None else clean_line(str(v.value)) for k, v in values.items()}
            key_w, val_w = max(map(len, shown)), max(map(len, shown.values()))
            lines += [f"{k:<{key_w}}  {v:<{val_w}}  {values[k].source}".rstrip() for k, v in shown.items()]
            common.env.write_stdout("\n".join(lines) + "\n")
        if invalid is not None:
            raise SystemExit(int(invalid.exit_status))


parents_app = command_app()


@parents_app.command()
@with_common(pager=False)
def parents(
    limit: Annotated[
        int, typer.Option("--limit", metavar="N", min=1, max=100, help="List at most N chats (1-100).")
    ] = 10,
    header: Header = False,
    utc: Utc = False,
    **shared: Any,
) -> None:
    """List the newest chats that called delegate_task: the PARENT_ID recover and follow --parent take.

    The dashboard's local Hermes store proposes the parents of its newest delegated children
    (read-only; run on the dashboard's host, or pass --store PATH); each is printed only once
    the dashboard shows it and at least one child that names it as its delegation parent.
    Most recent delegation first: id, start, children proven, state, title (or its first user
    words). Piped, one tab-separated line per chat. Without a store: exit 12.
    """
    common = Common.of(shared)
    from hermes_task.cli.session import Session, emit_warnings, shell, stderr_line  # lazy: the work
    from hermes_task.core.documents import ParentsDoc  # lazy: as the session
    from hermes_task.render.jsontext import document  # lazy: as the session

    with shell(Session(common)) as session:
        entries, warnings = session.parents(limit)
        session.close()
        env = common.env
        if common.json:
            env.write_stdout(document(ParentsDoc(parents=entries, warnings=warnings)))
            return
        if not entries:
            stderr_line(common, "no chat in the store called delegate_task (that the dashboard shows)", "dim")
        else:
            from hermes_task.render import terminal  # lazy: rich, only for a listing as text

            if env.isatty(env.stdout):
                session.console().print(terminal.parents_renderable(entries, utc=utc), crop=False)
            else:
                lines = terminal.parent_lines(entries, header=header, utc=utc)
                env.write_stdout("".join(line + "\n" for line in lines))
        emit_warnings(common, warnings)
