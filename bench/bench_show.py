"""`show --json` against the minimal httpx script: same GETs, same interpreter, same backend.

The requests hermes-task makes are counted from its `--debug` start lines and recorded,
path and query, by tests/support/fault_proxy.py in pass-through mode; bench/minimal_show.py then
replays exactly those. Both commands alternate (ABBA) against the real backend.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from typing import Any

from tests.support.fault_proxy import FaultProxy

from bench.common import HERMES_TASK, PYTHON, REPO, Stats, clean_env, interleaved

MINIMAL = REPO / "bench" / "minimal_show.py"
TARGET_RATIO = 1.3  # issue 27: typer parses every show (issue 18 had 1.2 with a second parser)
LIMIT_RATIO = 1.5


@dataclass(frozen=True)
class ShowResult:
    backend: str
    version: str
    requests: tuple[str, ...]
    debug_starts: int
    rows: int
    tool: Stats
    minimal: Stats

    @property
    def ratio(self) -> float:
        return self.tool.median / self.minimal.median

    @property
    def pair_ratios(self) -> Stats:
        return Stats(tuple(a / b for a, b in zip(self.tool.values, self.minimal.values, strict=True)))


def show_args(backend: Any) -> list[str]:
    c1 = backend.manifest["c1"]
    return ["show", c1["root"], "--tip", c1["tip"], "--json"]


def recorded_requests(backend: Any) -> tuple[list[str], int, int]:
    """(`METHOD target` of every request, number of `--debug` start lines, rows shown)."""
    env = clean_env(HERMES_DASHBOARD_TOKEN=backend.token)
    with FaultProxy(backend.url) as proxy:
        proc = subprocess.run(
            [str(HERMES_TASK), *show_args(backend), "--debug", "--url", proxy.url],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        requests = proxy.requests()
    starts = sum(1 for line in proc.stderr.splitlines() if line.startswith("debug: start "))
    return requests, starts, len(json.loads(proc.stdout)["rows"])


def measure(backend: Any, runs: int = 15) -> ShowResult:
    requests, starts, rows = recorded_requests(backend)
    if starts != len(requests) or not all(r.startswith("GET ") for r in requests):
        raise RuntimeError(f"--debug counted {starts} requests, the proxy saw {requests}")
    targets = [r.split(" ", 1)[1] for r in requests]
    env = clean_env(HERMES_DASHBOARD_TOKEN=backend.token)
    stats = interleaved(
        {
            "tool": [str(HERMES_TASK), *show_args(backend), "--url", backend.url],
            "minimal": [str(PYTHON), str(MINIMAL), backend.url, *targets],
        },
        env,
        runs,
    )
    return ShowResult(
        backend.name, backend.version, tuple(requests), starts, rows, stats["tool"], stats["minimal"]
    )


def markdown(results: list[ShowResult]) -> list[str]:
    out = [
        "## `show --json` against a minimal httpx script",
        "",
        f"Target ≤ {TARGET_RATIO}×, limit ≤ {LIMIT_RATIO}×. `hermes-task show C1_ROOT --tip C1_TIP --json` (the "
        "rotated three-segment task) as a subprocess, against `bench/minimal_show.py` making the same GETs "
        "with the same interpreter; the two alternate (ABBA) in one run, after two untimed warm-up rounds.",
        "",
        "| backend | GETs | hermes-task | minimal httpx | ratio of medians | per-pair ratio (median, min–max) | verdict |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        pairs = r.pair_ratios
        verdict = (
            "within target"
            if r.ratio <= TARGET_RATIO
            else ("within limit" if r.ratio <= LIMIT_RATIO else "**over the limit**")
        )
        out.append(
            f"| {r.backend} {r.version} | {len(r.requests)} | {r.tool.ms()} | {r.minimal.ms()} | "
            f"**{r.ratio:.2f}×** | {pairs.median:.2f}× ({pairs.low:.2f}–{pairs.high:.2f}) | {verdict} |"
        )
    out += [
        "",
        "The requests (counted from `--debug`, recorded by the proxy; the minimal script replays them):",
        "",
    ]
    for r in results:
        out.append(f"- {r.backend}: {r.debug_starts} `--debug` start lines, {r.rows} rows shown")
        out += [f"  - `{req}`" for req in r.requests]
    return out
