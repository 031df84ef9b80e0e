"""Against both real backends: the jq recipes of docs/json.md, named gateways from the config file,
`--debug` lines, and the pager on a real pseudo-terminal."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import shutil
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path
from typing import Any

import pytest
from tests.support.backends import legacy_stderr

# What these prove is hermes-task's own behaviour (tests/conftest.py: reference backends only).
pytestmark = [pytest.mark.integration, pytest.mark.client_side]

BIN = Path(sys.executable).parent / "hermes-task"
FINAL_REPLY = '[.rows[] | select(.role == "assistant" and (.text // "") != "")] | last | .text // empty'
FAILED_TASKS = (
    '.tasks[] | recurse(.children[]) | select(.status | IN("failed", "error", "timeout"))'
    ' | [.task_index, .status, .child_session_id // "-", .goal] | @tsv'
)
ROWS_OF_ROLE = ".rows[] | select(.role == $role)"


def base_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("HERMES_", "FORCE_COLOR", "NO_COLOR", "PAGER", "LESS")) and k != "COLUMNS"
    }
    env.update({"NO_COLOR": "1", "COLUMNS": "100", "XDG_CONFIG_HOME": str(tmp_path)})
    env.update(extra)
    return env


def cli(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN), *args], capture_output=True, text=True, env=env, timeout=120, check=False
    )


def jq(program: str, document: str, *args: str) -> str:
    proc = subprocess.run(
        ["jq", *args, program], input=document, capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_jq_recipes_on_real_documents(backend: Any, tmp_path: Path) -> None:
    env = base_env(tmp_path, HERMES_DASHBOARD_TOKEN=backend.token)
    c1 = backend.manifest["c1"]
    show = cli(["show", c1["root"], "--tip", c1["tip"], "--json", "--url", backend.url], env)
    assert show.returncode == 0, show.stderr
    doc = json.loads(show.stdout)
    replies = [r["text"] for r in doc["rows"] if r["role"] == "assistant" and r["text"]]
    assert replies
    final = replies[-1]
    tools = [r for r in doc["rows"] if r["role"] == "tool"]
    assert tools
    recover = cli(["recover", backend.manifest["parent"], "--recursive", "--json", "--url", backend.url], env)
    assert recover.returncode == 0, recover.stderr
    tasks = json.loads(recover.stdout)

    def walk(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [x for e in entries for x in (e, *walk(e["children"]))]

    failed = [
        f"{t['task_index']}\t{t['status']}\t{t['child_session_id'] or '-'}\t{t['goal']}"
        for t in walk(tasks["tasks"])
        if t["status"] in ("failed", "error", "timeout")
    ]
    expected_failed = [t for t in backend.manifest["expected_tasks"] if t["status"] == "failed"]
    assert len(failed) == len(expected_failed) >= 1
    if shutil.which("jq") is None:
        pytest.skip("jq is not installed: the Python equivalents above passed")
    assert jq(FINAL_REPLY, show.stdout, "-r") == final + "\n"
    assert jq(FAILED_TASKS, recover.stdout, "-r").splitlines() == failed
    lines = jq(ROWS_OF_ROLE, show.stdout, "-c", "--arg", "role", "tool").splitlines()
    assert [json.loads(line) for line in lines] == tools


def write_config(tmp_path: Path, backend: Any, *, default: bool) -> None:
    folder = tmp_path / "hermes-task"
    folder.mkdir(parents=True, exist_ok=True)
    head = 'default_gateway = "real"\n' if default else ""
    (folder / "config.toml").write_text(
        f'{head}[gateways.real]\nurl = "{backend.url}"\ntoken_file = "{backend.token_file}"\nrequest_timeout = 20\n'
        '[gateways.nowhere]\nurl = "http://127.0.0.1:9"\n',
        encoding="utf-8",
    )


def test_named_gateways_reach_the_real_backend(backend: Any, tmp_path: Path) -> None:
    write_config(tmp_path, backend, default=False)
    env = base_env(tmp_path)
    root = backend.manifest["plain"]["root"]
    for args, extra in (
        (["--gateway", "real"], {}),
        ([], {"HERMES_TASK_GATEWAY": "real"}),
    ):
        run = cli(["show", root, "--json", *args], {**env, **extra})
        assert run.returncode == 0, run.stderr
        assert run.stderr == ""
        assert json.loads(run.stdout)["task"]["root_id"] == root
    run = cli(["show", root, "--json", "--gateway", "nowhere"], env)
    assert run.returncode == 7
    assert json.loads(run.stdout)["error"]["code"] == "network"
    write_config(tmp_path, backend, default=True)
    run = cli(["show", root, "--json"], env)
    assert run.returncode == 0, run.stderr
    shown = json.loads(cli(["config", "show", "--json"], env).stdout)["settings"]
    assert shown["gateway"] == {"value": "real", "source": "config"}
    assert shown["url"] == {"value": backend.url, "source": "config"}
    assert shown["token"] == {"value": f"set (from file {backend.token_file})", "source": "config"}
    assert shown["request_timeout"] == {"value": 20.0, "source": "config"}
    everything = cli(["config", "show"], env).stdout + json.dumps(shown)
    assert backend.token not in everything


def test_debug_lines_against_the_real_backend_never_show_the_token(backend: Any, tmp_path: Path) -> None:
    env = base_env(tmp_path, HERMES_DASHBOARD_TOKEN=backend.token)
    c1 = backend.manifest["c1"]
    run = cli(["show", c1["root"], "--tip", c1["tip"], "--json", "--debug", "--url", backend.url], env)
    assert run.returncode == 0, run.stderr
    all_lines = run.stderr.splitlines()
    assert all_lines[0] == "debug: credentials: env HERMES_DASHBOARD_TOKEN"  # the source, never the value
    assert all(line.startswith("debug: ") for line in all_lines)
    lines = [line for line in all_lines[1:] if not line.startswith("debug: store")]  # store lines: no content
    assert lines
    assert len(lines) % 2 == 0
    for start, settle in zip(lines[::2], lines[1::2], strict=True):
        assert re.fullmatch(
            r"debug: start [a-z-]+ GET /api/sessions/\S+ id=\S+( limit=\d+ offset=\d+ order=(latest|oldest))?",
            start,
        ), start
        assert re.fullmatch(r"debug: settle [a-z-]+ id=\S+ HTTP 200( returned=\d+)? \d+ms", settle), settle
    assert backend.token not in run.stderr
    bad = cli(
        ["show", c1["root"], "--debug", "--url", backend.url],
        {**env, "HERMES_DASHBOARD_TOKEN": "wrong-token-value"},
    )
    assert bad.returncode == 3
    assert re.search(r"debug: settle detail id=\S+ HTTP 401 \d+ms", bad.stderr)
    assert "wrong-token-value" not in bad.stderr


def on_pty(
    argv: list[str], env: dict[str, str], keys: bytes = b"", timeout: float = 60
) -> tuple[int, bytes, str]:
    """Run with stdin/stdout on a 100x24 pseudo-terminal (stderr piped); type `keys` once
    output has appeared."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    proc = subprocess.Popen(
        argv, stdin=slave, stdout=slave, stderr=subprocess.PIPE, env=env, start_new_session=True
    )
    os.close(slave)
    out, sent, deadline = b"", False, time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                out += chunk
            elif keys and out and not sent:
                os.write(master, keys)
                sent = True
            elif proc.poll() is not None:
                break
        code = proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    assert proc.stderr is not None
    with proc.stderr:
        return code, out, proc.stderr.read().decode()


