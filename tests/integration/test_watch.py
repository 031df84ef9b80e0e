"""`recover --watch` against both real backends: a parent whose background unit completes a
few seconds after the watch started (its completion row written through the package's own
formatter, `python -m tests.support.seeding complete-unit`), the exit status by the parent's verdict, the
NDJSON stream ending in `result` also on SIGTERM, and the README's CI recipe run verbatim."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from tests.support.backends import legacy_stderr
from tests.support.cli_runner import backend_store_env, cli_env
from tests.support.junit import outcome, validate
from tests.support.markdown import details, inert, parse, tables

pytestmark = pytest.mark.integration

GOALS = ["Run the unit tests", "Build the wheel"]
README = Path(__file__).resolve().parents[2] / "README.md"


def start_watch(backend: Any, parent: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "hermes_task", "recover", parent, "--watch", *args, "--url", backend.url],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(backend.token),
    )


def first_line(proc: subprocess.Popen[str], *, skip: str = "") -> str:
    """The first stdout line (not starting with `skip`); the watch has read the parent."""
    assert proc.stdout is not None
    while True:
        line = proc.stdout.readline()
        assert line, proc.stderr.read() if proc.stderr else ""
        if not (skip and line.startswith(skip)):
            return line


def legacy_note(backend: Any) -> str:
    return legacy_stderr(backend.features)


WARNING = '{"type":"warning"'


def stop(proc: subprocess.Popen[str]) -> None:
    """Kill the watch if it still runs, and close its pipes."""
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()


def finish(proc: subprocess.Popen[str], timeout: float) -> tuple[str, str]:
    """Wait, then the rest of stdout and stderr (not `communicate()`: it reads the pipes'
    file descriptors and would lose what `readline()` already buffered). The output is a few
    lines, far below a pipe's buffer, so waiting first cannot block the child."""
    assert proc.stdout is not None
    assert proc.stderr is not None
    proc.wait(timeout=timeout)
    return proc.stdout.read(), proc.stderr.read()


@pytest.mark.parametrize(("statuses", "code", "verdict"), [(["completed", "completed"], 0, "completed"),
                                                            (["completed", "failed"], 8, "failed")])  # fmt: skip
def test_watch_waits_for_the_units_completion_and_exits_by_the_verdict(
    backend: Any, statuses: list[str], code: int, verdict: str
) -> None:
    unit = backend.watch_parent(GOALS)
    proc = start_watch(backend, unit["parent"], "--exit-status", "--json", "--timeout", "90")
    try:
        head = json.loads(first_line(proc, skip=WARNING))  # the watch has read the parent
        time.sleep(2.0)
        backend.complete_unit(unit, statuses)
        out, err = finish(proc, 60)
    finally:
        stop(proc)
    assert proc.returncode == code, err
    events = [head, *(json.loads(line) for line in out.splitlines())]
    warnings = [e for e in events if e["type"] == "warning"]
    assert [w["code"] for w in warnings] == []  # the legacy warning, if any, came before `head`
    assert [(e["type"], e.get("number"), e.get("status")) for e in events] == [
        ("task", "1.1", "running"), ("task", "1.2", "running"),
        ("task", "1.1", "completed"), ("task", "1.2", statuses[1]),
        ("result", None, None),
    ]  # fmt: skip
    assert events[-1] == {
        "type": "result",
        "state": "ended",
        "end_reason": verdict,
        "exit_code": code,
        "last_read_age": None,
        "unreported": [],
    }
    assert events[2]["summary"] == "Task 1 finished."
    assert (events[3]["error"] is None) is (code == 0)
    assert err == ""


def test_sigterm_mid_watch_still_ends_the_stream_with_result(backend: Any) -> None:
    unit = backend.watch_parent(GOALS)
    proc = start_watch(backend, unit["parent"], "--exit-status", "--json")
    try:
        head = json.loads(first_line(proc, skip=WARNING))
        assert head["type"] == "task"
        proc.send_signal(signal.SIGTERM)
        out, _err = finish(proc, 30)
    finally:
        stop(proc)
    assert proc.returncode == 143
    last = json.loads(out.splitlines()[-1])
    assert last == {
        "type": "result",
        "state": "unknown",
        "end_reason": None,
        "exit_code": 143,
        "last_read_age": None,
        "unreported": [],
    }


def test_piped_watch_appends_tab_separated_lines(backend: Any) -> None:
    unit = backend.watch_parent(GOALS)
    proc = start_watch(backend, unit["parent"], "--exit-status")
    try:
        first = first_line(proc)
        backend.complete_unit(unit, ["failed", "completed"])
        out, err = finish(proc, 60)
    finally:
        stop(proc)
    assert proc.returncode == 8
    lines = [first.rstrip("\n"), *out.splitlines()]
    assert [line.split("\t")[:2] for line in lines] == [
        ["1.1", "running"], ["1.2", "running"], ["1.1", "failed"], ["1.2", "completed"]
    ]  # fmt: skip
    assert {len(line.split("\t")) for line in lines} == {13}  # 9-13: the task's usage
    assert lines[2].split("\t")[7] == "Subagent did not produce a response."
    # No store file in this run's home: said once, as every command says it (issue 35).
    note, ending = err.splitlines(keepends=True)[:-1], err.splitlines(keepends=True)[-1]
    assert "".join(note).startswith(legacy_note(backend) + "warning: the local Hermes store was not used;")
    assert sum("store was not used" in line for line in note) == 1
    assert ending == "every task ended (failed) · 2 of 2 tasks terminal\n"


