"""`show --json` reaches its first HTTP request through few of the package's own frames (issue
36: at most 6 from `main`): every pass-through layer between the console script and the
request is a frame a maintainer reads through. The in-memory dashboard answers the request
and notes the call stack it was asked from."""

from __future__ import annotations

import inspect
import json
import sys
from pathlib import Path

import httpx
import pytest

import hermes_task
from hermes_task.cli.app import main
from tests.support.conversations import Conversations
from tests.support.dashboard import serving

PACKAGE = Path(hermes_task.__file__).resolve().parent
CHILD = "20260101_000000_abcdef"
# The CLI's share: `main`, the root group's `main` (usage errors spelled as failures), the
# command, and the one transcript read.
CLI_FRAMES = 4


def first_request_stack(
    fake: Conversations, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> list[str]:
    """`hermes-task show CHILD --json` from `main`: the package's own frames (outermost first,
    as `folder/module.py:function`) when the first request was made."""
    fake.session(CHILD)
    fake.add(CHILD, "user", "the goal")
    stacks: list[list[str]] = []

    def handle(request: httpx.Request) -> httpx.Response:
        if not stacks:
            own = [f for f in inspect.stack() if Path(f.filename).resolve().is_relative_to(PACKAGE)]
            stacks.append([f"{Path(f.filename).resolve().relative_to(PACKAGE)}:{f.function}" for f in own])
        return fake.handle(request)

    monkeypatch.setattr(sys, "argv", ["hermes-task", "show", CHILD, "--json"])
    monkeypatch.setenv("HERMES_DASHBOARD_TOKEN", "token")
    monkeypatch.setenv("XDG_CONFIG_HOME", "/nonexistent")
    with serving(handle), pytest.raises(SystemExit) as ended:
        main()
    assert ended.value.code == 0
    assert json.loads(capsys.readouterr().out)["kind"] == "transcript"
    return stacks[0][::-1]


def test_show_json_reaches_its_first_request_through_few_cli_frames(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    stack = first_request_stack(Conversations(), monkeypatch, capsys)
    assert stack[0] == "cli/app.py:main"
    assert stack[-1].startswith("dashboard/client.py:")
    cli = [frame for frame in stack if frame.startswith("cli/")]
    assert len(cli) <= CLI_FRAMES, stack


def test_show_json_reaches_its_first_request_through_at_most_six_own_frames(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    stack = first_request_stack(Conversations(), monkeypatch, capsys)
    assert len(stack) <= 6, stack
