"""`hermes-task completion`, `schema` and `config`: the tool describing itself.

None of these talks to a dashboard. `completion` prints typer's own script for a shell (the
committed copies in `completions/` are this output); shells call the program back with
`_HERMES_TASK_COMPLETE` set, which needs typer's completion classes registered first.
`schema` prints the JSON Schema of an output document (`render/schemas.py`). `config path`
and `config show` tell where the config file is and which settings are in force, with each
one's source; secrets are described, never printed (their work: `run_config.py`).
"""

from __future__ import annotations

import os
from enum import StrEnum
from typing import Annotated

import typer
from typer._completion_shared import get_completion_script

from hermes_task.cli.common import Common
from hermes_task.cli.environment import current
from hermes_task.cli.options import Quiet, command_app, with_common

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
    from hermes_task.render import jsontext as schemas  # lazy: the schema generator, only for `schema`

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
    from hermes_task.cli import run_config  # lazy: the command's work, kept off --help

    del quiet  # accepted as on every command; a broken config file is still said
    run_config.config_path(current(ctx))


@config_app.command("show")
@with_common(pager=False)
def config_show(*, common: Common) -> None:
    """Print the effective settings and where each came from (flag, env, config, default).

    Takes the same connection options as the other commands, so it shows what they would
    use. Token and password are never printed: only whether and where they are set.
    """
    from hermes_task.cli import run_config  # lazy: the command's work, kept off --help

    run_config.config_show(common)
