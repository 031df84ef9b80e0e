"""The architecture holds: typer only in `cli`, rich only in `cli` and `render`, httpx only
in the network modules, and the fast paths (`--help`, `--version`) import no heavy module."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

# A CLI run in a fresh interpreter, cut off from the machine: no config file, no colour, a
# fixed width, a token for a port where nothing listens.
PROBE_ENV = {
    "PATH": "/usr/bin:/bin",
    "COLUMNS": "100",
    "NO_COLOR": "1",
    "XDG_CONFIG_HOME": "/nonexistent",
    "HERMES_DASHBOARD_TOKEN": "dead-port-token",
}

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "hermes_task"

# A module may import only from its own layer or a lower one (the folder listing is the
# architecture, with no exception): failures.py < core/ < settings.py, dashboard/, store/ <
# reading/ < render/ < cli/. core/ holds the pure rules and every Struct the others read (the
# dashboard's wire format in core/wire.py); store/ is the local store's file side and its
# read-only SQLite (SQL that proposes ids, nothing that proves); reading/ proves them over HTTP
# (reading/hints.py: the store's proposals, proven).
RANK = {
    "failures": 1,
    "core": 2,
    "settings": 3,
    "dashboard": 3,
    "store": 3,
    "reading": 4,
    "render": 5,
    "cli": 6,
}
HTTPX_LAYERS = {"dashboard", "cli"}


def layer_of(module: str) -> str:
    """`core/sanitize.py` -> `core`; `settings.py` -> `settings`; `__main__.py` -> `cli`."""
    first = module.split("/")[0].removesuffix(".py")
    return "cli" if first in ("__main__", "__init__") else first


def imports_of(path: Path) -> tuple[set[str], set[str]]:
    """(third-party roots, own dotted modules) named by any import in the file, also inside
    functions and under TYPE_CHECKING."""
    roots: set[str] = set()
    own: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # `from pkg import submodule` depends on the submodule; `from mod import name` on mod
            names = [f"{node.module}.{alias.name}" for alias in node.names] + [node.module]
        else:
            continue
        for name in names:
            if name.startswith("hermes_task."):
                own.add(name)
            else:
                roots.add(name.split(".")[0])
    return roots, own


def imported_roots(path: Path) -> set[str]:
    return imports_of(path)[0]


MODULES = sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py"))
DOTTED = {
    "hermes_task." + m.removesuffix(".py").removesuffix("/__init__").replace("/", "."): m for m in MODULES
}


def own_imports(module: str) -> set[str]:
    """The package's own modules that *module* imports: `from pkg import submodule` names
    the submodule, `from mod import name` the module."""
    names = imports_of(PACKAGE / module)[1]
    found = {name for name in names if name in DOTTED}
    found -= {name.rsplit(".", 1)[0] for name in found}  # a package whose submodule is named
    return {DOTTED[name] for name in found} - {module}


def test_the_package_is_where_we_look() -> None:
    assert "cli/__init__.py" in MODULES
    assert "settings.py" in MODULES
    assert "render/terminal.py" in MODULES
    assert {layer_of(m) for m in MODULES} == set(RANK)


@pytest.mark.parametrize("module", MODULES)
def test_layers(module: str) -> None:
    roots = imported_roots(PACKAGE / module)
    layer = layer_of(module)
    if layer != "cli":
        assert "typer" not in roots, f"{module} imports typer: only hermes_task.cli may"
    if layer not in ("cli", "render"):
        assert "rich" not in roots, f"{module} imports rich: only cli/ and render/ may"
    if layer not in HTTPX_LAYERS:
        assert "httpx" not in roots, f"{module} imports httpx: only {sorted(HTTPX_LAYERS)} may"
    for target in own_imports(module):
        assert RANK[layer_of(target)] <= RANK[layer], f"{module} imports {target}, a higher layer"
        if layer in ("core", "reading"):
            assert layer_of(target) not in ("dashboard", "store"), (
                f"{module} imports {target}: use reading/api.py's protocol"
            )


def test_no_private_name_is_imported_across_modules() -> None:
    for module in MODULES:
        for node in ast.walk(ast.parse((PACKAGE / module).read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("hermes_task"):
                private = [a.name for a in node.names if a.name.startswith("_") and a.name != "__version__"]
                assert not private, f"{module} imports {private} from {node.module}"


def test_the_module_graph_has_no_cycle() -> None:
    """Every import counts, TYPE_CHECKING and function-level ones included: a cycle is a
    design smell even when Python tolerates it at run time."""
    graph = {module: own_imports(module) for module in MODULES}
    state: dict[str, int] = {}

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                cycle = [*path[path.index(target) :], target] if target in path else [module, target]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if target not in state:
                visit(target, [*path, target])
        state[module] = 2

    for module in MODULES:
        if module not in state:
            visit(module, [module])


def test_the_cycle_check_sees_a_cycle(tmp_path: Path) -> None:
    """The graph check itself works: a TYPE_CHECKING import back is found."""
    (tmp_path / "a.py").write_text("from hermes_task.core import b\n")
    (tmp_path / "b.py").write_text("if TYPE_CHECKING:\n    from hermes_task.core.a import x\n")
    assert {"hermes_task.core", "hermes_task.core.b"} <= imports_of(tmp_path / "a.py")[1]
    assert own_imports("cli/show.py") >= {"cli/options.py", "cli/session.py"}
    assert "cli/__init__.py" not in own_imports("cli/show.py")
    assert "hermes_task.core.a" in imports_of(tmp_path / "b.py")[1]


LAZY_REASON = re.compile(r"#\s*lazy:\s*\S")


def unexplained_lazy_imports(source: str) -> list[int]:
    """The lines of the imports inside a function (class bodies and TYPE_CHECKING blocks
    at module level are not) whose first line carries no `# lazy: <reason>`."""
    lines = source.splitlines()
    found: set[int] = set()
    for func in ast.walk(ast.parse(source)):
        if isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
            for node in ast.walk(func):
                if isinstance(node, ast.Import | ast.ImportFrom) and not LAZY_REASON.search(
                    lines[node.lineno - 1]
                ):
                    found.add(node.lineno)
    return sorted(found)


def test_function_level_imports_say_why() -> None:
    """An import belongs at the top of its module; one inside a function is for heavy,
    optional work only (rich's Markdown, sqlite3, the schema generator, a command's body
    kept off `--help`), and says so on its line: `# lazy: <reason>`."""
    unexplained = [
        f"{module}:{line}"
        for module in MODULES
        for line in unexplained_lazy_imports((PACKAGE / module).read_text(encoding="utf-8"))
    ]
    assert not unexplained, f"function-level imports without '# lazy: <reason>': {unexplained}"


def test_the_lazy_import_check_sees_an_unexplained_one() -> None:
    source = (
        "import os\n"
        "if TYPE_CHECKING:\n    import json\n"
        "def f():\n    import sqlite3  # lazy: only with a store\n"
        "    from rich import (\n        markdown,\n    )\n"
        "    def g():\n        import csv  # lazy:\n"
    )
    assert unexplained_lazy_imports(source) == [6, 10]


# Inside cli/, lowest first: a module imports only modules of its own rank or lower (function-
# level imports included): the options, the root app, the pager, the session (and shell); the
# commands, which may use one another's work (`older` reads as `show` does, `follow --parent`
# and `tui` run `recover --watch`'s loop), in that order.
CLI_RANK = {
    "cli/__init__.py": 5,  # `main` for old console scripts: the root app, imported when asked
    "cli/options.py": 0,
    "cli/pager.py": 0,
    "cli/session.py": 1,
    "cli/app.py": 2,
    "cli/show.py": 2,
    "cli/older.py": 3,
    "cli/recover.py": 2,
    "cli/follow.py": 3,
    "cli/tui.py": 4,
    "cli/search.py": 2,
    "cli/export.py": 3,
}
# What a command's module may import at module level: typer's side only (root `--help`
# imports every command's module); its work is imported when the command runs.
COMMAND_MODULES = [m for m in CLI_RANK if m not in ("cli/options.py", "cli/pager.py", "cli/session.py")]
SIGNATURE_SIDE = {"cli/options.py", "cli/__init__.py", "failures.py"}  # failures: stdlib only
SIGNATURE_SIDE |= {"core/ui_strings.py"}  # the vocabularies a signature offers as choices (`--status`)


def test_cli_has_at_most_twelve_modules() -> None:
    """One module per command (typer signature and body together), plus options, session,
    pager and the root app (issue 36)."""
    cli = sorted(m for m in MODULES if m.startswith("cli/"))
    assert cli == sorted(CLI_RANK)
    assert len(cli) <= 12


@pytest.mark.parametrize("module", sorted(CLI_RANK))
def test_the_cli_modules_import_downwards(module: str) -> None:
    for target in own_imports(module):
        if layer_of(target) == "cli":
            assert target in CLI_RANK, f"{module} imports {target}, a module the ranks do not know"
            assert CLI_RANK[target] <= CLI_RANK[module], f"{module} imports {target}, a higher rank"


def module_level_own_imports(module: str) -> set[str]:
    """`own_imports`, but only the imports run at module level (not those of a function, a
    class or a TYPE_CHECKING block: annotations only)."""
    tree = ast.parse((PACKAGE / module).read_text(encoding="utf-8"))
    top = ast.Module(
        body=[
            n
            for n in tree.body
            if not isinstance(n, ast.FunctionDef | ast.ClassDef)
            and not (isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING")
        ],
        type_ignores=[],
    )
    names: set[str] = set()
    for node in ast.walk(top):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("hermes_task"):
            names |= {f"{node.module}.{alias.name}" for alias in node.names} | {node.module}
    found = {name for name in names if name in DOTTED}
    found -= {name.rsplit(".", 1)[0] for name in found}
    return {DOTTED[name] for name in found} - {module}


@pytest.mark.parametrize("module", COMMAND_MODULES)
def test_a_command_module_holds_only_its_signature(module: str) -> None:
    assert module_level_own_imports(module) <= SIGNATURE_SIDE


def test_no_two_modules_share_a_name() -> None:
    """A module's name says what it holds, so no two layers have a module of the same name
    (a command's module in cli/ is named for the command; its loop in reading/ for the loop)."""
    by_name: dict[str, list[str]] = {}
    for module in MODULES:
        by_name.setdefault(module.rsplit("/", 1)[-1], []).append(module)
    shared = {name: where for name, where in by_name.items() if len(where) > 1 and name != "__init__.py"}
    assert not shared, f"rename these modules to say what each holds: {shared}"


def test_complexity_is_gated_by_ruff() -> None:
    """The gate that replaced the 300-line cap: ruff's C901 at the documented limit, which
    only goes down, and no function of the package over it."""
    lint = tomllib.loads((PACKAGE.parents[1] / "pyproject.toml").read_text())["tool"]["ruff"]["lint"]
    assert "C901" in lint["select"]
    assert lint["mccabe"]["max-complexity"] <= 10
    ruff = Path(sys.executable).parent / "ruff"
    result = subprocess.run(
        [str(ruff), "check", "--select", "C901", "--output-format", "concise", str(PACKAGE)],
        capture_output=True,
        text=True,
        check=False,
        cwd=PACKAGE.parents[1],
    )
    assert result.returncode == 0, result.stdout


PROBE = """
import sys
from hermes_task.cli.app import app
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


HEAVY_LAYERS = {"core", "dashboard", "store", "reading", "settings", "render"}


def own_core(modules: set[str]) -> set[str]:
    """The package's modules below the CLI that a fast path must not load (package __init__s
    aside, and the vocabularies: `core/ui_strings.py` is strings and two enums, which `recover`'s
    `--status` offers as its choices)."""
    return {
        m
        for m in modules
        if (m.startswith("hermes_task.") and m.split(".")[1] in HEAVY_LAYERS and m.count(".") >= 2)
        or m == "hermes_task.settings"
    } - {"hermes_task.core.ui_strings"}


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
    "command", ["show", "follow", "older", "recover", "search", "config show", "schema", "completion"]
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
from tests.support.replay import BASE_URL, Replay

replay = Replay(sys.argv[2])
c1 = replay.manifest["c1"]
from hermes_task.cli.app import app
from hermes_task.cli.options import Environment

try:
    app(
        ["show", c1["root"], "--tip", c1["tip"], "--json", "--url", BASE_URL],
        prog_name="hermes-task",
        obj=Environment(transport=httpx.MockTransport(replay)),
    )
except SystemExit as exc:
    print(f"exit {exc.code}", file=sys.stderr)
print(" ".join(sorted(sys.modules)), file=sys.stderr)
"""


