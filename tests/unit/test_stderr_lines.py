"""Warning, error and hint lines on stderr are ours: one sanitised line each, in colour only
when stderr takes it (SGR around the whole line), never broken by the tool."""

from __future__ import annotations

import io

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from hermes_task.cli import session as endings
from hermes_task.cli import session as output
from hermes_task.cli.options import ColorMode, Common, Environment
from hermes_task.core.documents import WarningItem
from hermes_task.core.sanitize import clean_line
from hermes_task.core.ui_strings import WarningCode
from hermes_task.failures import Code, HermesError


def common(color: ColorMode = ColorMode.auto, width: int = 100) -> tuple[Common, io.StringIO]:
    err = io.StringIO()
    env = Environment(variables={"COLUMNS": str(width)}, stderr_stream=err, isatty=lambda _s: False)
    return Common(env=env, color=color), err


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300), st.sampled_from([ColorMode.never, ColorMode.always]))
@example("x" * 250, ColorMode.never)  # longer than the width: never broken (the terminal wraps it)
@example("tab\there", ColorMode.never)
@example("bell\x07 and\rcarriage \x1b[2J", ColorMode.always)
@example("zero\u200bwidth and \u202ebidi\nsecond line", ColorMode.always)
def test_a_stderr_line_is_one_sanitised_line(message: str, color: ColorMode) -> None:
    com, err = common(color, width=40)
    endings.stderr_line(com, f"warning: {message}", "bold yellow")
    written = err.getvalue()
    if color is ColorMode.always:
        assert written == f"\x1b[1;33mwarning: {clean_line(message)}\x1b[0m\n"
    else:
        assert written == f"warning: {clean_line(message)}\n"
    assert written.count("\n") == 1


def test_the_catalogue_warnings_are_written_as_they_are() -> None:
    com, err = common()
    items = [
        WarningItem(code=WarningCode.legacy_backend, message="legacy backend (hermes-agent 0.19.x): rows")
    ]
    items += [WarningItem(code=WarningCode.gap, message=code.text) for code in WarningCode]
    output.emit_warnings(com, items)
    assert err.getvalue() == "".join(f"warning: {w.message}\n" for w in items)


def test_an_error_and_its_hint_are_two_lines() -> None:
    com, err = common()
    error = HermesError(Code.NOT_FOUND, "session X", hint="check the id")
    endings.report_failure(com, error)
    assert err.getvalue() == f"error: {error.message}\nhint: check the id\n"


@pytest.mark.parametrize(
    ("style", "code"), [("bold red", "1;31"), ("bold yellow", "1;33"), ("yellow", "33"), ("dim", "2")]
)
def test_colour_wraps_the_whole_line(style: str, code: str) -> None:
    com, err = common(ColorMode.always)
    endings.stderr_line(com, "warning: p", style)
    assert err.getvalue() == f"\x1b[{code}mwarning: p\x1b[0m\n"


def test_no_colour_on_a_terminal_that_refuses_it() -> None:
    err = io.StringIO()
    env = Environment(variables={"NO_COLOR": "1"}, stderr_stream=err, isatty=lambda _s: True)
    endings.stderr_line(Common(env=env), "error: x", "bold red")
    assert err.getvalue() == "error: x\n"
