"""Colour decisions (per stream) and the pager: choice, run, and what it receives."""

from __future__ import annotations

import io
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.text import Text

from hermes_task.cli import pager as pager
from hermes_task.cli.options import ColorMode, Common, Environment
from hermes_task.cli.session import Session, color_enabled
from tests.support.cli_runner import invoke
from tests.support.dashboard import serving
from tests.support.replay import TOKEN, Replay


class Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


class Closed(io.StringIO):
    def isatty(self) -> bool:
        raise ValueError("I/O operation on closed file")


@pytest.mark.parametrize(
    ("mode", "tty", "env", "expected"),
    [
        (ColorMode.always, False, {"NO_COLOR": "1", "TERM": "dumb"}, True),
        (ColorMode.never, True, {"FORCE_COLOR": "1"}, False),
        (ColorMode.auto, True, {}, True),
        (ColorMode.auto, False, {}, False),
        (ColorMode.auto, True, {"NO_COLOR": "1"}, False),
        (ColorMode.auto, True, {"NO_COLOR": ""}, True),
        (ColorMode.auto, False, {"FORCE_COLOR": "1"}, True),
        (ColorMode.auto, False, {"FORCE_COLOR": "1", "NO_COLOR": "1"}, False),
        (ColorMode.auto, True, {"TERM": "dumb"}, False),
        (ColorMode.auto, False, {"TERM": "dumb", "FORCE_COLOR": "1"}, True),
        (ColorMode.auto, True, {"TERM": "xterm-256color"}, True),
    ],
)
def test_colour_decision(mode: ColorMode, tty: bool, env: dict[str, str], expected: bool) -> None:
    assert color_enabled(Common(env=Environment(variables=env), color=mode), Stream(tty)) is expected


def test_a_closed_stream_is_not_a_terminal() -> None:
    assert color_enabled(Common(env=Environment(variables={})), Closed()) is False