CAPTURE = "import sys\nopen(sys.argv[1], 'wb').write(sys.stdin.buffer.read())\n"
UNSAFE = re.compile(rb"\x1b(?!\[[0-9;]*m)|\xc2[\x80-\x9f]|\xe2\x80[\xaa-\xae]")


def expected_stderr(backend: Any) -> str:
    return legacy_stderr(backend.features)


def test_long_output_on_a_terminal_goes_through_the_pager(backend: Any, tmp_path: Path) -> None:
    script, paged = tmp_path / "capture.py", tmp_path / "paged.txt"
    script.write_text(CAPTURE, encoding="utf-8")
    env = base_env(tmp_path, HERMES_DASHBOARD_TOKEN=backend.token, TERM="xterm")
    env.pop("NO_COLOR")
    env.pop("COLUMNS")
    env["HERMES_TASK_PAGER"] = f"{sys.executable} {script} {paged}"
    code, out, err = on_pty([str(BIN), "show", backend.manifest["long"]["id"], "--url", backend.url], env)
    assert (code, err) == (0, expected_stderr(backend))
    assert out == b""
    text = paged.read_bytes()
    assert text.count(b"\n") > 24
    assert b"\x1b[" in text
    code, out, err = on_pty(
        [str(BIN), "show", backend.manifest["rich"]["id"], "--pager", "--url", backend.url], env
    )
    assert (code, err) == (0, expected_stderr(backend))
    text = paged.read_bytes()
    assert b"^[]52;c;ZXZpbA==^G clipboard" in text
    assert UNSAFE.search(text) is None
    paged.unlink()
    code, out, err = on_pty(
        [str(BIN), "show", backend.manifest["long"]["id"], "--no-pager", "--url", backend.url], env
    )
    assert (code, err) == (0, expected_stderr(backend))
    assert not paged.exists()
    assert out.count(b"\n") > 24


@pytest.mark.skipif(shutil.which("less") is None, reason="less is not installed")
def test_the_default_pager_is_less_and_q_quits_it(backend: Any, tmp_path: Path) -> None:
    env = base_env(tmp_path, HERMES_DASHBOARD_TOKEN=backend.token, TERM="xterm")
    code, out, err = on_pty(
        [str(BIN), "show", backend.manifest["long"]["id"], "--url", backend.url], env, b"q"
    )
    assert (code, err) == (0, expected_stderr(backend))
    assert b"\r\n:" in out  # less's prompt: it waited for a key on the long output
