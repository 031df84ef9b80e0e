"""`hermes-task completion`, `schema` and `config`: the tool describing itself.

None of these talks to a dashboard. `completion` prints typer's own script for a shell (the
committed copies in `completions/` are this output); shells call the program back with
`_HERMES_TASK_COMPLETE` set, which needs typer's completion classes registered first.
`schema` prints the JSON Schema of an output document (`schemas.py`). `config path` and
`config show` tell where the config file is and which settings are in force, with each
one's source; secrets are described, never printed.
"""

from __future__ import annotations

import os
from enum import StrEnum
from typing import Annotated, Any

import typer

from hermes_task.cli.common import Common
from hermes_task.cli.environment import current
from hermes_task.cli.options import Quiet, command_app, with_common
from hermes_task.cli.session import Session
from hermes_task.cli.shell import run

PROG = "hermes-task"
COMPLETE_VAR = "_HERMES_TASK_COMPLETE"

if os.environ.get(COMPLETE_VAR):
    # A shell asks for completions: typer registers its bash/zsh/fish classes only when
    # `add_completion` is on (it is off: no rc-file-editing --install-completion).
    from typer._completion_classes import completion_init

    completion_init()


class Shell(StrEnum):
    bash = "bash"
    zsh = "zsh"
    fish = "fish"


class SchemaName(StrEnum):
    transcript = "transcript"
    events = "events"
    tasks = "tasks"
    parents = "parents"
    search = "search"
    error = "error"
    config = "config"


def completion_script(shell: str) -> str:
    """The completion script for `shell`, exactly as `hermes-task completion SHELL` prints it."""
    from typer._completion_shared import get_completion_script

    return get_completion_script(prog_name=PROG, complete_var=COMPLETE_VAR, shell=shell) + "\n"


completion_app = command_app()


@completion_app.command()
def completion(
    ctx: typer.Context,
    # An explicit metavar keeps the usage line `{shell}` (typer 0.28 would append the choices).
    shell: Annotated[Shell, typer.Argument(metavar="shell", help="bash, zsh or fish.", show_default=False)],
    quiet: Quiet = False,
) -> None:
    """Print the shell completion script for SHELL.

    bash: eval "$(hermes-task completion bash)" in ~/.bashrc;
    zsh: eval "$(hermes-task completion zsh)" in ~/.zshrc, after compinit;
    fish: hermes-task completion fish > ~/.config/fish/completions/hermes-task.fish
    """
    del quiet  # accepted as on every command; nothing here warns
    current(ctx).write_stdout(completion_script(shell.value))


schema_app = command_app()


@schema_app.command()
def schema(
    ctx: typer.Context,
    name: Annotated[
        SchemaName | None,
        typer.Argument(
            metavar="name",
            help="Which document (transcript, events, tasks, parents, search, error, config); without it, the list of schemas.",
            show_default=False,
        ),
    ] = None,
    quiet: Quiet = False,
) -> None:
    """Print the JSON Schema (draft 2020-12) of an output document."""
    from hermes_task.render import schemas as schemas

    del quiet  # accepted as on every command; nothing here warns

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
    from hermes_task.failures import HermesError
    from hermes_task.settings import config_path as path_of
    from hermes_task.settings import load_config

    env = current(ctx)
    del quiet  # accepted as on every command; a broken config file is still said
    path = path_of(dict(env.environ))
    env.write_stdout(f"{path}\n")
    try:
        load_config(path)
    except HermesError as exc:  # the path is still the answer: say what is wrong with the file
        from hermes_task.core.sanitize import clean_line

        env.stderr.write(f"warning: {clean_line(exc.message)}\n")


@config_app.command("show")
@with_common(pager=False)
def config_show(*, common: Common) -> None:
    """Print the effective settings and where each came from (flag, env, config, default).

    Takes the same connection options as the other commands, so it shows what they would
    use. Token and password are never printed: only whether and where they are set.
    """

    def body(session: Session) -> None:
        from hermes_task import settings
        from hermes_task.cli.pager import pager_setting
        from hermes_task.core.configdoc import ConfigDoc, ConfigValue
        from hermes_task.failures import Code, HermesError
        from hermes_task.render.jsontext import document
        from hermes_task.render.settings_view import explain

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
            resolved = settings.resolve(
                env=env,
                url=common.url,
                profile=common.profile,
                token_file=common.token_file,
                username=common.username,
                password_file=common.password_file,
                request_timeout=common.request_timeout,
                use_config=False,
            )
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
                _error_line(session, invalid.message)
            common.env.write_stdout(_config_text(doc))
        if invalid is not None:
            raise SystemExit(int(invalid.exit_status))

    run(Session(common), body)


def _error_line(session: Session, message: str) -> None:
    from rich.text import Text

    line = Text("error: ", style="bold red")
    line.append(message)
    session.err_console().print(line)


def _config_text(doc: Any) -> str:
    from hermes_task.core.sanitize import clean_line

    found = " (invalid: see the error above)" if doc.error else "" if doc.exists else " (not found)"
    lines = [
        f"config file  {clean_line(doc.path)}{found}",
        f"gateways     {', '.join(clean_line(g) for g in doc.gateways) or '(none)'}",
        "",
    ]
    shown = {k: "-" if v.value is None else clean_line(str(v.value)) for k, v in doc.settings.items()}
    key_w = max(len(k) for k in shown)
    val_w = max(len(v) for v in shown.values())
    for key, value in shown.items():
        lines.append(f"{key:<{key_w}}  {value:<{val_w}}  {doc.settings[key].source}".rstrip())
    return "\n".join(lines) + "\n"
