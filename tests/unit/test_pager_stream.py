"""The pager receives a transcript while it is being formatted (cli/pager.py `Stream`,
cli/session.py): held until taller than the screen, then piped as it comes; short text, a
missing pager and --no-pager write directly; a pager quitting early is not an error."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from hermes_task.cli import pager
from hermes_task.cli.app import app
from hermes_task.cli.options import Environment
from tests.support.dashboard import serving
from tests.support.replay import BASE_URL, TOKEN, Replay
from tests.unit.test_colour_pager import capture_pager


def stream(env: dict[str, str], requested: bool | None = None, height: int = 3) -> tuple[Any, list[str]]:
    written: list[str] = []
    return pager.Stream(requested=requested, height=height, env=env, write=written.append), written


def test_the_pager_starts_once_the_text_is_taller_than_the_screen(tmp_path: Path) -> None:
    command, out = capture_pager(tmp_path)
    feed, written = stream({"PAGER": command})
    feed.feed("a\nb\n")
    assert feed.proc is None  # two lines on a three-line screen: held
    feed.feed("c\n")
    assert feed.proc is not None  # started before the rest is formatted
    feed.feed("d\n")
    assert feed.close() is True
    assert out.read_bytes() == b"a\nb\nc\nd\n|LESS=FRX"
    assert written == []


def test_short_text_is_written_directly(tmp_path: Path) -> None:
    command, out = capture_pager(tmp_path)
    feed, written = stream({"PAGER": command}, height=50)
    feed.feed("a\n")
    feed.feed("b\n")
    assert feed.close() is False
    assert "".join(written) == "a\nb\n"
    assert not out.exists()


@pytest.mark.parametrize("requested", [False, None])
def test_no_pager_or_a_missing_one_writes_directly(tmp_path: Path, requested: bool | None) -> None:
    command, out = capture_pager(tmp_path)
    env = {"PAGER": command} if requested is False else {"PAGER": str(tmp_path / "no-such-pager")}
    feed, written = stream(env, requested=requested, height=1)
    for line in ("a\n", "b\n", "c\n"):
        feed.feed(line)
    assert feed.close() is False
    assert "".join(written) == "a\nb\nc\n"
    assert not out.exists()


def test_a_pager_that_quits_early_is_not_an_error() -> None:
    feed, written = stream({"PAGER": f"{sys.executable} -c pass"}, requested=True)
    for _ in range(200):
        feed.feed("line\n" * 1000)
    assert feed.close() is True
    assert written == []


def test_older_feeds_the_pager_in_pieces(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    replay = Replay("official")
    command, out = capture_pager(tmp_path)
    fed: list[str] = []
    real = pager.Stream.feed

    def feed(self: Any, text: str) -> None:
        fed.append(text)
        real(self, text)

    monkeypatch.setattr(pager.Stream, "feed", feed)
    env = {"HERMES_DASHBOARD_TOKEN": TOKEN, "COLUMNS": "100", "LINES": "10", "HERMES_TASK_PAGER": command}
    with serving(replay):
        result = CliRunner().invoke(
            app,
            ["older", replay.manifest["long"]["id"], "--all", "--url", BASE_URL],
            env={"NO_COLOR": None, "FORCE_COLOR": None, "TERM": None, "PAGER": None, **env},
            obj=Environment(isatty=lambda stream: True),
        )
    assert result.exit_code == 0, result.stderr
    assert len(fed) >= 2  # the first rows went out before the last were formatted
    assert out.read_bytes().decode() == "".join(fed) + "|LESS=FRX"
