"""The console script answers `--help` from cli/help.txt (issue 18: `--help` ≤ 80 ms), which
tools/regen.py renders from the command tree: the committed file is current, and what the
script prints from it is what typer prints, byte for byte, at 80 columns or more."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_task.__main__ import HELP_FILE, cached_help, help_file_text
from tests.support.regen import load_regen

regen = load_regen()

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(sys.executable).parent / "hermes-task"
TYPER = "import sys; from hermes_task.cli.app import app; app(sys.argv[1:], prog_name='hermes-task')"
PROBE = (
    "import sys\nfrom hermes_task.__main__ import main\nsys.argv = ['hermes-task', *sys.argv[1:]]\n"
    "try:\n    main()\nfinally:\n    print(' '.join(sorted(sys.modules)), file=sys.stderr)\n"
)


def _env(columns: str) -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "COLUMNS": columns, "NO_COLOR": "1", "HOME": os.environ.get("HOME", "/")}


def test_the_committed_help_file_is_current() -> None:
    texts = regen.all_help_texts()
    assert {"hermes-task", "hermes-task show", "hermes-task config show"} <= set(texts)
    assert Path(HELP_FILE).read_text(encoding="utf-8") == help_file_text(texts), (
        "src/hermes_task/cli/help.txt is stale: run .venv/bin/python tools/regen.py"
    )


def test_the_file_format_round_trips(tmp_path: Path) -> None:
    texts = {"hermes-task": "Usage: a\n\n  b\n", "hermes-task x y": "@@ 3 not a header\n"}
    file = tmp_path / "help.txt"
    file.write_text(help_file_text(texts), encoding="utf-8")
    assert {path: cached_help(path, str(file)) for path in texts} == texts
    assert cached_help("hermes-task z", str(file)) is None
    assert cached_help("hermes-task", str(tmp_path / "missing.txt")) is None


@pytest.mark.parametrize("args", [["--help"], ["-h"], ["show", "--help"], ["config", "show", "-h"]])
def test_the_script_prints_typers_help_without_typer(args: list[str]) -> None:
    typer_text = subprocess.run(
        [sys.executable, "-c", TYPER, *args], capture_output=True, text=True, env=_env("100"), check=True
    ).stdout
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *args], capture_output=True, text=True, env=_env("100"), check=True
    )
    assert proc.stdout == typer_text
    assert not {"typer", "hermes_task.cli", "rich"} & set(proc.stderr.split())


def test_narrow_terminals_and_unknown_paths_go_to_typer() -> None:
    narrow = subprocess.run(
        [sys.executable, "-c", PROBE, "--help"], capture_output=True, text=True, env=_env("60"), check=True
    )
    assert "typer" in narrow.stderr.split()
    assert (
        narrow.stdout
        == subprocess.run(
            [sys.executable, "-c", TYPER, "--help"],
            capture_output=True,
            text=True,
            env=_env("60"),
            check=True,
        ).stdout
    )
    unknown = subprocess.run(
        [sys.executable, "-c", PROBE, "nosuch", "--help"], capture_output=True, text=True, env=_env("100")
    )
    assert unknown.returncode == 2
    assert "No such command 'nosuch'" in unknown.stderr


@pytest.mark.skipif(not SCRIPT.exists(), reason="no console script next to the interpreter")
def test_the_console_script_uses_the_file() -> None:
    proc = subprocess.run(
        [str(SCRIPT), "--help"], capture_output=True, text=True, env=_env("100"), check=True
    )
    assert proc.stdout == cached_help("hermes-task")
