"""The local store's share of `show`'s time (issue 13; target: at most 5 ms per run).

    .venv/bin/python -m bench.bench_store [--runs N] [--write]

`show ROOT --no-hint --json` of the seeded twice-rotated delegated task (c1) with the
backend's own store: the store proposes both newer segments, HTTP proves them. The store's
time is what the CLI's own `--debug` lines report for it (opening the file, and each query),
summed per run; the run's time is its wall time. Medians over `runs` runs on both backends.
`--write` replaces the `<!-- store -->` block of docs/benchmarks.md (run.py adds the same
block when it regenerates the whole file).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.common import HERMES_TASK, REPO, backends, clean_env

TARGET_MS = 5.0
STORE_LINE = re.compile(r"^debug: store .*?(?:opened read-only|rows) in ([0-9.]+) ms$")
MARK = re.compile(r"<!-- store -->\n.*?<!-- /store -->\n", re.S)


@dataclass(frozen=True)
class StoreResult:
    backend: str
    version: str
    queries: int
    store_ms: tuple[float, ...]
    total_ms: tuple[float, ...]

    @property
    def store(self) -> float:
        return statistics.median(self.store_ms)

    @property
    def total(self) -> float:
        return statistics.median(self.total_ms)


def measure(backend: Any, runs: int) -> StoreResult:
    c1 = backend.manifest["c1"]
    store = Path(backend.home) / "hermes" / "state.db"
    cmd = [str(HERMES_TASK), "show", c1["root"], "--no-hint", "--json", "--debug", "--store", str(store)]
    cmd += ["--url", backend.url]
    env = clean_env(HERMES_DASHBOARD_TOKEN=backend.token)
    stores: list[float] = []
    totals: list[float] = []
    queries = 0
    for i in range(runs + 2):
        started = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
        elapsed = (time.perf_counter() - started) * 1000
        spent = [float(m.group(1)) for line in proc.stderr.splitlines() if (m := STORE_LINE.match(line))]
        if c1["tip"] not in proc.stdout or not spent:
            raise RuntimeError(f"show did not reach the tip through the store on {backend.name}")
        if i >= 2:  # two warm-up runs
            stores.append(sum(spent))
            totals.append(elapsed)
            queries = len(spent) - 1
    return StoreResult(backend.name, backend.version, queries, tuple(stores), tuple(totals))


def markdown(results: list[StoreResult]) -> list[str]:
    out = [
        "<!-- store -->",
        "## Store lookups in `show`",
        "",
        "`show ROOT --no-hint --json` of the seeded twice-rotated delegated task, the newer segments "
        "proposed by the backend's own local store and proven over HTTP (`bench/bench_store.py`). "
        "Store time: opening the store plus every query, as the CLI's `--debug` lines report them. "
        "The `import sqlite3` starts on a background thread when the store is made (it overlaps the "
        "first HTTP reads); whatever is left of it when the first lookup opens the store is counted. "
        f"Medians of {len(results[0].store_ms) if results else 0} runs. Target: at most {TARGET_MS:.0f} ms. "
        f"Load average when measured: {os.getloadavg()[0]:.1f} (2 cores).",
        "",
        "| backend | queries | store (median, min–max) | `show` wall time (median) | share |",
        "|---|---|---|---|---|",
    ]
    for r in results:
        out.append(
            f"| {r.backend} {r.version} | {r.queries} | {r.store:.2f} ms ({min(r.store_ms):.2f}–{max(r.store_ms):.2f}) "
            f"| {r.total:.0f} ms | {100 * r.store / r.total:.1f} % |"
        )
    return [*out, "<!-- /store -->", ""]


def write(lines: list[str]) -> None:
    doc = REPO / "docs" / "benchmarks.md"
    text = doc.read_text()
    block = "\n".join(lines)
    text = MARK.sub(lambda _: block, text) if MARK.search(text) else text.rstrip() + "\n\n" + block
    doc.write_text(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--write", action="store_true", help="update docs/benchmarks.md")
    args = parser.parse_args(argv)
    with backends(["official", "iot"]) as servers:
        results = [measure(servers[name], args.runs) for name in ("official", "iot")]
    lines = markdown(results)
    print("\n".join(lines))
    if args.write:
        write(lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
