"""Idle `follow` and idle `recover --watch`: the CPU share of each over 60 s.

`follow RUNNING --interval 2` follows a task that stays running with no new rows;
`recover PARENT --watch` watches the seeded parent, whose last task stays running (so the
watch never ends) and whose transcript gets no new rows. Each runs as a subprocess against a real backend (through tests/support/fault_proxy.py in
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

from tests.support.fault_proxy import FaultProxy

from bench.common import HERMES_TASK, clean_env

TARGET_SHARE = 0.02


@dataclass(frozen=True)
class FollowResult:
    command: str
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


COMMANDS = {
    "follow": lambda manifest: ["follow", manifest["running"]["id"], "--interval", "2"],
    "recover --watch": lambda manifest: ["recover", manifest["parent"], "--watch"],
}


def measure(
    backend: Any, seconds: float = 60.0, warmup: float = 5.0, command: str = "follow"
) -> FollowResult:
    env = clean_env(HERMES_DASHBOARD_TOKEN=backend.token)
    with FaultProxy(backend.url) as proxy:
        cmd = [str(HERMES_TASK), *COMMANDS[command](backend.manifest), "--url", proxy.url]
        with subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env) as proc:
            try:
                time.sleep(warmup)
                if proc.poll() is not None:
                    raise RuntimeError(f"{command} exited early with {proc.returncode}")
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
    return FollowResult(command, backend.name, backend.version, wall1 - wall0, cpu1 - cpu0, requests, rss)


WHAT = {
    "follow": "`hermes-task follow RUNNING --interval 2` on a task that stays running with no new rows",
    "recover --watch": "`hermes-task recover PARENT --watch` (piped) on the seeded parent, whose last "
    "task stays running and whose transcript gets no new rows",
}


def markdown(results: list[FollowResult]) -> list[str]:
    command = results[0].command if results else "follow"
    out = [
        f"## Idle `{command}`",
        "",
        f"Target < {TARGET_SHARE:.0%} of a core. {WHAT[command]}; CPU (utime+stime from /proc) over a "
        f"{results[0].window if results else 60:.0f} s window after a 5 s warm-up.",
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


def main() -> int:
    """`python -m bench.bench_follow [follow|watch] [SECONDS]`: measure on both backends, print Markdown."""
    import sys

    from bench.common import backends

    command = "recover --watch" if sys.argv[1:2] == ["watch"] else "follow"
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 60.0
    with backends(["official", "iot"]) as servers:
        results = [measure(servers[name], seconds, command=command) for name in ("official", "iot")]
    print("\n".join(markdown(results)))
    return 0 if all(r.share < TARGET_SHARE for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
