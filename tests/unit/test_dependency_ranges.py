"""`tools/lowest_constraints.py`: the constraints `tools/dependency_venv.sh lowest` installs,
every direct dependency pinned to the lower bound `pyproject.toml` allows."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.support.regen import TOOLS, load_tool

lowest = load_tool("lowest_constraints")
ROOT = TOOLS.parent


def project() -> dict[str, object]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]  # type: ignore[no-any-return]


def test_every_direct_dependency_of_the_project_is_pinned_to_its_floor() -> None:
    proc = subprocess.run(
        [sys.executable, str(TOOLS / "lowest_constraints.py")], capture_output=True, text=True, check=True
    )
    assert proc.stderr == ""
    pinned = dict(line.split("==", 1) for line in proc.stdout.splitlines())
    spec = project()
    runtime = spec["dependencies"]
    groups = spec["optional-dependencies"]
    assert isinstance(groups, dict)
    test = [r for group in groups.values() for r in group]  # test tools, the benchmarks' pydantic
    assert isinstance(runtime, list)
    assert set(pinned) == {lowest.floor(r)[0] for r in [*runtime, *test]}
    assert {"typer", "httpx", "rich", "msgspec", "pytest", "hypothesis"} <= set(pinned)
    for requirement in [*runtime, *test]:
        name, low, _marker = lowest.floor(requirement)
        assert f">={low}" in requirement.replace(" ", "")
        assert pinned[name] == low


@pytest.mark.parametrize(
    ("requirement", "expected"),
    [
        ("typer>=0.27,<0.29", ("typer", "0.27", "")),
        ("httpx >= 0.27, <1", ("httpx", "0.27", "")),
        (
            'uvicorn[standard]>=0.30; python_version < "3.12"',
            ("uvicorn", "0.30", '; python_version < "3.12"'),
        ),
        ("rich", ("rich", None, "")),
        ("rich<14", ("rich", None, "")),
        ("rich>13", ("rich", None, "")),
        ("rich==13.8", ("rich", None, "")),
    ],
)
def test_the_floor_is_the_one_greater_or_equal_bound(
    requirement: str, expected: tuple[str, str | None, str]
) -> None:
    assert lowest.floor(requirement) == expected


def test_a_dependency_without_a_floor_is_refused_by_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text(
        '[project]\nname = "x"\ndependencies = ["a>=1", "b<2"]\n'
        '[project.optional-dependencies]\ntest = ["c>=3; sys_platform == \'linux\'", "d"]\n',
        encoding="utf-8",
    )
    assert lowest.main([str(path)]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == [
        "error: 'b<2' has no lower bound (>=): its range is untested",
        "error: 'd' has no lower bound (>=): its range is untested",
    ]
    path.write_text(
        '[project]\nname = "x"\ndependencies = ["a>=1"]\n'
        "[project.optional-dependencies]\ntest = [\"c>=3; sys_platform == 'linux'\"]\n",
        encoding="utf-8",
    )
    assert lowest.main([str(path)]) == 0
    assert capsys.readouterr().out == "a==1\nc==3 ; sys_platform == 'linux'\n"
