"""The lowest allowed version of every direct dependency, as a pip constraints file.

    python tools/lowest_constraints.py > constraints.txt
    pip install -c constraints.txt -e ".[test]"

Reads `pyproject.toml`: the `[project]` dependencies and every optional-dependency group. Each
must have a lower bound (`>=X`), which the file pins exactly (`name==X`); pip then resolves the
transitive dependencies to the newest they allow, as uv's `--resolution lowest-direct` does.
`tools/dependency_venv.sh lowest` builds `.venv-lowest` with it, and `tools/check.sh` runs the
unit tests there, so a range in `pyproject.toml` is a range the tests have passed at its floor.
A direct dependency without a lower bound is refused (exit 1, named): its range would be one
nothing tests.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path
from typing import Any

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"
# name, optional [extras], the specifiers up to an environment marker (PEP 508, the forms
# pyproject.toml uses: no URLs)
REQUIREMENT = re.compile(
    r"^\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(?:\[[^\]]*\])?\s*([^;]*)(;.*)?$"
)
FLOOR = re.compile(r"^>=\s*([0-9][A-Za-z0-9.!+-]*)$")


def direct_requirements(project: dict[str, Any]) -> list[str]:
    """The `[project]` dependencies, then each optional group's, in file order."""
    found = list(project.get("dependencies", []))
    for group in project.get("optional-dependencies", {}).values():
        found += group
    return found


def floor(requirement: str) -> tuple[str, str | None, str]:
    """(name, the `>=` version or None, the environment marker with its `;`, or "")."""
    match = REQUIREMENT.match(requirement)
    if match is None:
        raise ValueError(f"not a requirement this tool reads: {requirement!r}")
    name, specifiers, marker = match.group(1), match.group(2), match.group(3) or ""
    lows = [m.group(1) for spec in specifiers.split(",") if (m := FLOOR.match(spec.strip()))]
    return name, (lows[0] if len(lows) == 1 else None), marker.strip()


def constraints(project: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(one `name==floor` line per direct dependency, the requirements that have no single
    `>=` floor)."""
    lines: list[str] = []
    missing: list[str] = []
    for requirement in direct_requirements(project):
        name, low, marker = floor(requirement)
        if low is None:
            missing.append(requirement)
        else:
            lines.append(f"{name}=={low}{' ' + marker if marker else ''}")
    return lines, missing


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv else PYPROJECT
    project = tomllib.loads(path.read_text(encoding="utf-8"))["project"]
    lines, missing = constraints(project)
    for requirement in missing:
        print(f"error: {requirement!r} has no lower bound (>=): its range is untested", file=sys.stderr)
    if missing:
        return 1
    sys.stdout.write("".join(f"{line}\n" for line in lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
