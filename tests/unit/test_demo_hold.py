"""The end of the demo (tools/demo.py `hold`, issue 26 item 6): with stdin not a terminal it
says how to keep the dashboard instead of printing commands it is about to break; `--keep`
prints them and holds until SIGTERM."""

from __future__ import annotations

import importlib.util
import io
import os
import signal
import threading
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[2]


def demo() -> ModuleType:
    spec = importlib.util.spec_from_file_location("demo_under_test", ROOT / "tools" / "demo.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BACKEND = SimpleNamespace(url="http://127.0.0.1:9", pid=1)


def test_stdin_not_a_terminal_says_how_to_keep_the_dashboard(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    demo().hold(BACKEND, tmp_path, tmp_path / "token", "P", "C", keep=False)
    out = capsys.readouterr().out
    assert "stdin is not a terminal, so the demo stops its dashboard now" in out
    assert "bash tools/demo.sh --keep" in out
    assert "Try it yourself" not in out  # no commands that would meet a stopped dashboard
    assert "hermes-task recover" not in out


def test_keep_prints_the_commands_and_holds_until_sigterm(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    default = signal.getsignal(signal.SIGTERM)
    installed = threading.Event()

    def terminate() -> None:
        while signal.getsignal(signal.SIGTERM) == default:  # until hold's handler is in place
            installed.wait(0.01)
        os.kill(os.getpid(), signal.SIGTERM)

    killer = threading.Thread(target=terminate)
    killer.start()
    demo().hold(BACKEND, tmp_path, tmp_path / "token", "P", "C", keep=True)
    killer.join()
    out = capsys.readouterr().out
    assert "Try it yourself" in out
    assert "  hermes-task parents\n  hermes-task recover P\n  hermes-task follow C\n" in out
    assert f"Stop it: Ctrl-C here, or kill -TERM {os.getpid()}." in out
    assert signal.getsignal(signal.SIGTERM) == default  # put back