@pytest.mark.parametrize("backend", ["official", "iot"])
def test_show_json_imports_no_pydantic(backend: str) -> None:
    """The whole `show --json` path (proof, pages, projection, the document) against the
    captured exchanges: wire and output models are msgspec Structs, typer is pinned below
    0.29 (which built a pydantic adapter per option), so pydantic is never loaded."""
    from tests.support.replay import TOKEN

    proc = subprocess.run(
        [sys.executable, "-c", REPLAYED, str(PACKAGE.parents[1]), backend],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**PROBE_ENV, "HERMES_DASHBOARD_TOKEN": TOKEN},
    )
    lines = proc.stderr.splitlines()
    assert lines[0] == "exit 0", proc.stderr
    modules = set(lines[-1].split())
    assert '"kind": "transcript"' in proc.stdout
    assert {
        "hermes_task.core.wire",
        "hermes_task.core.documents",
        "hermes_task.reading.reader",
        "hermes_task.core.projection",
    } <= modules
    assert not {m for m in modules if m.split(".")[0] in ("pydantic", "pydantic_core")}


@pytest.mark.parametrize(
    ("command", "status"), [("show", 7), ("older", 7), ("recover", 7), ("follow --timeout 0.1", 7)]
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
        env=PROBE_ENV,
    )
    assert proc.returncode == status, proc.stderr[-2000:]
    assert '"network"' in proc.stdout
    imported = [
        line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if "import time:" in line
    ]
    assert "hermes_task.reading.reader" in imported
    assert not [name for name in imported if name.split(".")[0] in ("pydantic", "pydantic_core")]


def test_only_the_store_reader_knows_sqlite() -> None:
    """store/sqlite_reader.py is the one module that imports sqlite3 (issue 13)."""
    users = sorted(m for m in MODULES if "sqlite3" in imported_roots(PACKAGE / m))
    assert users == ["store/sqlite_reader.py"]


def test_the_repository_root_adds_no_package_the_agent_could_lose() -> None:
    """The seeding runs in the Hermes Agent's interpreter with the repository root on
    `PYTHONPATH`, and the agent has top-level packages of its own (`tools`, `utils`, `cli`,
    `plugins`, ...): a package at the root shadows one of the same name. `tools/__init__.py`
    once did, and the agent failed to import `tools.registry`."""
    root = PACKAGE.parents[1]
    packages = {path.parent.name for path in root.glob("*/__init__.py")}
    assert packages == {"tests", "bench"}


def test_hermes_task_cli_still_has_main_for_old_console_scripts() -> None:
    """Console scripts installed before `__main__:main` import `hermes_task.cli:main`."""
    import hermes_task.cli
    from hermes_task.cli import app as app_module

    assert hermes_task.cli.main is app_module.main
    with pytest.raises(AttributeError, match="no attribute 'app_'"):
        _ = hermes_task.cli.app_