def recipe() -> str:
    """The README's CI recipe: the shell block under "A CI step"."""
    text = README.read_text(encoding="utf-8")
    found = re.search(r"<!-- ci-recipe -->\n```sh\n(.*?)```\n<!-- /ci-recipe -->", text, re.S)
    assert found, "README.md has no <!-- ci-recipe --> block"
    return found.group(1)


@pytest.mark.parametrize(
    ("statuses", "ok"), [(["completed", "completed"], True), (["completed", "failed"], False)]
)
def test_the_readme_ci_recipe_passes_and_fails_the_build(
    backend: Any, tmp_path: Path, statuses: list[str], ok: bool
) -> None:
    """Run as written, in a job's working directory, with GitHub's step summary file: the JUnit
    file is written either way, the Markdown report only on a failure."""
    unit = backend.watch_parent(GOALS)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    shim = bindir / "hermes-task"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m hermes_task "$@"\n', encoding="utf-8")
    shim.chmod(0o755)
    summary = tmp_path / "step-summary.md"
    env = cli_env(
        backend.token, HERMES_DASHBOARD_URL=backend.url, PARENT=unit["parent"], GITHUB_STEP_SUMMARY=str(summary),
        **backend_store_env(backend),
    )  # fmt: skip
    env["PATH"] = f"{bindir}{os.pathsep}{env.get('PATH', '')}"
    proc = subprocess.Popen(
        ["sh", "-c", recipe()],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    try:
        time.sleep(3.0)
        backend.complete_unit(unit, statuses)
        out, err = proc.communicate(timeout=90)
    finally:
        stop(proc)
    assert (proc.returncode == 0) is ok, err
    junit = validate((tmp_path / "hermes-tasks.xml").read_text(encoding="utf-8"))
    assert [(c.get("name"), outcome(c)) for c in junit.iter("testcase")] == [
        (f"1.1 {GOALS[0]}", "pass"), (f"1.2 {GOALS[1]}", "pass" if ok else "failure")
    ]  # fmt: skip
    if ok:
        assert not summary.exists()
        return
    assert proc.returncode == 8
    assert "1.2\tfailed" in out + err
    tokens = parse(summary.read_text(encoding="utf-8"))
    inert(tokens, blocks=frozenset({"heading", "blockquote"}))
    assert details(tokens) == [f"1.1 ✓ completed · {GOALS[0]}", f"1.2 ✗ failed · {GOALS[1]}"]
    (table,) = tables(tokens)
    assert [row[5] for row in table[1:]] == unit["children"]  # each child, whole, from the store


def test_follow_parent_follows_the_verdicts_and_lists_tasks_without_child_ids_once(backend: Any) -> None:
    """The real backends persist no child id: each task is listed once as unavailable, and
    the stream ends by the parent's verdicts (rows of children: tests/unit/test_family.py)."""
    unit = backend.watch_parent(GOALS)
    proc = subprocess.Popen(
        [sys.executable, "-m", "hermes_task", "follow", "--parent", unit["parent"], "--exit-status",
         "--url", backend.url],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cli_env(backend.token),
    )  # fmt: skip
    try:
        assert proc.stderr is not None
        seen = [proc.stderr.readline() for _ in range(3 if backend.features.order else 4)]
        backend.complete_unit(unit, ["completed", "failed"])
        out, err = finish(proc, 60)
    finally:
        stop(proc)
    assert proc.returncode == 8
    assert out == ""
    lines = [line.rstrip("\n") for line in seen] + err.splitlines()
    assert sum(1 for line in lines if line.startswith("1.1 │ rows unavailable")) == 1
    assert sum(1 for line in lines if line.startswith("1.2 │ rows unavailable")) == 1
    assert "1.2 │ ✗ failed · Subagent did not produce a response." in lines
    assert lines[-1] == "every task ended (failed) · 2 of 2 tasks terminal"


def test_follow_parent_prints_every_row_of_two_concurrently_written_children_once(backend: Any) -> None:
    """The children's ids come from the dashboard's local store (proven over HTTP); rows
    written to both children while the follow runs arrive once each, tagged with their task."""
    unit = backend.watch_parent(GOALS)
    first, second = unit["children"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "hermes_task", "follow", "--parent", unit["parent"], "--exit-status", "--json",
         "--url", backend.url],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=cli_env(backend.token, **backend_store_env(backend)),
    )  # fmt: skip
    try:
        time.sleep(3.0)
        for _ in range(2):
            backend.append_rows(first, 2)
            backend.append_rows(second, 2)
        backend.complete_unit(unit, ["completed", "completed"])
        out, err = finish(proc, 90)
    finally:
        stop(proc)
    assert proc.returncode == 0, err
    events = [json.loads(line) for line in out.splitlines()]
    assert events[-1]["type"] == "result"
    rows = [e for e in events if e["type"] == "row"]
    for number, child in (("1.1", first), ("1.2", second)):
        status, page = backend.get(f"/api/sessions/{child}/messages?limit=500&order=oldest")
        assert status == 200
        stored = page["messages"]
        assert len(stored) == 5  # the goal, then four appended rows
        task = {"number": number, "child_session_id": child}
        mine = [(r["session_id"], r["id"]) for r in rows if r["task"] == task]
        assert mine == [(m["session_id"], m["id"]) for m in stored]  # every row, once, in order
