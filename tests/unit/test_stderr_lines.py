"""Warning, error and hint lines on a stderr without colour are written without rich, byte
for byte as rich prints them; anything rich would have to clean goes through rich."""

from __future__ import annotations

import io
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from hermes_task.cli import output, shell
from hermes_task.cli.common import ColorMode, Common
from hermes_task.cli.environment import Environment
from hermes_task.core.documents import WarningItem
from hermes_task.core.messages import WARNINGS
from hermes_task.failures import Code, HermesError


def common(width: int = 100) -> tuple[Common, io.StringIO]:
    err = io.StringIO()
    env = Environment(variables={"COLUMNS": str(width)}, stderr_stream=err, isatty=lambda _s: False)
    return Common(env=env), err


def printed(write: Any, line: str, width: int) -> str:
    com, err = common(width)
    write(com, line, "bold yellow")
    return err.getvalue()


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300), st.integers(min_value=20, max_value=200))
@example("x" * 250, 40)  # longer than the width: rich does not wrap stderr (soft wrap)
@example("日本語のテキスト " * 20, 30)
@example("tab\there", 100)
@example("bell\x07 and\rcarriage", 100)
@example("zero\u200bwidth and \u202ebidi", 100)
def test_a_line_on_stderr_is_what_rich_prints(message: str, width: int) -> None:
    line = f"warning: {message}"
    assert printed(shell.stderr_line, line, width) == printed(shell.rich_stderr_line, line, width)


@pytest.fixture
def through_rich(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    monkeypatch.setattr(shell, "rich_stderr_line", lambda _c, line, _s: seen.append(line))
    return seen


def test_only_what_rich_would_clean_goes_through_rich(through_rich: list[str]) -> None:
    com, err = common()
    unclean = ["tab\there", "bell\x07", "line\nbreak", "zero\u200bwidth", "\u202ebidi"]
    for line in [*unclean, "plain", "日本語"]:
        shell.stderr_line(com, line, "dim")
    assert through_rich == unclean
    assert err.getvalue() == "plain\n日本語\n"


def test_the_catalogue_warnings_are_written_plainly(through_rich: list[str]) -> None:
    com, err = common()
    items = [WarningItem(code="legacy_backend", message="legacy backend (hermes-agent 0.19.x): rows")]
    items += [WarningItem(code="gap", message=text) for text in WARNINGS.values()]
    output.emit_warnings(com, items)
    assert through_rich == []
    assert err.getvalue() == "".join(f"warning: {w.message}\n" for w in items)


def test_an_error_and_its_hint_are_written_plainly(through_rich: list[str]) -> None:
    com, err = common()
    error = HermesError(Code.NOT_FOUND, "session X", hint="check the id")
    shell.report_failure(com, error)
    assert through_rich == []
    assert err.getvalue() == f"error: {error.message}\nhint: check the id\n"


def test_colour_goes_through_rich(through_rich: list[str]) -> None:
    com, _err = common()
    output.emit_warnings(Common(env=com.env, color=ColorMode.always), [WarningItem(code="gap", message="p")])
    assert through_rich == ["warning: p"]
