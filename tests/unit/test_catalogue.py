"""Every stable code has its text: failures in the one failure table, the rest in core/ui_strings.py."""

from __future__ import annotations

import pytest

from hermes_task import failures
from hermes_task.core import ui_strings as catalogue
from hermes_task.core.documents import WarningItem, warning
from hermes_task.core.ui_strings import TaskStatus, WarningCode
from hermes_task.failures import Code, ExitStatus, HermesError, exit_status_for


def test_every_failure_code_has_one_row_in_the_table() -> None:
    assert set(failures.TABLE) == set(Code)
    for code in Code:
        row = failures.TABLE[code]
        assert isinstance(exit_status_for(code), ExitStatus)
        assert HermesError(code).exit_status is exit_status_for(code) is row.exit
        assert HermesError(code).retryable is row.retryable
        assert HermesError(code).hint == row.hint


def test_retryable_codes_are_exactly_the_transient_ones() -> None:
    retryable = {code for code, row in failures.TABLE.items() if row.retryable}
    assert retryable == {Code.NOT_FOUND, Code.NETWORK, Code.TIMEOUT, Code.SERVER_ERROR, Code.RATE_LIMITED}


def test_named_sets_hold_codes() -> None:
    assert {Code.NOT_FOUND, Code.INCOMPATIBLE, Code.IDENTITY_MISMATCH} == failures.HINT_IGNORABLE
    assert {
        Code.NOT_FOUND,
        Code.UNSUPPORTED,
        Code.BAD_REQUEST,
        Code.INCOMPATIBLE,
    } == failures.DESCENDANT_IGNORABLE


def test_every_exit_status_has_a_meaning() -> None:
    assert set(catalogue.EXIT_MEANINGS) == set(ExitStatus)


@pytest.mark.parametrize(
    "table",
    [
        {code: row.message for code, row in failures.TABLE.items()},
        {code: row.hint for code, row in failures.TABLE.items() if row.hint},
        {code: code.text for code in WarningCode},
        {status: status.label for status in TaskStatus},
        catalogue.EXIT_MEANINGS,
        {code: code.when for code in WarningCode},
    ],
)
def test_texts_are_single_lines_without_padding(table: dict[object, str]) -> None:
    for key, text in table.items():
        assert text, key
        assert "\n" not in text, key
        assert text == text.strip(), key
        assert not text.endswith("."), key


def test_message_helpers() -> None:
    assert failures.error_message(Code.NOT_FOUND) == failures.TABLE[Code.NOT_FOUND].message
    assert failures.error_message(Code.TIMEOUT, "detail") == f"{failures.TABLE[Code.TIMEOUT].message}: detail"
    assert HermesError(Code.TIMEOUT, "x").message == failures.error_message(Code.TIMEOUT, "x")
    assert HermesError(Code.TIMEOUT, hint="own").hint == "own"
    assert warning(WarningCode.gap, "3 rows").message == f"{WarningCode.gap.text} (3 rows)"
    assert warning(WarningCode.gap) == WarningItem(code=WarningCode.gap, message=WarningCode.gap.text)
