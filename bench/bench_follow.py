"""Idle `follow`: the CPU share of `hermes-task follow RUNNING --interval 2` over 60 s.

The follow runs as a subprocess against a real backend (through tools/fault_proxy.py in
pass-through mode, which only counts its requests) on a task that stays running with no new
rows. After a 5 s warm-up, utime+stime are read from /proc/<pid>/stat at the start and the
end of the window; the share is CPU seconds over wall seconds (of one core).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass
from typing import Any

from common import HERMES_TASK, clean_env
from fault_proxy import FaultProxy

TARGET_SHARE = 0.02


@dataclass(frozen=True)
class FollowResult:
    backend: str
    version: str
    window: float
    cpu: float
    requests: int
    rss_kib: int

    @property
    def share(self) -> float:
        return self.cpu / self.window


def _cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


def _rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def measure(backend: Any, seconds: float = 60.0, warmup: float = 5.0) -> FollowResult:
    running = backend.manifest["running"]["id"]
    env = clean_env(HERMES_DASHBOARD_TOKEN=backend.token)
    with FaultProxy(backend.url) as proxy:
        cmd = [str(HERMES_TASK), "follow", running, "--interval", "2", "--url", proxy.url]
        with subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env) as proc:
            try:
                time.sleep(warmup)
                if proc.poll() is not None:
                    raise RuntimeError(f"follow exited early with {proc.returncode}")
                before_requests = len(proxy.requests())
                cpu0, wall0 = _cpu_seconds(proc.pid), time.monotonic()
                time.sleep(seconds)
                cpu1, wall1 = _cpu_seconds(proc.pid), time.monotonic()
                rss = _rss_kib(proc.pid)
                requests = len(proxy.requests()) - before_requests
            finally:
                proc.send_signal(signal.SIGINT)
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
    return FollowResult(backend.name, backend.version, wall1 - wall0, cpu1 - cpu0, requests, rss)


def markdown(results: list[FollowResult]) -> list[str]:
    out = [
        "## Idle `follow`",
        "",
        f"Target < {TARGET_SHARE:.0%} of a core. `hermes-task follow RUNNING --interval 2` on a task that "
        "stays running with no new rows; CPU (utime+stime from /proc) over a 60 s window after a 5 s warm-up.",
        "",
        "| backend | window | CPU time | CPU share | requests in the window | RSS | verdict |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        verdict = "within target" if r.share < TARGET_SHARE else "**over target**"
        out.append(
            f"| {r.backend} {r.version} | {r.window:.1f} s | {r.cpu:.2f} s | **{r.share:.2%}** | "
            f"{r.requests} | {r.rss_kib / 1024:.0f} MiB | {verdict} |"
        )
    return out
