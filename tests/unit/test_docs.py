"""Docs that stay true: the README's --help blocks and its exit-code and warning tables are
what the code says (regenerate with `.venv/bin/python tools/regen.py`)."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import get_args, get_type_hints

import pytest

from hermes_task.core.documents import WarningItem
from hermes_task.core.messages import EXIT_MEANINGS, WARNING_WHEN, WARNINGS
from hermes_task.failures import Code, ExitStatus, exit_status_for

ROOT = Path(__file__).resolve().parents[2]


def load_regen() -> ModuleType:
    spec = importlib.util.spec_from_file_location("regen", ROOT / "tools" / "regen.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["regen"] = module
    spec.loader.exec_module(module)
    return module


regen = load_regen()
README = (ROOT / "README.md").read_text(encoding="utf-8")
REQUIRED = [f"help:{name}" for name in regen.REQUIRED_HELP] + ["exit-codes", "warnings"]
STALE = "README.md is stale: run .venv/bin/python tools/regen.py"


@pytest.mark.parametrize("name", REQUIRED)
def test_readme_has_the_marker(name: str) -> None:
    assert name in regen.markers(README), (
        f"README.md lacks the block <!-- {name} --> ... <!-- /{name} -->; add both markers "
        "(on lines of their own) and run .venv/bin/python tools/regen.py"
    )


def section(name: str) -> str:
    match = re.search(rf"<!-- {re.escape(name)} -->\n(.*?)<!-- /{re.escape(name)} -->", README, re.S)
    assert match, f"README.md lacks <!-- {name} --> ... <!-- /{name} -->"
    return match.group(1)


@pytest.mark.parametrize("name", [n for n in REQUIRED if n.startswith("help:")])
def test_help_block_is_current(name: str) -> None:
    assert section(name) == regen.block(name), STALE


def test_every_marked_block_is_current() -> None:
    assert regen.render_readme(README) == README, STALE


def table_rows(text: str) -> list[list[str]]:
    rows = [
        [cell.strip() for cell in line.strip().strip("|").split("|")]
        for line in text.splitlines()
        if line.startswith("|")
    ]
    return [row for row in rows[2:]]  # past the header and the |---| line


def test_exit_code_table_matches_the_code() -> None:
    rows = table_rows(section("exit-codes"))
    assert all(len(row) == 3 for row in rows), f"the table needs its JSON `error.code` column: {STALE}"
    table = {int(row[0]): set(re.findall(r"`([a-z_]+)`", row[2])) for row in rows}
    assert set(table) == {int(status) for status in ExitStatus}
    for status in ExitStatus:
        assert table[int(status)] == {c.value for c in Code if exit_status_for(c) is status}, status
    assert {int(row[0]): row[1] for row in rows} == {int(s): text for s, text in EXIT_MEANINGS.items()}


def test_warning_table_matches_the_catalogue() -> None:
    rows = table_rows(section("warnings"))
    codes = [row[0].strip("`") for row in rows]
    assert codes == list(WARNINGS)
    assert set(codes) == set(get_args(get_type_hints(WarningItem)["code"]))
    assert [row[1] for row in rows] == list(WARNING_WHEN.values())


def test_regen_replaces_only_between_markers() -> None:
    text = "# Title\n<!-- warnings -->\nold table\n<!-- /warnings -->\nkept <!-- not a marker -->\n"
    assert regen.render_readme(text) == (
        f"# Title\n<!-- warnings -->\n{regen.warnings_table()}<!-- /warnings -->\nkept <!-- not a marker -->\n"
    )
    assert regen.render_readme("no markers at all\n") == "no markers at all\n"


def test_help_is_rendered_for_a_fixed_terminal() -> None:
    text = regen.help_text("show")
    assert text.splitlines()[0].strip().startswith("Usage: hermes-task show [OPTIONS]")
    assert "\x1b" not in text
    assert max(len(line) for line in text.splitlines()) <= 100
    assert all(line == line.rstrip() for line in text.splitlines())
