"""catalogue.py is the one place of human wording: every stable code has its text."""

from __future__ import annotations

from typing import get_args, get_type_hints

import pytest

from hermes_task.core import messages as catalogue
from hermes_task.core.documents import TaskEntry, WarningItem
from hermes_task.failures import Code, ExitStatus, HermesError, exit_status_for


def literal_values(model: type, field: str) -> set[str]:
    return set(get_args(get_type_hints(model)[field]))


def test_every_failure_code_has_a_message_and_an_exit_status() -> None:
    assert set(catalogue.ERRORS) == set(Code)
    for code in Code:
        assert isinstance(exit_status_for(code), ExitStatus)
        assert HermesError(code).exit_status is exit_status_for(code)


def test_hints_belong_to_codes() -> None:
    assert set(catalogue.HINTS) <= set(Code)


def test_every_warning_code_has_a_message() -> None:
    codes = literal_values(WarningItem, "code")
    assert codes == {
        "partial_history",
        "partial_ancestors",
        "legacy_backend",
        "gap",
        "bound_reached",
        "foreign_rows",
        "store_unavailable",
    }
    assert set(catalogue.WARNINGS) == codes
    assert list(catalogue.WARNING_WHEN) == list(catalogue.WARNINGS)


def test_every_task_status_has_a_label() -> None:
    statuses = literal_values(TaskEntry, "status")
    assert "completed" in statuses
    assert set(catalogue.STATUS_LABELS) == statuses


def test_every_exit_status_has_a_meaning() -> None:
    assert set(catalogue.EXIT_MEANINGS) == set(ExitStatus)


@pytest.mark.parametrize(
    "table",
    [
        catalogue.ERRORS,
        catalogue.HINTS,
        catalogue.WARNINGS,
        catalogue.STATUS_LABELS,
        catalogue.EXIT_MEANINGS,
        catalogue.WARNING_WHEN,
    ],
)
def test_texts_are_single_lines_without_padding(table: dict[object, str]) -> None:
    for key, text in table.items():
        assert text, key
        assert "\n" not in text, key
        assert text == text.strip(), key
        assert not text.endswith("."), key


def test_message_helpers() -> None:
    assert catalogue.error_message(Code.NOT_FOUND) == catalogue.ERRORS[Code.NOT_FOUND]
    assert catalogue.error_message(Code.TIMEOUT, "detail") == f"{catalogue.ERRORS[Code.TIMEOUT]}: detail"
    assert catalogue.warning_message("gap", "3 rows") == f"{catalogue.WARNINGS['gap']} (3 rows)"
    with pytest.raises(KeyError):
        catalogue.warning_message("no_such_warning")
