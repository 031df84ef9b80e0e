"""The session a command runs in (`cli/session.py`): settings resolved once per run, the
client and the store built only when a command reads."""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from typing import Any

import pytest

from hermes_task import settings
from hermes_task.cli.options import Common, Environment
from hermes_task.cli.session import Session
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


def test_the_outputs_are_built_once_each_on_first_use(monkeypatch: pytest.MonkeyPatch) -> None:
    """stdout's target and the two rich consoles are the session's, made when a command first
    writes and then kept; the stderr console writes to stderr."""
    from hermes_task.cli import session as consoles

    built: list[str] = []
    real_target, real_console = consoles.output_target, consoles.rich_console

    def target(common: Common) -> Any:
        built.append("target")
        return real_target(common)

    def console(common: Common, *, stderr: bool) -> Any:
        built.append(f"console stderr={stderr}")
        return real_console(common, stderr=stderr)

    monkeypatch.setattr("hermes_task.cli.session.output_target", target)
    monkeypatch.setattr("hermes_task.cli.session.rich_console", console)
    out, err = io.StringIO(), io.StringIO()
    session = Session(
        Common(env=Environment(variables={"COLUMNS": "60"}, stdout_stream=out, stderr_stream=err))
    )
    assert built == []
    assert session.target is session.target
    assert session.target.columns == 60
    assert session.console() is session.console()
    assert session.err_console() is session.err_console()
    assert session.err_console() is not session.console()
    session.err_console().print("to stderr")
    assert (out.getvalue(), err.getvalue()) == ("", "to stderr\n")
    assert built == ["target", "console stderr=False", "console stderr=True"]


def test_a_streamed_run_builds_its_target_once(replay: Replay, monkeypatch: pytest.MonkeyPatch) -> None:
    """`older --all` piped asks for stdout's target twice (may it stream? then where): one build."""
    from hermes_task.cli import session as consoles

    built: list[Common] = []
    real_target = consoles.output_target

    def target(common: Common) -> Any:
        built.append(common)
        return real_target(common)

    monkeypatch.setattr("hermes_task.cli.session.output_target", target)
    result = invoke("older", replay.manifest["c1"]["root"], "--all", env=ENV)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("goal: ")
    assert len(built) == 1


def test_a_closed_stdout_ends_a_rich_console_quietly() -> None:
    """rich's own broken-pipe handler exits 1; the session's consoles exit 0, quietly."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    with open(write_end, "w", encoding="utf-8") as stdout:
        session = Session(
            Common(env=Environment(variables={}, stdout_stream=stdout, isatty=lambda _s: False))
        )
        with pytest.raises(SystemExit) as ended:
            session.console().print("x" * 100_000)
    assert ended.value.code == 0
