"""A small mutation test of the safety modules: does a test fail when a safeguard breaks?

    .venv/bin/python tools/mutate.py                  # every target (a few minutes)
    .venv/bin/python tools/mutate.py core/sanitize.py      # one module
    .venv/bin/python tools/mutate.py --list           # the mutants, without running tests
    .venv/bin/python tools/mutate.py --write          # all, and update docs/reliability.md
    .venv/bin/python tools/mutate.py --max 40 dashboard/auth.py   # a partial run
    .venv/bin/python tools/mutate.py dashboard/auth.py --match _read_secret   # some mutants only

Stdlib only. Each mutant changes ONE node of a copy of `src/` (in a temporary directory,
put first on PYTHONPATH, so the working tree is never touched): a comparison flipped
(`==`/`!=`, `<`/`>=`, `in`/`not in`, `is`/`is not`), `and`/`or` swapped, a boolean
constant negated, an `if`/`elif` test replaced by `True` or by `False`, a `raise` dropped
(`pass`), a `return` of a condition negated. Only the functions listed in TARGETS are
mutated (the checks, not logging or formatting). For each mutant the unit tests named for
its module run with `-x`; a failing run kills the mutant, a passing one lets it survive.
The report lists every survivor with its line, so each can be killed by a test or
explained (docs/reliability.md, "Mutation testing"). Not part of the CI run: it takes
minutes, not seconds.
"""

from __future__ import annotations

import ast
import copy
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "hermes_task"

# module (relative to the package) -> (functions to mutate, or None for all; test files)
TARGETS: dict[str, tuple[frozenset[str] | None, tuple[str, ...]]] = {
    "core/sanitize.py": (
        None,
        ("tests/unit/test_mutants.py", "tests/unit/test_sanitize_ids.py", "tests/unit/test_statuses.py"),
    ),
    "dashboard/auth.py": (
        frozenset({"_read_secret", "_host_record_token", "_loopback", "_page_token", "apply_credentials"}),
        ("tests/unit/test_mutants.py",),
    ),
    "dashboard/client.py": (
        frozenset(
            {
                "_segment",
                "_check_profile",
                "detail",
                "messages",
                "around",
                "latest_descendant",
                "failure_for",
                "_login_failure",
                "not_found",
            }
        ),
        ("tests/unit/test_mutants.py", "tests/unit/test_statuses.py"),
    ),
    "core/lineage.py": (None, ("tests/unit/test_lineage.py", "tests/unit/test_mutants.py")),
}

_FLIP: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Lt: ast.GtE,
    ast.GtE: ast.Lt,
    ast.Gt: ast.LtE,
    ast.LtE: ast.Gt,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}


# Survivors that are equivalent or out of the safeguard's reach, each with its reason:
# (module, function, mutation) -> why no test can or should kill it.
EXPLAINED: dict[tuple[str, str, str], str] = {
    ("core/lineage.py", "parse_model_config", "raise->pass"): (
        "equivalent for the undecodable string: it stays a string, and the next check "
        "(`not isinstance(raw, dict)`) rejects it with the same reason, `bad_model_config`"
    ),
    ("core/sanitize.py", "clean", "if:False"): (
        "equivalent: the test is a fast path only; without it `_UNSAFE.sub` runs on text with "
        "no match and returns the same string"
    ),
}


@dataclass(frozen=True)
class Mutant:
    module: str
    index: int
    line: int
    function: str
    what: str


def _functions(tree: ast.AST) -> Iterator[ast.FunctionDef]:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            yield node


def _points(func: ast.FunctionDef) -> Iterator[tuple[ast.AST, str]]:
    """(node, description) of every mutation point inside `func`'s body (nested functions
    are visited as part of it; docstrings are skipped)."""
    for node in ast.walk(func):
        if isinstance(node, ast.Compare):
            for i, op in enumerate(node.ops):
                if type(op) in _FLIP:
                    yield node, f"compare:{i}:{type(op).__name__}->{_FLIP[type(op)].__name__}"
        elif isinstance(node, ast.BoolOp):
            yield node, f"boolop:{type(node.op).__name__}->{'Or' if isinstance(node.op, ast.And) else 'And'}"
        elif isinstance(node, ast.Constant) and isinstance(node.value, bool):
            yield node, f"const:{node.value}->{not node.value}"
        elif isinstance(node, ast.If):
            yield node, "if:True"
            yield node, "if:False"
        elif isinstance(node, ast.Raise):
            yield node, "raise->pass"
        elif isinstance(node, ast.Return) and isinstance(node.value, ast.Compare | ast.BoolOp | ast.UnaryOp):
            yield node, "return:not"


