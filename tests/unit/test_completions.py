"""`hermes-task completion SHELL`, the committed scripts in completions/, and completion itself.

The bash script is exercised in a real bash against the installed console script; zsh and
fish are exercised through the protocol their scripts speak (and in the real shells when
they are installed).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hermes_task.cli import app

ROOT = Path(__file__).resolve().parents[2]
FILES = {"bash": "hermes-task.bash", "zsh": "_hermes-task", "fish": "hermes-task.fish"}
BIN = Path(sys.executable).parent
CONFIG = '[gateways.lab]\nurl = "http://127.0.0.1:1"\n[gateways.prod]\nurl = "http://127.0.0.1:2"\n'


def env_with_config(tmp_path: Path, text: str | None = CONFIG) -> dict[str, str]:
    if text is not None:
        (tmp_path / "hermes-task").mkdir(exist_ok=True)
        (tmp_path / "hermes-task" / "config.toml").write_text(text, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "_HERMES", "_TYPER"))}
    env.update({"XDG_CONFIG_HOME": str(tmp_path), "PATH": f"{BIN}{os.pathsep}{env.get('PATH', '')}"})
    return env


@pytest.mark.parametrize("shell", sorted(FILES))
def test_completion_prints_the_committed_script(shell: str) -> None:
    result = CliRunner().invoke(app, ["completion", shell])
    assert result.exit_code == 0
    assert result.stderr == ""
    committed = (ROOT / "completions" / FILES[shell]).read_text(encoding="utf-8")
    assert result.stdout == committed, "completions/ is stale: run .venv/bin/python tools/regen.py"
    assert "_HERMES_TASK_COMPLETE" in committed
    assert "hermes-task" in committed


def test_completion_refuses_other_shells() -> None:
    result = CliRunner().invoke(app, ["completion", "powershell"], env={"NO_COLOR": "1", "COLUMNS": "100"})
    assert result.exit_code == 2
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert lines[0].startswith("error: invalid usage: ")
    assert lines[1] == "Usage: hermes-task completion [OPTIONS] {shell}"
    assert lines[2] == "hint: try 'hermes-task completion -h' for help"
    assert "'powershell' is not one of 'bash', 'zsh', 'fish'." in result.stderr


def bash_complete(words: list[str], env: dict[str, str]) -> list[str]:
    script = ROOT / "completions" / FILES["bash"]
    words_literal = " ".join(f"'{w}'" for w in words)
    program = (
        f"source '{script}'; COMP_WORDS=({words_literal}); COMP_CWORD={len(words) - 1}; "
        '_hermes_task_completion hermes-task; printf "%s\\n" "${COMPREPLY[@]}"'
    )
    proc = subprocess.run(
        ["bash", "-c", program], capture_output=True, text=True, env=env, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    return [line for line in proc.stdout.splitlines() if line]


def test_the_console_script_is_installed() -> None:
    assert (BIN / "hermes-task").exists(), "the package must be installed (pip install -e .)"


def test_bash_completes_commands_options_choices_and_gateways(tmp_path: Path) -> None:
    env = env_with_config(tmp_path)
    assert bash_complete(["hermes-task", "s"], env) == ["show", "schema"]  # COMMAND_ORDER
    assert bash_complete(["hermes-task", "completion", ""], env) == ["bash", "zsh", "fish"]
    assert bash_complete(["hermes-task", "schema", "e"], env) == ["events", "error"]
    assert "--gateway" in bash_complete(["hermes-task", "show", "--g"], env)
    assert bash_complete(["hermes-task", "show", "--gateway", ""], env) == ["lab", "prod"]
    assert bash_complete(["hermes-task", "show", "--gateway", "p"], env) == ["prod"]


def test_gateway_completion_is_silent_without_a_usable_config(tmp_path: Path) -> None:
    assert bash_complete(["hermes-task", "show", "--gateway", ""], env_with_config(tmp_path, None)) == []
    broken = env_with_config(tmp_path, "this is [ not toml")
    assert bash_complete(["hermes-task", "show", "--gateway", ""], broken) == []


def protocol(shell: str, line: str, env: dict[str, str], **extra: str) -> str:
    proc = subprocess.run(
        [str(BIN / "hermes-task")],
        capture_output=True,
        text=True,
        env={**env, "_HERMES_TASK_COMPLETE": f"complete_{shell}", "_TYPER_COMPLETE_ARGS": line, **extra},
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    return proc.stdout


def test_zsh_protocol_completes_gateways(tmp_path: Path) -> None:
    out = protocol("zsh", "hermes-task show --gateway ", env_with_config(tmp_path))
    assert out == '_arguments \'*: :(("lab"\n"prod"))\'\n'


def test_fish_protocol_completes_gateways(tmp_path: Path) -> None:
    env = env_with_config(tmp_path)
    out = protocol("fish", "hermes-task show --gateway p", env, _TYPER_COMPLETE_FISH_ACTION="get-args")
    assert out == "prod\n"


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed (apt-get install fish)")
def test_fish_loads_the_committed_script(tmp_path: Path) -> None:
    script = ROOT / "completions" / FILES["fish"]
    proc = subprocess.run(
        ["fish", "--no-config", "-c", f"source '{script}'; complete -C 'hermes-task schema t'"],
        capture_output=True,
        text=True,
        env=env_with_config(tmp_path),
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["tasks", "transcript"]


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed (apt-get install zsh)")
def test_zsh_loads_the_committed_script(tmp_path: Path) -> None:
    script = ROOT / "completions" / FILES["zsh"]
    program = f"autoload -Uz compinit; compinit -u -D; source '{script}'; print -r -- $_comps[hermes-task]"
    proc = subprocess.run(
        ["zsh", "-f", "-c", program],
        capture_output=True,
        text=True,
        env={**env_with_config(tmp_path), "HOME": str(tmp_path)},
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "_hermes_task_completion\n"
