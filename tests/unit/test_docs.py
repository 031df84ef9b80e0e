"""Docs that stay true: the --help blocks and the exit-code, warning and status tables, wherever they
live (README.md or docs/*.md), are what the code says (regenerate with
`.venv/bin/python tools/regen.py`); the README's first screen names the two set-up commands and
links every reference page; the demo installs no test tool."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hermes_task.core.ui_strings import EXIT_MEANINGS
from hermes_task.failures import Code, ExitStatus, exit_status_for
from tests.support.regen import load_regen

regen = load_regen()

ROOT = Path(__file__).resolve().parents[2]


README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = {path.relative_to(ROOT).as_posix(): path.read_text(encoding="utf-8") for path in regen.doc_files()}
# Where each generated block lives: the reference moved to docs/ (issue 19).
HOME = {f"help:{name}": "docs/commands.md" for name in regen.REQUIRED_HELP}
HOME |= {"exit-codes": "docs/exit-codes.md", "warnings": "docs/identity.md", "statuses": "docs/commands.md"}
REQUIRED = list(HOME)
STALE = "the docs are stale: run .venv/bin/python tools/regen.py"
REFERENCE = [
    "docs/identity.md",
    "docs/json.md",
    "docs/exit-codes.md",
    "docs/backends.md",
    "docs/configuration.md",
]


@pytest.mark.parametrize("name", REQUIRED)
def test_the_docs_have_the_marker(name: str) -> None:
    assert name in regen.markers(DOCS[HOME[name]]), (
        f"{HOME[name]} lacks the block <!-- {name} --> ... <!-- /{name} -->; add both markers "
        "(on lines of their own) and run .venv/bin/python tools/regen.py"
    )


def section(name: str) -> str:
    text = DOCS[HOME[name]]
    match = re.search(rf"<!-- {re.escape(name)} -->\n(.*?)<!-- /{re.escape(name)} -->", text, re.S)
    assert match, f"{HOME[name]} lacks <!-- {name} --> ... <!-- /{name} -->"
    return match.group(1)


@pytest.mark.parametrize("name", [n for n in REQUIRED if n.startswith("help:")])
def test_help_block_is_current(name: str) -> None:
    assert section(name) == regen.block(name), STALE


@pytest.mark.parametrize("doc", list(DOCS))
def test_every_marked_block_is_current(doc: str) -> None:
    assert regen.render_readme(DOCS[doc]) == DOCS[doc], f"{doc}: {STALE}"


def test_a_stale_block_in_docs_is_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """regen --check looks in docs/ too: a stale table there fails it, and regen repairs it."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "README.md").write_text("# t\n", encoding="utf-8")
    page = tmp_path / "docs" / "exit-codes.md"
    page.write_text("<!-- exit-codes -->\nold\n<!-- /exit-codes -->\n", encoding="utf-8")
    monkeypatch.setattr(regen, "ROOT", tmp_path)
    monkeypatch.setattr(regen, "README", tmp_path / "README.md")
    monkeypatch.setattr(regen, "generated_files", dict)
    assert regen.main(["--check"]) == 1
    assert regen.main([]) == 0
    assert (
        page.read_text(encoding="utf-8")
        == f"<!-- exit-codes -->\n{regen.exit_codes_table()}<!-- /exit-codes -->\n"
    )
    assert regen.main(["--check"]) == 0


def test_the_first_screen_names_the_two_set_up_commands() -> None:
    """A newcomer sees what it is, the demo and the test command before scrolling; the test
    command is the one .ci/run calls."""
    first = "\n".join(README.splitlines()[:25])
    assert "bash tools/demo.sh" in first
    assert "bash tools/check.sh" in first
    assert "exec bash tools/check.sh" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_the_readme_is_short_and_links_every_reference_page() -> None:
    assert len(README.splitlines()) <= 320
    for page in REFERENCE:
        assert f"]({page})" in README, page
        assert (ROOT / page).exists(), page
    for target in re.findall(r"\]\((docs/[^)#]+)", README):
        assert (ROOT / target).exists(), target


def test_the_demo_installs_no_test_tool() -> None:
    """tools/demo.sh installs hermes-task without extras into its own venv; the test tools are
    installed by the test command (tools/bootstrap.sh, `.[test]`, into .venv)."""
    demo = (ROOT / "tools" / "demo.sh").read_text(encoding="utf-8")
    installs = [line for line in demo.splitlines() if re.search(r"pip\S* .*install", line)]
    assert installs, "tools/demo.sh has no pip install line"
    for line in installs:
        assert "[test]" not in line, line
        assert not re.search(r"\b(pytest|ruff|mypy|hypothesis)\b", line), line
    assert ".venv-demo" in demo
    assert not re.search(r"^[^#]*bootstrap\.sh", demo, re.M), "the demo must not run the test bootstrap"


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
