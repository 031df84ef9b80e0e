"""The README's workflow section, run as written against both real backends.

Every ```sh block between `## Workflow` and the next `## ` heading is run, in the README's
order, by one `bash -euo pipefail` script, so a command that fails (or a pipeline stage that
does) fails the test, and a variable a block sets (`CHILD`, taken from `recover`'s own piped
output) is what the later blocks use. The only substitution is the `PARENT=` line: its example
id becomes the seeded parent chat of the backend's manifest. The CI block (`<!-- ci-recipe -->`)
runs as written in a subshell with PARENT set to a second parent whose background unit the test
completes once the recipe is waiting (the recipe itself is tested for pass and fail in
tests/integration/test_watch.py).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from tests.support.cli_runner import backend_store_env, cli_env

pytestmark = pytest.mark.integration

README = Path(__file__).resolve().parents[2] / "README.md"
CI_MARK = "@@ readme-workflow: ci recipe starts"
GOALS = ["Run the unit tests", "Build the wheel"]


def workflow_blocks() -> list[tuple[bool, str]]:
    """(is the CI recipe, body) of every sh block of the workflow section, in order."""
    text = README.read_text(encoding="utf-8")
    section = re.search(r"^## Workflow\n(.*?)(?=^## )", text, re.S | re.M)
    assert section, "README.md has no '## Workflow' section"
    blocks = []
    for match in re.finditer(r"(<!-- ci-recipe -->\n)?```sh\n(.*?)```\n", section.group(1), re.S):
        blocks.append((match.group(1) is not None, match.group(2)))
    return blocks


def script(parent: str, watch_parent: str) -> str:
    parts = []
    for is_ci, body in workflow_blocks():
        if is_ci:
            parts.append(f"echo '{CI_MARK}' >&2\n(\nPARENT={watch_parent}\n{body})\n")
        else:
            parts.append(re.sub(r"^PARENT=\S+$", f"PARENT={parent}", body, flags=re.M))
    return "\n".join(parts)


def test_the_workflow_section_is_all_commands_the_test_runs() -> None:
    blocks = workflow_blocks()
    assert [is_ci for is_ci, _ in blocks].count(True) == 1, "the workflow needs its CI recipe block"
    text = "".join(body for _, body in blocks)
    for needed in (
        "PARENT=",
        "hermes-task parents",
        "hermes-task recover",
        "hermes-task show",
        "hermes-task follow",
        "--watch",
        "| jq",
    ):
        assert needed in text, needed
    assert re.search(r"^PARENT=\S+$", text, re.M), "the PARENT= line the test substitutes"


@pytest.mark.skipif(shutil.which("jq") is None, reason="jq is not installed")
def test_every_workflow_command_runs_against_the_real_backend(backend: Any, tmp_path: Path) -> None:
    manifest = backend.manifest
    assert manifest is not None
    unit = backend.watch_parent(GOALS)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    shim = bindir / "hermes-task"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m hermes_task "$@"\n', encoding="utf-8")
    shim.chmod(0o755)
    env = cli_env(backend.token, HERMES_DASHBOARD_URL=backend.url, **backend_store_env(backend))
    env["PATH"] = f"{bindir}{os.pathsep}{env.get('PATH', '')}"
    env.pop("GITHUB_STEP_SUMMARY", None)  # the recipe's report is tested in test_watch.py
    body = script(manifest["parent"], unit["parent"])
    proc = subprocess.Popen(
        ["bash", "-euo", "pipefail", "-xc", body],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env=env,
        cwd=tmp_path,  # a CI job's working directory: the recipe writes its JUnit file there
    )
    err_lines: list[str] = []
    completed = threading.Event()

    def read_stderr() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            err_lines.append(line)
            if line.startswith(CI_MARK) and not completed.is_set():
                time.sleep(2.0)  # the recipe is waiting for the unit now
                backend.complete_unit(unit, ["completed", "completed"])
                completed.set()

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    try:
        assert proc.stdout is not None
        out = proc.stdout.read()  # stderr is the reader thread's alone
        proc.wait(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        reader.join(timeout=30)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
    err = "".join(err_lines)
    assert proc.returncode == 0, f"exit {proc.returncode}\n--- stderr (bash -x) ---\n{err[-6000:]}"
    assert completed.is_set(), "the CI recipe never started"
    # bash -x traces each command it runs ("+ cmd", "++ cmd" inside $(...) or a subshell)
    traced = [
        re.sub(r"^\++ hermes-task ", "", line)
        for line in err.splitlines()
        if re.match(r"^\++ hermes-task ", line)
    ]
    written = [
        re.sub(r"^.*?hermes-task ", "", line.strip())
        for is_ci, block in workflow_blocks()
        if not is_ci
        for line in block.splitlines()
        if "hermes-task " in line and not line.lstrip().startswith("#")
    ]
    listing = "\n".join(["written:", *written, "traced:", *traced])
    assert len(traced) >= len(written) + 1, listing  # + the CI recipe's watch
    for kind in ("recover", "show", "older", "follow"):
        wanted = sum(1 for line in written if line.startswith(kind))
        assert sum(1 for line in traced if line.startswith(kind)) >= wanted, (kind, traced)
    assert any(line.startswith("recover") and "--watch" in line for line in traced), traced
    child = re.search(r"^\+ CHILD=(\S+)$", err, re.M)
    assert child, "the CHILD= line did not run"
    known = {manifest[k]["root"] for k in ("c1", "c2") if k in manifest} | {
        manifest[k]["id"] for k in ("long", "rich", "running") if k in manifest and "id" in manifest[k]
    }
    assert child.group(1) in known, child.group(1)
    assert "goal: " in out, out[-2000:]
    assert (tmp_path / "hermes-tasks.xml").is_file()
