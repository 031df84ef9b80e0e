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

from hermes_task.cli.app import app

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
    assert bash_complete(["hermes-task", "s"], env) == ["show", "search", "schema"]  # COMMAND_ORDER
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


def task_store(tmp_path: Path) -> Path:
    """A store with delegated task roots (newest first: R3, R2, R1), a continuation, a plain
    chat, a root of another profile and one whose marker names someone else."""
    import json
    import sqlite3

    from tests.unit.conftest import SCHEMA

    path = tmp_path / "state.db"
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA)
    p = "20261201_090000_aaaaaa"

    def add(
        sid: str, parent: str | None, started: float, marker: str | None, profile: str | None = None
    ) -> None:
        config = json.dumps({"_delegate_from": marker}) if marker else None
        conn.execute(
            "INSERT INTO sessions (id, source, parent_session_id, model_config, started_at, profile_name)"
            " VALUES (?, 'subagent', ?, ?, ?, ?)",
            (sid, parent, config, started, profile),
        )

    add(p, None, 1.0, None)
    add("20261201_090001_000001", p, 2.0, p)
    add("20261201_090002_000002", p, 3.0, p, "default")
    add("20261201_090003_c00003", "20261201_090002_000002", 4.0, p)  # a continuation
    add("20261201_090004_000004", p, 5.0, p)
    add("20261201_090005_000005", p, 6.0, p, "work")  # another profile
    add("20261201_090006_000006", p, 7.0, "20261201_080000_ffffff")  # not its parent's delegation
    conn.commit()
    conn.close()
    return path


def test_task_ids_complete_from_the_store_newest_first(tmp_path: Path) -> None:
    env = {**env_with_config(tmp_path, None), "HERMES_TASK_STORE": str(task_store(tmp_path))}
    roots = ["20261201_090004_000004", "20261201_090002_000002", "20261201_090001_000001"]
    for command in ("show", "follow", "older"):
        assert bash_complete(["hermes-task", command, ""], env) == roots
    assert bash_complete(["hermes-task", "show", "20261201_090002"], env) == [roots[1]]
    # a row that records no profile belongs to the store's own; one of another profile never
    work = ["20261201_090005_000005", "20261201_090004_000004", "20261201_090001_000001"]
    assert bash_complete(["hermes-task", "show", "--profile", "work", ""], env) == work
    assert bash_complete(["hermes-task", "show", "--no-store", ""], env) == []
    out = protocol("zsh", "hermes-task follow ", env)
    assert out == "_arguments '*: :((" + "\n".join(f'"{r}"' for r in roots) + "))'\n"
    out = protocol("fish", "hermes-task older 20261201_0900", env, _TYPER_COMPLETE_FISH_ACTION="get-args")
    assert out == "".join(f"{r}\n" for r in roots)


def test_parent_ids_complete_from_the_store_as_parents_proposes_them(tmp_path: Path) -> None:
    """PARENT_ID (`recover`, `follow --parent`): the parents of the store's newest delegated
    children (issue 26), never a continuation's parent, a row that only names another parent,
    or a parent whose only children are another profile's."""
    env = {**env_with_config(tmp_path, None), "HERMES_TASK_STORE": str(task_store(tmp_path))}
    parent = "20261201_090000_aaaaaa"
    assert bash_complete(["hermes-task", "recover", ""], env) == [parent]
    assert bash_complete(["hermes-task", "recover", "20261201_0900"], env) == [parent]
    assert bash_complete(["hermes-task", "recover", "2027"], env) == []
    assert bash_complete(["hermes-task", "follow", "--parent", ""], env) == [parent]
    assert bash_complete(["hermes-task", "recover", "--no-store", ""], env) == []
    out = protocol("fish", "hermes-task recover ", env, _TYPER_COMPLETE_FISH_ACTION="get-args")
    assert out == f"{parent}\n"


def test_task_id_completion_is_silent_without_a_usable_store(tmp_path: Path) -> None:
    env = {**env_with_config(tmp_path, None), "HERMES_TASK_STORE": str(tmp_path / "missing.db")}
    assert bash_complete(["hermes-task", "show", ""], env) == []
    (tmp_path / "junk.db").write_bytes(b"junk" * 100)
    assert (
        bash_complete(["hermes-task", "show", ""], {**env, "HERMES_TASK_STORE": str(tmp_path / "junk.db")})
        == []
    )


def test_child_id_completion_offers_only_valid_ids_from_the_store(tmp_path: Path) -> None:
    """The store proposes ids; completion prints only those the id check accepts (issue 25):
    a row whose id carries a control sequence, surrounding whitespace or is `..` is dropped."""
    import json
    import sqlite3

    from tests.unit.conftest import SCHEMA

    parent, good = "20261201_090000_aaaaaa", "20261201_090001_bbbbbb"
    bad = ["20261201_090002_cc\x1b]0;pwned\x07", " 20261201_090003_dddddd", ".."]
    db = tmp_path / "state.db"
    conn = sqlite3.connect(db)
    conn.executescript(SCHEMA)
    config = json.dumps({"_delegate_from": parent})
    for i, sid in enumerate([good, *bad]):
        conn.execute(
            "INSERT INTO sessions (id, source, parent_session_id, model_config, started_at) VALUES (?,?,?,?,?)",
            (sid, "subagent", parent, config, 100.0 - i),
        )
    conn.commit()
    conn.close()
    env = env_with_config(tmp_path)
    out = protocol(
        "fish", "hermes-task show ", env, _TYPER_COMPLETE_FISH_ACTION="get-args", HERMES_TASK_STORE=str(db)
    )
    assert out == f"{good}\n"
