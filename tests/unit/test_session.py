"""The session a command runs in (`cli/session.py`): settings resolved once per run, the
client and the store built only when a command reads."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from hermes_task import settings
from tests.support.cli_runner import invoke
from tests.support.dashboard import serving
from tests.support.replay import TOKEN, Replay

ENV = {"HERMES_DASHBOARD_TOKEN": TOKEN, "NO_COLOR": "1", "COLUMNS": "100", "XDG_CONFIG_HOME": "/nonexistent"}


@pytest.fixture
def replay() -> Iterator[Replay]:
    rep = Replay("official")
    with serving(rep):
        yield rep


@pytest.fixture
def resolves(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = []
    real = settings.resolve

    def counted(**kwargs: Any) -> settings.Settings:
        calls.append(kwargs)
        return real(**kwargs)

    monkeypatch.setattr(settings, "resolve", counted)
    return calls


@pytest.mark.parametrize("command", ["show", "older"])
def test_a_reading_run_resolves_its_settings_once(
    replay: Replay, resolves: list[dict[str, Any]], command: str
) -> None:
    result = invoke(command, replay.manifest["c1"]["root"], "--json", env=ENV)
    assert result.exit_code == 0, result.stderr
    assert len(resolves) == 1


def test_recover_resolves_its_settings_once(replay: Replay, resolves: list[dict[str, Any]]) -> None:
    result = invoke("recover", replay.manifest["parent"], "--json", env=ENV)
    assert result.exit_code in (0, 1, 3), result.stderr
    assert len(resolves) == 1


def test_a_run_that_ends_before_reading_resolves_nothing(resolves: list[dict[str, Any]]) -> None:
    result = invoke("show", "..", "--json", env=ENV)
    assert result.exit_code == 2  # an id that cannot be one: invalid_id
    assert resolves == []