class _Apply(ast.NodeTransformer):
    def __init__(self, target: ast.AST, what: str) -> None:
        self.target = target
        self.what = what

    def visit(self, node: ast.AST) -> ast.AST | None:
        if node is not self.target:
            visited: ast.AST | None = super().visit(node)
            return visited
        kind = self.what.split(":")[0].split("-")[0]
        if kind == "compare":
            assert isinstance(node, ast.Compare)
            i = int(self.what.split(":")[1])
            node.ops[i] = _FLIP[type(node.ops[i])]()
        elif kind == "boolop":
            assert isinstance(node, ast.BoolOp)
            node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        elif kind == "const":
            assert isinstance(node, ast.Constant)
            node.value = not node.value
        elif kind == "if":
            assert isinstance(node, ast.If)
            node.test = ast.Constant(self.what == "if:True")
        elif kind == "raise":
            return ast.copy_location(ast.Pass(), node)
        elif kind == "return":
            assert isinstance(node, ast.Return)
            assert node.value is not None
            node.value = ast.UnaryOp(ast.Not(), node.value)
        return node


def mutants(module: str) -> list[tuple[Mutant, str]]:
    """Every (mutant, mutated source) of `module`."""
    wanted, _tests = TARGETS[module]
    source = (PACKAGE / module).read_text(encoding="utf-8")
    tree = ast.parse(source)
    out: list[tuple[Mutant, str]] = []
    index = 0
    for func in _functions(tree):
        if wanted is not None and func.name not in wanted:
            continue
        body = func.body[1:] if func.body and _is_docstring(func.body[0]) else func.body
        shell = ast.Module(body=body, type_ignores=[])
        for node, what in _points(shell):  # type: ignore[arg-type]
            index += 1
            mutated_tree = copy.deepcopy(tree)
            target = _same_node(tree, mutated_tree, node)
            _Apply(target, what).visit(mutated_tree)
            ast.fix_missing_locations(mutated_tree)
            line = getattr(node, "lineno", 0)
            out.append((Mutant(module, index, line, func.name, what), ast.unparse(mutated_tree)))
    return out


def _is_docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def _same_node(original: ast.AST, clone: ast.AST, node: ast.AST) -> ast.AST:
    """The node of `clone` at the position `node` has in `original` (walk order is stable)."""
    for a, b in zip(ast.walk(original), ast.walk(clone), strict=True):
        if a is node:
            return b
    raise LookupError("node not found")


