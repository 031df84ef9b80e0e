"""Exit 9 means what it says for `recover --watch` and `follow --parent` (issue 25): a parent
that never answered ends after `--start-timeout` with the failure's own code (4 not found, 7
network); a watch whose reads failed until `--timeout` ends with that failure's code and the
age of its last successful read; 9 only when the last successful read showed a task running."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from typer.testing import Result

from hermes_task.cli import recover as watch_cli
from tests.support.clock import Clock
from tests.support.conversations import Conversations
from tests.unit.test_recover_cli import run as recover
from tests.unit.test_schemas import validator
from tests.unit.test_watch import background

P = "20261130_170000_aaaaaa"
TYPO = "20261130_170000_aaaaab"


@pytest.fixture
def clock(clock: Clock, monkeypatch: pytest.MonkeyPatch) -> Clock:
    # Differs from conftest's: the watch's back-off jitter is fixed at 1.0 (its sleeps exact).
    monkeypatch.setattr(watch_cli, "JITTER", lambda: 1.0)
    return clock


def follow_parent(*args: str) -> Result:
    from tests.unit.test_family import run

    return run("--parent", *args)


COMMANDS: dict[str, Callable[..., Result]] = {
    "recover --watch": lambda parent, *a: recover(parent, "--watch", *a),
    "follow --parent": follow_parent,
}


def events(stdout: str) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in stdout.splitlines()]
    check = validator("events")
    for event in lines:
        check.validate(event)
    return lines


@pytest.mark.parametrize("command", COMMANDS)
def test_a_mistyped_parent_id_ends_4_after_the_start_timeout(
    fake: Conversations, clock: Clock, command: str
) -> None:
    background(fake)  # P exists; the command names TYPO
    result = COMMANDS[command](TYPO, "--exit-status", "--timeout", "1800", "--json")
    assert result.exit_code == 4, result.stdout
    lines = events(result.stdout)
    assert [(e["type"], e.get("code"), e.get("retryable")) for e in lines] == [
        ("error", "not_found", True), ("error", "not_found", False), ("result", None, None)]  # fmt: skip
    assert "still not found after --start-timeout 60s" in lines[1]["message"]
    assert lines[-1] == {"type": "result", "state": "unknown", "end_reason": None, "exit_code": 4,
                         "last_read_age": None, "unreported": []}  # fmt: skip
    assert sum(clock.sleeps) == 60.0  # not the 1800 s of --timeout


@pytest.mark.parametrize("command", COMMANDS)
def test_a_parent_that_never_answered_ends_with_the_failures_code(
    fake: Conversations, clock: Clock, command: str
) -> None:
    background(fake)
    fake.status = 503
    result = COMMANDS[command](P, "--exit-status", "--start-timeout", "20", "--json")  # no --timeout at all
    assert result.exit_code == 7, result.stdout
    lines = events(result.stdout)
    assert [(e["type"], e.get("code")) for e in lines] == [
        ("error", "server_error"), ("error", "server_error"), ("result", None)]  # fmt: skip
    assert "no read succeeded within --start-timeout 20s" in lines[1]["message"]
    assert lines[-1]["exit_code"] == 7
    assert sum(clock.sleeps) == 20.0


@pytest.mark.parametrize("command", COMMANDS)
def test_reads_that_failed_until_the_timeout_end_with_their_code_and_the_last_reads_age(
    fake: Conversations, clock: Clock, command: str
) -> None:
    background(fake)
    clock.hooks[1] = lambda: setattr(fake, "status", 503)  # after the first good read
    result = COMMANDS[command](P, "--exit-status", "--timeout", "100", "--json")
    assert result.exit_code == 7, result.stdout  # not 9: nothing is known to be still running
    lines = events(result.stdout)
    assert [(e["type"], e.get("code")) for e in lines[2:]] == [
        ("error", "server_error"), ("error", "server_error"), ("result", None)]  # fmt: skip
    assert lines[-2]["message"].endswith(
        "; every read failed until --timeout ran out; the last successful read was 100s ago"
    )
    assert lines[-1] == {"type": "result", "state": "unknown", "end_reason": None, "exit_code": 7,
                         "last_read_age": 100.0, "unreported": []}  # fmt: skip


def test_a_404_streak_after_good_reads_also_ends_after_the_start_timeout(
    fake: Conversations, clock: Clock
) -> None:
    background(fake)
    clock.hooks[1] = lambda: fake.missing.add(P)  # the parent was deleted
    result = recover(P, "--watch", "--start-timeout", "10", "--json")
    assert result.exit_code == 4, result.stdout
    lines = events(result.stdout)
    assert lines[-1]["last_read_age"] == 12.0  # the last good read, then 10 s of 404s


def test_nine_only_when_the_last_read_showed_a_task_running(fake: Conversations, clock: Clock) -> None:
    background(fake)
    result = recover(P, "--watch", "--exit-status", "--timeout", "5", "--json")
    assert result.exit_code == 9
    assert events(result.stdout)[-1] == {"type": "result", "state": "running", "end_reason": None,
                                         "exit_code": 9, "last_read_age": None, "unreported": []}  # fmt: skip


def test_start_timeout_needs_watch(fake: Conversations) -> None:
    result = recover(P, "--start-timeout", "5")
    assert result.exit_code == 2
    assert "--start-timeout" in result.stderr


def test_piped_watch_says_the_failure_and_the_last_reads_age_on_stderr(
    fake: Conversations, clock: Clock
) -> None:
    background(fake)
    clock.hooks[1] = lambda: setattr(fake, "status", 503)
    result = recover(P, "--watch", "--timeout", "30")
    assert result.exit_code == 7
    assert result.stderr.splitlines()[-1] == (
        "error: the dashboard failed with a server error: HTTP 503; every read failed until --timeout ran "
        "out; the last successful read was 30s ago"
    )
