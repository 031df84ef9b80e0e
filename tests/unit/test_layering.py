"""The architecture holds: typer only in `cli`, rich only in `cli` and `render`, httpx only
in the network modules, and the fast paths (`--help`, `--version`) import no heavy module."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "hermes_task"
HTTPX_USERS = {"client.py", "auth.py", "cli/__init__.py"}


def imported_roots(path: Path) -> set[str]:
    """Every module named by an import anywhere in the file (also inside functions)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return {name.split(".")[0] for name in names}


MODULES = sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py"))


def test_the_package_is_where_we_look() -> None:
    assert "cli/__init__.py" in MODULES
    assert "settings.py" in MODULES
    assert "render/terminal.py" in MODULES


@pytest.mark.parametrize("module", MODULES)
def test_layers(module: str) -> None:
    roots = imported_roots(PACKAGE / module)
    layer = module.split("/")[0]
    if layer != "cli":
        assert "typer" not in roots, f"{module} imports typer: only hermes_task.cli may"
    if layer not in ("cli", "render"):
        assert "rich" not in roots, f"{module} imports rich: the core may not"
    if module not in HTTPX_USERS:
        assert "httpx" not in roots, f"{module} imports httpx: only {sorted(HTTPX_USERS)} may"


PROBE = """
import sys
from hermes_task.cli import app
try:
    app(sys.argv[1:], prog_name="hermes-task")
except SystemExit:
    pass
print(" ".join(sorted(sys.modules)), file=sys.stderr)
"""


def loaded(*args: str) -> set[str]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={"PATH": "/usr/bin:/bin", "COLUMNS": "100", "NO_COLOR": "1"},
    )
    assert proc.stdout, proc.stderr
    return set(proc.stderr.split())


CORE = {"client", "auth", "settings", "snapshot", "window", "lineage", "project", "model", "wire", "schemas"}


def own_core(modules: set[str]) -> set[str]:
    return {m for m in modules if m.startswith("hermes_task.") and m.split(".")[1] in CORE}


def test_version_imports_neither_rich_nor_httpx_nor_pydantic() -> None:
    modules = loaded("--version")
    assert "hermes_task.cli" in modules
    assert not {"rich", "httpx", "pydantic", "rich.markdown"} & modules
    assert own_core(modules) == set()


def test_help_imports_neither_rich_nor_httpx_nor_pydantic_nor_the_core() -> None:
    modules = loaded("--help")
    # help is plain click text (rich_markup_mode=None): no rich at all
    assert not {"rich", "httpx", "pydantic"} & modules
    assert own_core(modules) == set()


@pytest.mark.parametrize(
    "command", ["show", "follow", "older", "recover", "config show", "schema", "completion"]
)
def test_command_help_imports_neither_httpx_nor_the_core(command: str) -> None:
    modules = loaded(*command.split(), "--help")
    assert "httpx" not in modules
    assert own_core(modules) == set()
