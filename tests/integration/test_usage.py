"""Usage and cost per task against the four real backends (issue 28 items 1 and 5). The seed
gives c1's three segments (rotated twice), c2's two and `long`'s one their own figures through
Hermes' own `SessionDB.update_token_counts(..., absolute=True)` (tests/support/seeding/usage.py);
`recover --json` must sum each task over its proven segments to exactly those figures, from the
session details the dashboard serves, and say what it cannot know (`complete: false`)."""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.support.cli_runner import backend_store_env, cli_env, hermes_task

pytestmark = pytest.mark.integration

COUNTS = {
    "input_tokens": "input_tokens",
    "output_tokens": "output_tokens",
    "cache_read_tokens": "cache_read_tokens",
    "cache_write_tokens": "cache_write_tokens",
    "reasoning_tokens": "reasoning_tokens",
    "api_calls": "api_call_count",
}


def summed(backend: Any, *segments: str) -> dict[str, Any]:
    """The figures the seed wrote on `segments`, summed as `usage` reports them."""
    written = [backend.manifest["usage"][sid] for sid in segments]
    return {key: sum(w[name] for w in written) for key, name in COUNTS.items()}


def counts(usage: dict[str, Any]) -> dict[str, Any]:
    return {key: usage[key] for key in COUNTS}


def test_recover_sums_each_task_over_its_proven_segments(backend: Any) -> None:
    m = backend.manifest
    run = hermes_task(backend, "recover", m["parent"], "--json")
    assert run.code == 0, run.stderr
    doc = run.json()
    tasks = {t["child_session_id"]: t for t in doc["tasks"]}
    c1, c2, long = m["c1"], m["c2"], m["long"]
    # c1: rotated twice, every segment estimated -> the three segments' figures, complete
    one = tasks[c1["root"]]["usage"]
    assert counts(one) == summed(backend, c1["root"], c1["mid"], c1["tip"])
    assert (one["segments"], one["complete"], one["missing"], one["cost_kind"]) == (3, True, [], "estimated")
    assert one["cost_usd"] == pytest.approx(0.0125 + 0.021 + 0.0066, abs=1e-9)
    # c2: an actual cost on both of its segments
    two = tasks[c2["root"]]["usage"]
    assert counts(two) == summed(backend, c2["root"], c2["tip"])
    assert (two["segments"], two["complete"], two["cost_kind"]) == (2, True, "actual")
    assert two["cost_usd"] == pytest.approx(0.0093 + 0.0061, abs=1e-9)
    # long: Hermes could not price it (cost_status unknown): its tokens, no cost, not complete
    priced = tasks[long["id"]]["usage"]
    assert counts(priced) == summed(backend, long["id"])
    assert (priced["cost_usd"], priced["cost_kind"], priced["complete"], priced["missing"]) == (
        None, None, False, ["cost"]
    )  # fmt: skip
    # the result's own tokens stay as the parent was told them
    assert tasks[long["id"]]["tokens"] == {"input": 1200, "output": 90}
    # the summary: every task's usage; the seeded tasks without figures have no cost
    total = doc["summary"]["usage"]
    assert total["segments"] == sum(t["usage"]["segments"] for t in doc["tasks"])
    assert total["input_tokens"] == sum(t["usage"]["input_tokens"] for t in doc["tasks"])
    assert (total["complete"], total["missing"]) == (False, ["cost"])
    assert math.isclose(total["cost_usd"], one["cost_usd"] + two["cost_usd"], abs_tol=1e-9)


def test_show_and_the_piped_line_carry_the_same_sum(backend: Any) -> None:
    m = backend.manifest
    c1 = m["c1"]
    shown = hermes_task(backend, "show", c1["root"], "--json")
    assert shown.code == 0, shown.stderr
    task = shown.json()["task"]
    assert task["lineage"] == [c1["root"], c1["mid"], c1["tip"]]
    assert counts(task["usage"]) == summed(backend, c1["root"], c1["mid"], c1["tip"])
    assert task["usage"]["complete"] is True
    piped = hermes_task(backend, "recover", m["parent"], "--header")
    assert piped.code == 0, piped.stderr
    lines = [line.split("\t") for line in piped.stdout.splitlines()]
    assert lines[0][8:] == ["input_tokens", "output_tokens", "cost_usd", "cost_kind", "usage_complete"]
    (row,) = [line for line in lines[1:] if line[4] == c1["root"]]
    want = summed(backend, c1["root"], c1["mid"], c1["tip"])
    assert row[8:10] == [str(want["input_tokens"]), str(want["output_tokens"])]
    assert math.isclose(float(row[10]), 0.0401, abs_tol=1e-9)
    assert row[11:] == ["estimated", "true"]


README = Path(__file__).resolve().parents[2] / "README.md"


def readme_recipe() -> str:
    """The README's cost-per-task recipe: the workflow's `recover … | jq` line that reads `usage`."""
    (line,) = [
        line
        for line in README.read_text().splitlines()
        if line.startswith("hermes-task recover") and ".usage." in line
    ]
    return line


@pytest.mark.skipif(shutil.which("jq") is None, reason="jq is not installed")
def test_the_readmes_cost_per_task_recipe(backend: Any, tmp_path: Path) -> None:
    m = backend.manifest
    bindir = tmp_path / "bin"
    bindir.mkdir()
    shim = bindir / "hermes-task"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m hermes_task "$@" --url "{backend.url}"\n')
    shim.chmod(0o755)
    env = cli_env(backend.token, **backend_store_env(backend))
    env["PATH"] = f"{bindir}{os.pathsep}{env.get('PATH', os.defpath)}"
    env["PARENT"] = m["parent"]
    proc = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", readme_recipe()],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    rows = {line.split("\t")[0]: line.split("\t") for line in proc.stdout.splitlines()}
    by_child = {
        t["child"]: n for t, n in zip(m["expected_tasks"], ["1.1", "1.2", "2.1", "2.2", "3.1"], strict=True)
    }
    c1 = rows[by_child[m["c1"]["root"]]]
    assert math.isclose(float(c1[1]), 0.0401, abs_tol=1e-9)
    assert c1[2:] == ["estimated", "complete", m["c1"]["goal"]]
    assert rows[by_child[m["c2"]["root"]]][2:4] == ["actual", "complete"]
    assert rows[by_child[m["long"]["id"]]][1:4] == ["?", "-", "not complete"]
