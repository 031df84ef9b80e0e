"""The command tree (`cli/app.py`): click's lazy group through typer. A command's module is
imported only when that command runs; `--version`, `--help`, usage errors and the "did you
mean" suggestion are typer's own answers, through the one parser."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from hermes_task import __version__
from hermes_task.cli.app import COMMANDS, app
from tests.unit.test_layering import PROBE_ENV

ID = "20260101_000000_abcdef"
DEAD = ("--json", "--url", "http://127.0.0.1:9")
# The commands' own modules (`completion`, `schema`, `config` and `parents` live in app.py,
# which every run imports).
COMMAND_MODULES = {module for module, _attribute in COMMANDS.values()} - {"hermes_task.cli.app"}

# The console script's own entry point, then every module loaded by the time it exits.
PROBE = """
import sys
from hermes_task.__main__ import main
sys.argv = ["hermes-task", *sys.argv[1:]]
try:
    main()
except SystemExit as exc:
    print(f"exit {exc.code}", file=sys.stderr)
print(" ".join(sorted(sys.modules)), file=sys.stderr)
"""


def run(*args: str) -> tuple[str, str, set[str]]:
    """(stdout, the exit line, the modules loaded) of `hermes-task ARGS` in a fresh interpreter."""
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=PROBE_ENV,
    )
    lines = proc.stderr.splitlines()
    assert len(lines) >= 2, proc.stderr
    return proc.stdout, lines[-2], set(lines[-1].split())


@pytest.mark.parametrize(
    ("args", "module", "status"),
    [
        (["show", ID, *DEAD], "hermes_task.cli.show", 7),
        (["older", ID, *DEAD], "hermes_task.cli.older", 7),
        (["recover", ID, *DEAD], "hermes_task.cli.recover", 7),
        (["follow", ID, "--timeout", "0.1", *DEAD], "hermes_task.cli.follow", 7),
        (["export", ID, "--format", "otlp-json", *DEAD[1:]], "hermes_task.cli.export", 7),
        (["config", "path"], None, 0),
        (["show", "--help"], "hermes_task.cli.show", 0),
    ],
)
def test_a_command_imports_its_own_module_only(args: list[str], module: str | None, status: int) -> None:
    _stdout, exit_line, modules = run(*args)
    assert exit_line == f"exit {status}"
    assert modules & COMMAND_MODULES == ({module} if module else set())


def test_version_is_typers_answer_and_builds_no_command() -> None:
    for flag in ("--version", "-V"):
        stdout, exit_line, modules = run(flag)
        assert stdout == f"hermes-task {__version__}\n"
        assert exit_line == "exit 0"
        assert "typer" in modules
        assert not modules & COMMAND_MODULES


def test_help_lists_every_command_in_the_order_a_user_meets_them() -> None:
    result = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "100", "NO_COLOR": "1"})
    assert result.exit_code == 0
    listed = result.stdout.split("Commands:\n", 1)[1].splitlines()
    assert [line.split()[0] for line in listed if line.strip()] == list(COMMANDS)


def test_an_unknown_command_is_a_usage_error_with_typers_suggestion() -> None:
    """typer suggests from the commands the group holds; a lazy group loads them first."""
    result = CliRunner().invoke(app, ["shwo", ID], env={"COLUMNS": "100", "NO_COLOR": "1"})
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        "error: invalid usage: No such command 'shwo'. Did you mean 'show'?",
        "Usage: hermes-task [OPTIONS] COMMAND [ARGS]...",
        "hint: try 'hermes-task -h' for help",
    ]


def test_python_m_and_the_console_script_are_one_entry_point() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "hermes_task", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert proc.stdout == f"hermes-task {__version__}\n"


# The modules of the commands' work (the session and shell, and the layers below the CLI): a
# command's module imports them when it runs, never at import.
WORK_MODULES = {"hermes_task.cli.session", "hermes_task.cli.pager"} | {
    "hermes_task.reading.reader",
    "hermes_task.reading.tasktree",
    "hermes_task.render.otlp",
    "hermes_task.render.jsontext",
}


@pytest.mark.parametrize(
    "args",
    [["--help"], ["show", "--help"], ["recover", "--help"], ["config", "--help"], ["export", "--help"]],
)
def test_help_imports_every_command_it_lists_and_none_of_their_work(args: list[str]) -> None:
    """Root `--help` imports every command's module (typer needs each one's short help); no
    help imports a command's work: each command module holds only its typer signature."""
    _stdout, exit_line, modules = run(*args)
    assert exit_line == "exit 0"
    if args == ["--help"]:
        assert modules >= COMMAND_MODULES
    assert not modules & WORK_MODULES


def test_the_work_modules_exist() -> None:
    """A renamed module must not leave the help test above checking a name that is gone."""
    assert [m for m in sorted(WORK_MODULES) if importlib.util.find_spec(m) is None] == []


def test_a_command_imports_the_work_it_runs() -> None:
    _stdout, exit_line, modules = run("show", ID, *DEAD)
    assert exit_line == "exit 7"
    assert {"hermes_task.cli.show", "hermes_task.cli.session", "hermes_task.reading.reader"} <= modules
    assert not modules & {"hermes_task.cli.older", "hermes_task.cli.follow", "hermes_task.cli.recover"}