def run_tests(src: Path, tests: tuple[str, ...]) -> bool:
    """True when the tests pass (the mutant survived). They run from the copy next to `src`
    (tests/, tools/, fixtures/, pyproject.toml), so editing the working tree meanwhile
    changes nothing."""
    env = {**os.environ, "PYTHONPATH": str(src), "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "--no-header", *tests],
        cwd=src.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    return proc.returncode == 0


def report(killed: list[Mutant], survived: list[Mutant], seconds: float, planned: int) -> list[str]:
    """The "Mutation testing" section of docs/reliability.md."""
    total = len(killed) + len(survived)
    partial = (
        f" This was a partial run: {total} of the {planned} mutants of the modules run (`--max`)."
        if total < planned
        else ""
    )
    score = 100.0 * len(killed) / total if total else 100.0
    out = [
        "<!-- mutation -->",
        "## Mutation testing",
        "",
        "Written by `.venv/bin/python tools/mutate.py --write` (stdlib only; not part of the CI "
        f"run: this run took {seconds / 60:.0f} min). One mutant at a time in the safety modules' "
        "checks: a comparison flipped, `and`/`or` swapped, a boolean negated, an `if`/`elif` test "
        "made `True` or `False`, a `raise` dropped, a returned condition negated; each mutant "
        "runs its module's unit tests with `-x`.",
        "",
        f"Score: **{len(killed)}/{total} killed ({score:.1f}%)**.{partial}",
        "",
        "| module | mutants | killed | survived |",
        "|---|---|---|---|",
    ]
    for module in dict.fromkeys(m.module for m in killed + survived):
        k = sum(m.module == module for m in killed)
        s = sum(m.module == module for m in survived)
        out.append(f"| `{module}` | {k + s} | {k} | {s} |")
    out += ["", "Survivors, each explained:" if survived else "No mutant survived.", ""]
    for m in survived:
        why = EXPLAINED.get((m.module, m.function, m.what), "**not explained yet**")
        out.append(f"- `{m.module}` `{m.function}` line {m.line}, `{m.what}`: {why}")
    return [*out, "<!-- /mutation -->"]


def write_report(lines: list[str]) -> None:
    path = ROOT / "docs" / "reliability.md"
    text = path.read_text(encoding="utf-8") if path.exists() else "# Reliability\n"
    block = "\n".join(lines) + "\n"
    pattern = re.compile(r"<!-- mutation -->\n.*?<!-- /mutation -->\n?", re.S)
    text = pattern.sub(lambda _m: block, text) if pattern.search(text) else text.rstrip("\n") + "\n\n" + block
    path.write_text(text, encoding="utf-8")


def main(argv: list[str]) -> int:
    only = [a for a in argv if not a.startswith("--")]
    modules = only or list(TARGETS)
    listing = "--list" in argv
    # --max N: stop after N mutants (a partial run, reported as such)
    budget = int(argv[argv.index("--max") + 1]) if "--max" in argv else 10**9
    # --match TEXT (repeatable): only the mutants whose label ("module:line function what") holds TEXT
    matches = [argv[i + 1] for i, a in enumerate(argv) if a == "--match"]
    only = [a for a in only if a != str(budget) and a not in matches]
    modules = only or list(TARGETS)
    killed: list[Mutant] = []
    survived: list[Mutant] = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="hermes-task-mutants-") as tmp:
        src = Path(tmp) / "src"
        skip = shutil.ignore_patterns("__pycache__", ".hypothesis")
        shutil.copytree(PACKAGE, src / "hermes_task", ignore=skip)
        for name in ("tests", "tools", "fixtures"):
            if (ROOT / name).is_dir():
                shutil.copytree(ROOT / name, Path(tmp) / name, ignore=skip)
        shutil.copy(ROOT / "pyproject.toml", Path(tmp) / "pyproject.toml")
        for module in modules:
            _wanted, tests = TARGETS[module]
            path = src / "hermes_task" / module
            pristine = path.read_text(encoding="utf-8")
            # The null mutant: the module as ast.unparse writes it, unmutated. Its tests must
            # pass, or every "kill" below could be the rewrite's, not the mutation's.
            path.write_text(ast.unparse(ast.parse(pristine)), encoding="utf-8")
            if not listing and not run_tests(src, tests):
                path.write_text(pristine, encoding="utf-8")
                print(f"{module}: the tests fail without any mutant; fix them first", file=sys.stderr)
                return 2
            try:
                chosen = [
                    (m, t)
                    for m, t in mutants(module)
                    if not matches or any(x in f"{module}:{m.line} {m.function} {m.what}" for x in matches)
                ]
                for mutant, text in chosen[: max(0, budget - len(killed) - len(survived))]:
                    label = f"{module}:{mutant.line} {mutant.function} {mutant.what}"
                    if listing:
                        print(label)
                        continue
                    path.write_text(text, encoding="utf-8")
                    alive = run_tests(src, tests)
                    (survived if alive else killed).append(mutant)
                    print(f"{'SURVIVED' if alive else 'killed  '} {label}", flush=True)
            finally:
                path.write_text(pristine, encoding="utf-8")
    if listing:
        return 0
    planned = sum(len(mutants(m)) for m in modules)
    if "--write" in argv:
        write_report(report(killed, survived, time.monotonic() - started, planned))
    total = len(killed) + len(survived)
    score = 100.0 * len(killed) / total if total else 100.0
    print(f"\n{len(killed)}/{total} mutants killed ({score:.1f}%) in {time.monotonic() - started:.0f}s")
    unexplained = [m for m in survived if (m.module, m.function, m.what) not in EXPLAINED]
    for mutant in survived:
        why = EXPLAINED.get((mutant.module, mutant.function, mutant.what), "NOT EXPLAINED")
        print(f"  survived: {mutant.module}:{mutant.line} {mutant.function} {mutant.what}: {why}")
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