@pytest.fixture
def plain_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("NO_COLOR", "FORCE_COLOR", "TERM", "COLUMNS", "TTY_COMPATIBLE", "TTY_INTERACTIVE"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.usefixtures("plain_env")
@pytest.mark.parametrize(("out_tty", "err_tty"), [(True, False), (False, True)])
def test_stdout_and_stderr_are_decided_separately(
    monkeypatch: pytest.MonkeyPatch, out_tty: bool, err_tty: bool
) -> None:
    out, err = Stream(out_tty), Stream(err_tty)
    session = Session(Common(env=Environment(stdout_stream=out, stderr_stream=err)))
    for console in (session.console(), session.err_console()):
        console.print(Text("hello", style="bold red"))
    assert ("\x1b[" in out.getvalue()) is out_tty
    assert ("\x1b[" in err.getvalue()) is err_tty
    assert "hello" in out.getvalue()
    assert "hello" in err.getvalue()


@pytest.mark.usefixtures("plain_env")
def test_a_non_terminal_gets_the_columns_width_and_no_wrapping_of_long_lines(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "40")
    out = Stream(False)
    rich_console = Session(Common(env=Environment(stdout_stream=out))).console()
    assert rich_console.width == 40
    rich_console.print(Text("x" * 60))
    assert out.getvalue() == "x" * 60 + "\n"


@pytest.mark.parametrize(
    ("env", "setting", "argv"),
    [
        ({}, ("less -FRX", "default"), ["less", "-FRX"]),
        ({"PAGER": "more -s"}, ("more -s", "PAGER"), ["more", "-s"]),
        ({"PAGER": "more", "HERMES_TASK_PAGER": "most"}, ("most", "HERMES_TASK_PAGER"), ["most"]),
        ({"PAGER": "more", "HERMES_TASK_PAGER": ""}, (None, "HERMES_TASK_PAGER"), None),
        ({"PAGER": "cat"}, (None, "PAGER"), None),
        ({"PAGER": "  "}, (None, "PAGER"), None),
        ({"HERMES_TASK_PAGER": "less 'unbalanced"}, ("less 'unbalanced", "HERMES_TASK_PAGER"), None),
    ],
)
def test_pager_choice(env: dict[str, str], setting: tuple[str | None, str], argv: list[str] | None) -> None:
    assert pager.pager_setting(env) == setting
    assert pager.pager_command(env) == argv


@pytest.mark.parametrize(
    ("requested", "lines", "height", "expected"),
    [
        (None, 10, 50, False),
        (None, 50, 50, True),
        (None, 80, 50, True),
        (True, 1, 50, True),
        (False, 999, 5, False),
    ],
)
def test_should_page(requested: bool | None, lines: int, height: int, expected: bool) -> None:
    assert pager.should_page(requested, lines, height) is expected


def capture_pager(tmp_path: Path) -> tuple[str, Path]:
    script = tmp_path / "capture.py"
    out = tmp_path / "paged.txt"
    script.write_text(
        "import os, sys\n"
        "data = sys.stdin.buffer.read()\n"
        "open(sys.argv[1], 'wb').write(data + b'|LESS=' + os.environ.get('LESS', '').encode())\n",
        encoding="utf-8",
    )
    return f"{sys.executable} {script} {out}", out


def paged(text: str, env: dict[str, str], written: list[str] | None = None) -> bool:
    stream = pager.Stream(
        requested=True, height=1, env=env, write=(written if written is not None else []).append
    )
    stream.feed(text)
    return stream.close()


def test_the_pager_gets_the_text_and_less_its_options(tmp_path: Path) -> None:
    command, out = capture_pager(tmp_path)
    assert paged("héllo\n", {"PAGER": command}) is True
    assert out.read_bytes() == "héllo\n|LESS=FRX".encode()
    paged("x\n", {"PAGER": command, "LESS": "R"})
    assert out.read_bytes() == b"x\n|LESS=R"


def test_a_pager_that_quits_early_is_not_an_error(tmp_path: Path) -> None:
    env = {"PAGER": f"{sys.executable} -c pass"}
    assert paged("line\n" * 200_000, env) is True


def test_a_missing_pager_falls_back_to_writing_directly(tmp_path: Path) -> None:
    written: list[str] = []
    env = {"HERMES_TASK_PAGER": str(tmp_path / "no-such-pager")}
    assert paged("a\nb\n", env, written) is False
    assert written == ["a\nb\n"]


# --- show through the pager, with the real captures of the hostile row -------------------

ENV = {"HERMES_DASHBOARD_TOKEN": TOKEN, "COLUMNS": "100", "XDG_CONFIG_HOME": "/nonexistent"}
UNSAFE = re.compile(r"\x1b(?!\[[0-9;]*m)|[\x00-\x08\x0b-\x1a\x1c-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


@pytest.fixture(params=["official", "iot"])
def replay(request: pytest.FixtureRequest) -> Iterator[Replay]:
    rep = Replay(request.param)
    with serving(rep):
        yield rep


def show(args: list[str], env: dict[str, str], *, tty: bool = False) -> Any:
    clean = {"NO_COLOR": None, "FORCE_COLOR": None, "TERM": None, "PAGER": None, "HERMES_TASK_PAGER": None}
    terminal = Environment(isatty=lambda stream: True) if tty else None
    return invoke("show", *args, env={**clean, **ENV, **env}, environment=terminal)


def test_show_on_a_terminal_pages_rich_output_that_is_still_sanitised(
    replay: Replay, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    command, out = capture_pager(tmp_path)
    result = show([replay.manifest["rich"]["id"]], {"HERMES_TASK_PAGER": command, "LINES": "10"}, tty=True)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ""
    paged = out.read_bytes().decode()
    assert paged.endswith("|LESS=FRX")
    assert "\x1b[" in paged  # rich's own colour reaches the pager
    assert UNSAFE.search(paged) is None
    assert "^[]52;c;ZXZpbA==^G clipboard" in paged
    assert "<U+202E>evil<U+202C>" in paged


def test_show_no_pager_writes_to_stdout(
    replay: Replay, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    command, out = capture_pager(tmp_path)
    result = show(
        [replay.manifest["rich"]["id"], "--no-pager"], {"HERMES_TASK_PAGER": command, "LINES": "10"}, tty=True
    )
    assert result.exit_code == 0, result.stderr
    assert not out.exists()
    assert "clipboard" in result.stdout
    assert UNSAFE.search(result.stdout) is None


def test_show_short_output_is_not_paged_by_default(
    replay: Replay, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    command, out = capture_pager(tmp_path)
    result = show([replay.manifest["rich"]["id"]], {"HERMES_TASK_PAGER": command, "LINES": "1000"}, tty=True)
    assert result.exit_code == 0, result.stderr
    assert not out.exists()
    assert "clipboard" in result.stdout


def test_json_never_pages(replay: Replay, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    command, out = capture_pager(tmp_path)
    result = show(
        [replay.manifest["rich"]["id"], "--json", "--pager"], {"HERMES_TASK_PAGER": command}, tty=True
    )
    assert result.exit_code == 0, result.stderr
    assert not out.exists()
    assert json.loads(result.stdout)["kind"] == "transcript"


def test_a_pipe_never_pages_even_with_pager(replay: Replay, tmp_path: Path) -> None:
    command, out = capture_pager(tmp_path)
    result = show([replay.manifest["rich"]["id"], "--pager"], {"HERMES_TASK_PAGER": command})
    assert result.exit_code == 0, result.stderr
    assert not out.exists()
    assert "clipboard" in result.stdout
    assert "\x1b" not in result.stdout


def test_color_always_and_force_color_colour_a_pipe_but_never_json(replay: Replay) -> None:
    result = show([replay.manifest["rich"]["id"], "--color", "always"], {})
    assert result.exit_code == 0, result.stderr
    assert "\x1b[" in result.stdout
    assert UNSAFE.search(result.stdout) is None
    result = show(["20000101_000000_000000", "--color", "always"], {})
    assert result.exit_code == 4
    assert result.stderr.startswith("\x1b[1;31merror: session not found")
    result = show(["20000101_000000_000000"], {"FORCE_COLOR": "1"})
    assert result.stderr.startswith("\x1b[1;31merror: session not found")
    result = show(["20000101_000000_000000"], {"FORCE_COLOR": "1", "NO_COLOR": "1"})
    assert result.stderr.startswith("error: session not found")
    result = show([replay.manifest["rich"]["id"], "--color", "always", "--json"], {})
    assert result.exit_code == 0
    assert "\x1b" not in result.stdout
    assert json.loads(result.stdout)["kind"] == "transcript"
