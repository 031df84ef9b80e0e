"""Warnings on a stderr without colour are written without rich, byte for byte as rich
prints them; anything rich would have to clean goes through rich."""

from __future__ import annotations

import io
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from hermes_task.cli import output
from hermes_task.cli.common import ColorMode, Common
from hermes_task.cli.environment import Environment
from hermes_task.core.documents import WarningItem
from hermes_task.core.messages import WARNINGS


def common(width: int = 100, **env: str) -> tuple[Common, io.StringIO]:
    err = io.StringIO()
    variables = {"COLUMNS": str(width), **env}
    return Common(env=Environment(variables=variables, stderr_stream=err, isatty=lambda _s: False)), err


def through_rich(message: str, width: int) -> str:
    com, err = common(width)
    output.rich_warnings(com, [message])
    return err.getvalue()


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300), st.integers(min_value=20, max_value=200))
@example("x" * 250, 40)  # longer than the width: rich does not wrap stderr (soft wrap)
@example("日本語のテキスト " * 20, 30)
@example("tab\there", 100)
@example("bell\x07 and\rcarriage", 100)
@example("zero\u200bwidth and \u202ebidi", 100)
def test_a_plain_warning_is_what_rich_prints(message: str, width: int) -> None:
    line = output.plain_warning(message)
    if line is not None:
        assert line == through_rich(message, width)


def test_what_rich_would_clean_is_left_to_rich() -> None:
    for message in ("tab\there", "bell\x07", "line\nbreak", "zero\u200bwidth", "\u202ebidi"):
        assert output.plain_warning(message) is None


def test_the_catalogue_warnings_take_the_plain_path(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_rich(*_a: Any, **_k: Any) -> None:
        raise AssertionError("rich was used")

    monkeypatch.setattr(output, "rich_warnings", no_rich)
    com, err = common()
    items = [WarningItem(code="legacy_backend", message="legacy backend (hermes-agent 0.19.x): rows")]
    items += [WarningItem(code="gap", message=text) for text in WARNINGS.values()]
    output.emit_warnings(com, items)
    assert err.getvalue() == "".join(f"warning: {w.message}\n" for w in items)


def test_colour_and_unclean_text_still_go_through_rich(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[list[str]] = []
    monkeypatch.setattr(output, "rich_warnings", lambda _c, messages: seen.append(messages))
    com, _err = common()
    output.emit_warnings(com, [WarningItem(code="gap", message="a\tb")])
    coloured = Common(env=com.env, color=ColorMode.always)
    output.emit_warnings(coloured, [WarningItem(code="gap", message="plain")])
    assert seen == [["a\tb"], ["plain"]]
