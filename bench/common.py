"""Shared pieces of the benchmarks: paths, timed subprocess runs, statistics, real backends.

Every figure is either a ratio measured side by side in one run (A and B alternate, in
ABBA order, so drift and caches hit both alike) or a median of several runs given with its
minimum and maximum. Nothing here asserts a time: the numbers go into docs/benchmarks.md.
"""

from __future__ import annotations

import os
import platform
import secrets
import statistics
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support import harness

REPO = Path(__file__).resolve().parent.parent
PYTHON = REPO / ".venv" / "bin" / "python"
HERMES_TASK = REPO / ".venv" / "bin" / "hermes-task"


@dataclass(frozen=True)
class Stats:
    """Seconds (or any unit) of repeated runs."""

    values: tuple[float, ...]

    @property
    def median(self) -> float:
        return statistics.median(self.values)

    @property
    def low(self) -> float:
        return min(self.values)

    @property
    def high(self) -> float:
        return max(self.values)

    def ms(self) -> str:
        """`median ms (min–max, n runs)`."""
        return f"{self.median * 1000:.0f} ms ({self.low * 1000:.0f}–{self.high * 1000:.0f}, n={len(self.values)})"


def clean_env(**extra: str) -> dict[str, str]:
    """The caller's environment without anything that steers hermes-task, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "FORCE_COLOR", "NO_COLOR"))}
    env.update({"NO_COLOR": "1", "COLUMNS": "100", "XDG_CONFIG_HOME": "/nonexistent"})
    env.update(extra)
    return env


def timed(cmd: Sequence[str], env: dict[str, str], *, expect: int = 0) -> float:
    """Wall seconds of one run (output discarded); a wrong exit status is an error."""
    started = time.perf_counter()
    proc = subprocess.run(list(cmd), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, check=False)
    elapsed = time.perf_counter() - started
    if proc.returncode != expect:
        raise RuntimeError(
            f"{cmd[0]} exited {proc.returncode}: {proc.stderr.decode(errors='replace')[-500:]}"
        )
    return elapsed


def interleaved(
    commands: Mapping[str, Sequence[str]], env: dict[str, str], runs: int, warmup: int = 2
) -> dict[str, Stats]:
    """Run every command `runs` times, alternating between them (ABBA...), after `warmup`
    untimed rounds; returns the timings per name."""
    names = list(commands)
    for _ in range(warmup):
        for name in names:
            timed(commands[name], env)
    times: dict[str, list[float]] = {name: [] for name in names}
    for i in range(runs):
        order = names if i % 2 == 0 else names[::-1]
        for name in order:
            times[name].append(timed(commands[name], env))
    return {name: Stats(tuple(values)) for name, values in times.items()}


def machine() -> dict[str, str]:
    """What the figures were measured on."""
    cpu = platform.processor() or "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    commit = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "-C", str(REPO), "status", "--porcelain", "src"], capture_output=True, text=True, check=False
    ).stdout.strip()
    return {
        "python": platform.python_version(),
        "cpu": f"{cpu}, {os.cpu_count()} cores",
        "os": f"{platform.system()} {platform.release()}",
        "commit": f"{commit}{' + uncommitted changes in src/' if dirty else ''}",
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }


@contextmanager
def backends(names: Sequence[str]) -> Iterator[dict[str, Any]]:
    """Seeded real backends on 127.0.0.1 (tests/support/harness/), stopped on exit."""
    started: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="hermes-task-bench-") as scratch:
        try:
            for name in names:
                home = Path(scratch) / name
                harness.ensure_venv(name)
                harness.seed(name, home)
                started[name] = harness.start(name, home, secrets.token_urlsafe(32))
            yield started
        finally:
            for server in started.values():
                server.stop()
