"""The reports against every real backend: `recover --format markdown` of the seeded parent
(every task with its child id, whole, and its transcript in a collapsible block, the hostile
bytes of the `rich` child shown inert); `recover --watch --exit-status --junit FILE` on a
parent whose background unit completes with one failed task: exit 8, one failure (with its
child's last rows) and one passing testcase, while a second watch of it stopped by SIGTERM
still writes its file whole (exit 143, each task an error); then that parent's report, its
hostile Markdown goal kept text."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from tests.support.cli_runner import backend_store_env, cli_env, hermes_task
from tests.support.junit import outcome, validate
from tests.support.markdown import detail_blocks, details, fences, inert, paragraphs_text, parse, tables

from hermes_task.core.sanitize import clean

pytestmark = pytest.mark.integration

BLOCKS = frozenset({"heading", "blockquote"})
# Under the table's 100 characters.
HOSTILE_GOAL = (
    "Audit <b>x</b> [d](http://e.example) ![i](http://e.example/i.png) | `t` **b** @octocat www.e.org"
)
MENTION = re.compile(r"@(?=[0-9A-Za-z])")


def watch(backend: Any, parent: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "hermes_task", "recover", parent, "--watch", *args, "--url", backend.url],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=cli_env(backend.token, **backend_store_env(backend)),
    )  # fmt: skip


def finish(proc: subprocess.Popen[str]) -> str:
    """Stop `proc` if it still runs; its stderr."""
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    stderr = proc.stderr.read() if proc.stderr else ""
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()
    return stderr


def markdown(backend: Any, parent: str) -> Any:
    run = hermes_task(backend, "recover", parent, "--format", "markdown", "--utc")
    assert run.code == 0, run.stderr
    assert "\x1b" not in run.stdout
    tokens = parse(run.stdout)
    inert(tokens, blocks=BLOCKS)
    return tokens


def test_the_markdown_report_of_the_seeded_parent(backend: Any) -> None:
    manifest = backend.manifest
    told = hermes_task(backend, "recover", manifest["parent"], "--json").json()["tasks"]
    children = [e["child"] for e in manifest["expected_tasks"]]
    assert [t["child_session_id"] for t in told] == children
    tokens = markdown(backend, manifest["parent"])
    (table,) = tables(tokens)
    assert [row[0] for row in table[1:]] == [t["number"] for t in told]
    assert [row[5] for row in table[1:]] == children  # every child id, whole
    assert [line.split(" ", 1)[0] for line in details(tokens)] == [t["number"] for t in told]
    blocks = detail_blocks(tokens)
    assert len(blocks) == len(told)
    for child, block in zip(children, blocks, strict=True):
        facts = [p for p in paragraphs_text(block) if p.startswith("Transcript: ")]
        assert len(facts) == 1
        assert facts[0].startswith(f"Transcript: task {child} · "), facts
    c1 = manifest["c1"]
    c1_block = blocks[children.index(c1["root"])]
    (c1_facts,) = [p for p in paragraphs_text(c1_block) if p.startswith("Transcript: ")]
    assert f" · 3 segments, tip {c1['tip']} · " in c1_facts  # followed through its rotations
    assert fences(c1_block)  # its tool output, fenced
    rich = blocks[children.index(manifest["rich"]["id"])]
    assert clean(manifest["rich"]["hostile_text"]) in paragraphs_text(rich)  # its escapes shown, inert


def test_a_watched_parent_with_one_failed_task_its_junit_file_and_its_report(
    backend: Any, tmp_path: Path
) -> None:
    """One parent for both (seeding one costs seconds): its first goal is hostile Markdown."""
    unit = backend.watch_parent([HOSTILE_GOAL, "Build the wheel"])
    out = tmp_path / "out.xml"
    stopped = tmp_path / "stopped" / "out.xml"  # a second watch, stopped by SIGTERM
    stopped.parent.mkdir()
    proc, other = (watch(backend, unit["parent"], "--exit-status", "--junit", str(f)) for f in (out, stopped))
    try:
        for running in (proc, other):
            assert running.stdout is not None
            assert running.stdout.readline()  # the watch has read the parent
        other.send_signal(signal.SIGTERM)
        other.wait(timeout=60)
        time.sleep(0.5)
        backend.complete_unit(unit, ["completed", "failed"])
        proc.wait(timeout=60)
    finally:
        other_err, stderr = finish(other), finish(proc)
    assert other.returncode == 143, other_err
    assert sorted(p.name for p in stopped.parent.iterdir()) == ["out.xml"]  # no temporary file left
    cases = validate(stopped.read_text(encoding="utf-8")).findall("testsuite/testcase")
    assert [(c.get("classname"), outcome(c)) for c in cases] == [(unit["parent"], "error")] * 2
    for case in cases:
        error = case.find("error")
        assert error is not None
        assert error.get("message") == "still running when the watch was stopped (SIGTERM)"
    assert proc.returncode == 8, stderr
    root = validate(out.read_text(encoding="utf-8"))
    assert [s.get("name") for s in root.findall("testsuite")] == [unit["parent"]]
    cases = root.findall("testsuite/testcase")
    assert [(c.get("name"), c.get("classname"), outcome(c)) for c in cases] == [
        (f"1.1 {HOSTILE_GOAL}", unit["parent"], "pass"),
        ("1.2 Build the wheel", unit["parent"], "failure"),
    ]
    failure = cases[1].find("failure")
    assert failure is not None
    assert (failure.get("type"), failure.get("message")) == ("failed", "Subagent did not produce a response.")
    rows = cases[1].findtext("system-out") or ""
    assert rows.startswith(f"the last 1 of 1 rows read of child session {unit['children'][1]}:\n\n▌ user  #")
    assert "Build the wheel" in rows
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.xml", "stopped"]

    tokens = markdown(backend, unit["parent"])
    (table,) = tables(tokens)
    shown = MENTION.sub("@\u2060", HOSTILE_GOAL)
    assert len(HOSTILE_GOAL) < 100
    assert [row[4].strip() for row in table[1:]] == [shown, "Build the wheel"]
    assert [row[5] for row in table[1:]] == unit["children"]
    assert details(tokens) == [f"1.1 ✓ completed · {shown}", "1.2 ✗ failed · Build the wheel"]
    first = detail_blocks(tokens)[0]
    assert paragraphs_text(first)[1] == shown  # the goal as the parent gave it
    assert paragraphs_text(first)[-1] == shown  # the child's first (and only) row
