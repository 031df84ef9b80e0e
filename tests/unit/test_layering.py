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
def test_command_help_imports_neither_httpx_nor_pydantic_nor_the_core(command: str) -> None:
    modules = loaded(*command.split(), "--help")
    assert "httpx" not in modules
    assert "pydantic" not in modules
    assert own_core(modules) == set()


REPLAYED = """
import sys

import httpx

sys.path.insert(0, sys.argv[1])
from tests.replay import BASE_URL, Replay

replay = Replay(sys.argv[2])
original = httpx.Client.__init__


def replayed(self, *args, **kwargs):
    original(self, *args, **{**kwargs, "transport": httpx.MockTransport(replay)})


httpx.Client.__init__ = replayed
c1 = replay.manifest["c1"]
from hermes_task.cli import app

try:
    app(["show", c1["root"], "--tip", c1["tip"], "--json", "--url", BASE_URL], prog_name="hermes-task")
except SystemExit as exc:
    print(f"exit {exc.code}", file=sys.stderr)
print(" ".join(sorted(sys.modules)), file=sys.stderr)
"""


@pytest.mark.parametrize("backend", ["official", "iot"])
def test_show_json_imports_no_pydantic(backend: str) -> None:
    """The whole `show --json` path (proof, pages, projection, the document) against the
    captured exchanges: wire and output models are plain dataclasses, typer is pinned below
    0.29 (which built a pydantic adapter per option), so pydantic is never loaded."""
    from tests.replay import TOKEN

    proc = subprocess.run(
        [sys.executable, "-c", REPLAYED, str(PACKAGE.parents[1]), backend],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={
            "PATH": "/usr/bin:/bin",
            "COLUMNS": "100",
            "NO_COLOR": "1",
            "XDG_CONFIG_HOME": "/nonexistent",
            "HERMES_DASHBOARD_TOKEN": TOKEN,
        },
    )
    lines = proc.stderr.splitlines()
    assert lines[0] == "exit 0", proc.stderr
    modules = set(lines[-1].split())
    assert '"kind": "transcript"' in proc.stdout
    assert {"hermes_task.wire", "hermes_task.model", "hermes_task.snapshot", "hermes_task.project"} <= modules
    assert not {m for m in modules if m.split(".")[0] in ("pydantic", "pydantic_core")}


@pytest.mark.parametrize(
    ("command", "status"), [("show", 7), ("older", 7), ("recover", 7), ("follow --timeout 0.1", 9)]
)
def test_reading_commands_import_no_pydantic(command: str, status: int) -> None:
    """`python -X importtime -m hermes_task COMMAND ID --json` against a dead loopback port:
    the command path up to its first request and the error document load no pydantic."""
    proc = subprocess.run(
        [
            sys.executable,
            *("-X", "importtime", "-m", "hermes_task", *command.split(), "20260101_000000_abcdef"),
            *("--json", "--url", "http://127.0.0.1:9"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={
            "PATH": "/usr/bin:/bin",
            "COLUMNS": "100",
            "NO_COLOR": "1",
            "XDG_CONFIG_HOME": "/nonexistent",
            "HERMES_DASHBOARD_TOKEN": "dead-port-token",
        },
    )
    assert proc.returncode == status, proc.stderr[-2000:]
    assert '"network"' in proc.stdout
    imported = [
        line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if "import time:" in line
    ]
    assert "hermes_task.snapshot" in imported
    assert not [name for name in imported if name.split(".")[0] in ("pydantic", "pydantic_core")]
