"""Big orchestrations (issue 29) on real backends: `recover` of 10/100/500 tasks, `--recursive`
trees, watch cycles with a changing parent, `follow --parent` latency at 20/50 running children
and the drain time of a finished parent.

    .venv/bin/python -m bench.bench_scale [--backends official,iot] [--quick] [--markdown] [--cpu]

Each backend is started seeded (tests/support/harness/) and given the scale scenarios through
Hermes' own `SessionDB` (`Backend.fan_out`, tests/support/seeding/fanout.py): a parent whose
`delegate_task` call dispatched N goals in one background unit, its children in the local
store (so `recover` proposes and proves them), running, finished or nested one level. Requests
are counted from `--debug` lines (`debug: start`), the most in flight from the `fan-out` lines.
Figures are medians of several runs (min-max); the recover sizes alternate run by run, so load
drift hits them alike. Latency is measured from the commit of a row (a `SessionDB` writer
process prints `time.time()` after each commit) to the moment the row's event is read from
`follow --parent --json`'s stdout. Where `recover` of 500 tasks spends its time (`--cpu` measures
only that; the full run includes it): wall, the client's CPU (the child's rusage) and the
server's (/proc/PID/stat of the backend's process group, before and after each run) at 1, 4, 8
and 16 reads in flight (bench/limited_cli.py monkeypatches the limit in the benchmark's own
process: users get no option for it), a cProfile of the client at 1 in flight, and the CPU the
backend spends opening a `SessionDB` (it opens one per request). Nothing here asserts a time: the figures and verdicts go to
docs/benchmarks.md (`python -m bench.run --only scale`).
"""

from __future__ import annotations

import argparse
import json
import os
import pstats
import random
import re
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.common import HERMES_TASK, PYTHON, Stats, backends, clean_env

RECOVER_SIZES = (10, 100, 500)
TREES = ((5, 4), (10, 4), (20, 5), (25, 20))
FOLLOW_SIZES = (20, 50)
DRAIN_SIZES = (10, 100, 500)
TARGET_RECOVER_500 = 1.5  # seconds, or...
TARGET_RECOVER_GROWTH = 5.5  # ...at most this times the 100-task run
TARGET_P95 = 5.0
TARGET_DRAIN_100 = 10.0
START = re.compile(r"^debug: start ", re.MULTILINE)
PEAK = re.compile(r"(\d+) in flight at most")


def say(line: str) -> None:
    """Progress, on stderr (stdout is the Markdown section)."""
    print(line, file=sys.stderr, flush=True)


def goals(n: int, label: str = "shard") -> list[str]:
    return [f"Check {label} {i:03d} of the suite" for i in range(n)]


def env_for(backend: Any) -> dict[str, str]:
    """The CLI's environment: the backend's token, and its home (the local store is found)."""
    return clean_env(HERMES_DASHBOARD_TOKEN=backend.token, HERMES_HOME=str(backend.home / "hermes"))


def cli(backend: Any, *args: str) -> list[str]:
    return [str(HERMES_TASK), *args, "--url", backend.url]


def run(cmd: list[str], env: dict[str, str], expect: tuple[int, ...] = (0,)) -> tuple[float, str, str]:
    started = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    elapsed = time.perf_counter() - started
    if proc.returncode not in expect:
        raise RuntimeError(f"{' '.join(cmd[1:3])} exited {proc.returncode}: {proc.stderr[-800:]}")
    return elapsed, proc.stdout, proc.stderr


def tasks_in(doc: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    stack = list(doc["tasks"])
    while stack:
        task = stack.pop()
        out.append(task)
        stack += task.get("children") or []
    return out


# -- recover ------------------------------------------------------------------------------------


@dataclass
class RecoverResult:
    size: int
    wall: Stats
    requests: int
    peak: int
    found: int


def measure_recover(backend: Any, parents: dict[int, str], runs: int) -> list[RecoverResult]:
    env = env_for(backend)
    times: dict[int, list[float]] = {n: [] for n in parents}
    for parent in parents.values():  # warm-up
        run(cli(backend, "recover", parent, "--json"), env)
    counted = {
        n: run(cli(backend, "recover", parent, "--json", "--debug"), env) for n, parent in parents.items()
    }
    for i in range(runs):
        order = list(parents) if i % 2 == 0 else list(parents)[::-1]
        for n in order:
            times[n].append(run(cli(backend, "recover", parents[n], "--json"), env)[0])
    out = []
    for n, (_, stdout, stderr) in counted.items():
        found = sum(1 for t in json.loads(stdout)["tasks"] if t["child_session_id"])
        peaks = [int(p) for p in PEAK.findall(stderr)]
        out.append(
            RecoverResult(n, Stats(tuple(times[n])), len(START.findall(stderr)), max(peaks, default=1), found)
        )
    return out


@dataclass
class TreeResult:
    shape: tuple[int, int]
    wall: Stats
    requests: int
    listed: int
    bound: bool


def measure_trees(backend: Any, parents: dict[tuple[int, int], str], runs: int) -> list[TreeResult]:
    env = env_for(backend)
    out = []
    for shape, parent in parents.items():
        _, stdout, stderr = run(cli(backend, "recover", parent, "--recursive", "--json", "--debug"), env)
        doc = json.loads(stdout)
        walls = [run(cli(backend, "recover", parent, "--recursive", "--json"), env)[0] for _ in range(runs)]
        bound = any(w["code"] == "bound_reached" for w in doc["warnings"])
        out.append(
            TreeResult(shape, Stats(tuple(walls)), len(START.findall(stderr)), len(tasks_in(doc)), bound)
        )
    return out


# -- recover --watch with a changing parent -----------------------------------------------------


@dataclass
class WatchResult:
    size: int
    first_requests: int
    first_seconds: float
    cycles: list[tuple[int, float]] = field(default_factory=list)  # (requests, seconds) after the first
    rows: int = 0


def measure_watch(backend: Any, parent: str, size: int, window: float, writer: Any) -> WatchResult:
    """`recover P --watch` on `size` running tasks; a parent row is appended every 4 s."""
    env = env_for(backend)
    cmd = cli(backend, "recover", parent, "--watch", "--json", "--debug", "--timeout", f"{window:.0f}")
    started = time.perf_counter()
    with subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env) as proc:
        assert proc.stderr is not None
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.extend(proc.stderr or []), daemon=True)
        reader.start()
        rows = 0
        while proc.poll() is None and time.perf_counter() - started < window - 4:
            time.sleep(4)
            if any("watch wait" in line for line in lines):  # the first cycle (the history) is done
                writer.stdin.write(f"{parent} Still waiting for the shards ({rows}).\n")
                writer.stdin.flush()
                writer.stdout.readline()
                rows += 1
        proc.wait()
        reader.join(5)
    cycles: list[list[str]] = [[]]
    for line in lines:
        if "debug: watch wait" in line:
            cycles[-1].append(line)
            cycles.append([])
        else:
            cycles[-1].append(line)
    done = [c for c in cycles if c and "watch wait" in c[-1]]
    result = WatchResult(size, 0, 0.0, rows=rows)
    for i, cycle in enumerate(done):
        wait = float(cycle[-1].split("wait ")[1].rstrip("s\n"))
        requests = sum(1 for line in cycle if line.startswith("debug: start "))
        seconds = max(0.0, 2.0 - wait)  # the cycle's own time: the interval less the wait
        if i == 0:
            result.first_requests, result.first_seconds = requests, seconds
        else:
            result.cycles.append((requests, seconds))
    return result


# -- follow --parent ----------------------------------------------------------------------------


@dataclass
class LatencyResult:
    size: int
    latencies: list[float]
    requests_per_cycle: float
    cycles: int


def measure_latency(backend: Any, unit: dict[str, Any], writes: int, writer: Any) -> LatencyResult:
    """`follow --parent --json` on running children; rows written to random children."""
    env = env_for(backend)
    children = list(unit["children"])
    arrived: dict[int, float] = {}
    goals_seen: set[str] = set()
    cmd = cli(backend, "follow", "--parent", unit["parent"], "--json", "--debug")
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) as proc:
        assert proc.stdout is not None
        assert proc.stderr is not None
        debug: list[str] = []
        err = threading.Thread(target=lambda: debug.extend(proc.stderr or []), daemon=True)
        err.start()

        def read() -> None:
            for line in proc.stdout or []:
                event = json.loads(line)
                if event.get("type") == "row":
                    arrived.setdefault(int(event["id"]), time.time())
                    goals_seen.add(event["task"]["child_session_id"])

        out = threading.Thread(target=read, daemon=True)
        out.start()
        deadline = time.perf_counter() + 120
        while len(goals_seen) < len(children) and time.perf_counter() < deadline:
            time.sleep(0.2)
        pick = random.Random(29)  # noqa: S311 (which child, not a secret)
        committed: dict[int, float] = {}
        start_requests = sum(1 for line in debug if line.startswith("debug: start "))
        start_cycles = sum(1 for line in debug if "debug: watch wait" in line)
        for i in range(writes):
            time.sleep(pick.uniform(0.5, 1.5))
            writer.stdin.write(f"{pick.choice(children)} Shard note {i}: 42 passed.\n")
            writer.stdin.flush()
            answer = json.loads(writer.stdout.readline())
            committed[int(answer["id"])] = float(answer["at"])
        time.sleep(8)
        requests = sum(1 for line in debug if line.startswith("debug: start ")) - start_requests
        cycles = sum(1 for line in debug if "debug: watch wait" in line) - start_cycles
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=20)
        out.join(5)
    missing = [r for r in committed if r not in arrived]
    if missing:
        raise RuntimeError(f"follow --parent never printed rows {missing}")
    latencies = sorted(arrived[r] - at for r, at in committed.items())
    return LatencyResult(len(children), latencies, requests / max(cycles, 1), cycles)


@dataclass
class DrainResult:
    size: int
    wall: Stats
    requests: int


def measure_drain(backend: Any, parents: dict[int, str], runs: int) -> list[DrainResult]:
    env = env_for(backend)
    out = []
    for n, parent in parents.items():
        _, _, stderr = run(cli(backend, "follow", "--parent", parent, "--json", "--debug"), env)
        walls = [run(cli(backend, "follow", "--parent", parent, "--json"), env)[0] for _ in range(runs)]
        out.append(DrainResult(n, Stats(tuple(walls)), len(START.findall(stderr))))
    return out


# -- where a 500-task recover spends its time ---------------------------------------------------

CPU_SIZE = 500
CPU_SMALL = 10
LIMITS = (1, 4, 8, 16)
TICK = os.sysconf("SC_CLK_TCK")


def server_cpu(pid: int) -> float:
    """User+system CPU seconds of the backend's process group (the harness starts each server
    as the leader of its own session: `pid` is the group id), from /proc/*/stat."""
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:  # a process that ended meanwhile
            continue
        fields = text.rsplit(")", 1)[1].split()  # after the command name, which may hold spaces
        if int(fields[2]) == pid:  # field 5, pgrp
            total += int(fields[11]) + int(fields[12])  # fields 14 and 15: utime, stime
    return total / TICK


def limited(backend: Any, limit: int, *args: str, profile: str | None = None) -> list[str]:
    """The CLI run by bench/limited_cli.py with at most `limit` reads in flight."""
    head = [str(limit), *(("--profile", profile) if profile else ())]
    return [str(PYTHON), "-m", "bench.limited_cli", *head, "--", *args, "--url", backend.url]


def cpu_run(cmd: list[str], env: dict[str, str], pid: int) -> tuple[float, float, float, str]:
    """(wall, client CPU, server CPU) seconds of one run, and its stderr."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    server0 = server_cpu(pid)
    wall, _, stderr = run(cmd, env)
    server1 = server_cpu(pid)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    client = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, client, server1 - server0, stderr


OPEN_SESSIONDB = """
import inspect, sqlite3, sys, tempfile, time
from pathlib import Path
from hermes_state import SessionDB
src, n = sys.argv[1], int(sys.argv[2])
with tempfile.TemporaryDirectory() as scratch:
    copy = Path(scratch) / "state.db"
    with sqlite3.connect(src) as a, sqlite3.connect(copy) as b:
        a.backup(b)
    modes = {"read-write": {}}
    if "read_only" in inspect.signature(SessionDB).parameters:
        modes["read-only"] = {"read_only": True}
    for mode, kw in modes.items():
        SessionDB(db_path=copy, **kw).close()
        started = time.process_time()
        for _ in range(n):
            SessionDB(db_path=copy, **kw).close()
        print(mode, (time.process_time() - started) / n)
"""


def sessiondb_open(backend: Any, n: int = 200) -> dict[str, float]:
    """CPU seconds to open and close one `SessionDB` (the dashboards open one per request), by
    mode, in the backend's own interpreter against a copy of the backend's state.db."""
    from tests.support.harness import backend_env, ensure_venv

    venv = ensure_venv(backend.name)
    with tempfile.TemporaryDirectory(prefix="hermes-task-sessiondb-") as scratch:
        env = backend_env(backend.name, Path(scratch))
        db = str(backend.home / "hermes" / "state.db")
        proc = subprocess.run(
            [str(venv / "bin" / "python"), "-c", OPEN_SESSIONDB, db, str(n)],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
    return {mode: float(seconds) for mode, seconds in (line.split() for line in proc.stdout.splitlines())}


@dataclass
class CpuResult:
    limit: int
    size: int
    wall: Stats
    client: Stats
    server: Stats
    requests: int
    peak: int


@dataclass
class ProfileResult:
    total: float  # client CPU seconds seen by the profiler
    groups: list[tuple[str, float]]  # (what, CPU seconds of its own code), largest first
    top: list[tuple[str, int, float, float]]  # (hermes_task function, calls, own, cumulative CPU s)
    chain: int  # hermes_task entries left out above the top: the command's call chain (>= 90%)


def measure_cpu(backend: Any, parents: dict[int, str], runs: int) -> list[CpuResult]:
    """`recover PARENT --json` of the big parent at each limit, and of the small one at the
    default limit (for the client's start-up cost), alternating run by run."""
    env = env_for(backend)
    big, small = parents[CPU_SIZE], parents[CPU_SMALL]
    cases = {(limit, CPU_SIZE): limited(backend, limit, "recover", big, "--json") for limit in LIMITS}
    cases[(8, CPU_SMALL)] = limited(backend, 8, "recover", small, "--json")
    counted: dict[tuple[int, int], tuple[int, int]] = {}
    for key, cmd in cases.items():  # warm-up, and the request count and peak from --debug
        stderr = run([*cmd, "--debug"], env)[2]
        counted[key] = (len(START.findall(stderr)), max((int(p) for p in PEAK.findall(stderr)), default=1))
    samples: dict[tuple[int, int], list[tuple[float, float, float]]] = {key: [] for key in cases}
    for i in range(runs):
        order = list(cases) if i % 2 == 0 else list(cases)[::-1]
        for key in order:
            samples[key].append(cpu_run(cases[key], env, backend.pid)[:3])
    out = []
    for (limit, size), values in samples.items():
        walls, clients, servers = (Stats(tuple(v[k] for v in values)) for k in range(3))
        out.append(CpuResult(limit, size, walls, clients, servers, *counted[(limit, size)]))
    return out


def _group(filename: str, name: str) -> str:
    if "/hermes_task/" in filename:
        return "hermes_task"
    for package in ("httpx", "httpcore", "h11", "msgspec", "typer", "click", "rich", "anyio", "idna"):
        if f"/{package}/" in filename:
            return package
    if filename == "~":  # a builtin: name it by what it is
        for word, group in (("socket", "socket I/O"), ("select", "socket I/O"), ("poll", "socket I/O")):
            if word in name:
                return group
        if "json" in name or "msgspec" in name:
            return "JSON decoding (C)"
        return "other builtins"
    if "/json/" in filename:
        return "json (stdlib)"
    if "/importlib/" in filename or "<frozen" in filename:
        return "imports"
    return "other Python (stdlib)"


def profile_recover(backend: Any, parent: str, top: int = 12) -> ProfileResult:
    """One `recover PARENT --json` at limit 1 (every read on the profiled thread) under cProfile
    with a CPU clock: own CPU per package, and the top hermes_task entries by cumulative CPU."""
    with tempfile.TemporaryDirectory(prefix="hermes-task-profile-") as scratch:
        out = str(Path(scratch) / "recover.pstats")
        run(limited(backend, 1, "recover", parent, "--json", profile=out), env_for(backend))
        return summarise_profile(out, top)


def summarise_profile(path: str, top: int = 12) -> ProfileResult:
    """Own CPU per package of a pstats file, and the top hermes_task entries by cumulative
    CPU below those holding 90% or more of it (the command's call chain)."""
    stats = pstats.Stats(path)
    raw: dict[tuple[str, int, str], tuple[int, int, float, float, Any]] = stats.stats  # type: ignore[attr-defined]
    groups: dict[str, float] = {}
    total = 0.0
    ours: list[tuple[str, int, float, float]] = []
    for (filename, line, name), (_, calls, own, cumulative, _) in raw.items():
        group = _group(filename, name)
        groups[group] = groups.get(group, 0.0) + own
        total += own
        if group == "hermes_task":
            where = filename.split("/hermes_task/", 1)[1]
            ours.append((f"{where}:{line} {name}", calls, own, cumulative))
    ours.sort(key=lambda x: -x[3])
    chain = [x for x in ours if x[3] >= 0.9 * total]
    ranked = sorted(groups.items(), key=lambda x: -x[1])
    return ProfileResult(total, ranked, ours[len(chain) : len(chain) + top], len(chain))


def cpu_markdown(
    backend: str, cpu: list[CpuResult], profile: ProfileResult | None, opens: dict[str, float]
) -> list[str]:
    out = [
        f"Where `recover PARENT --json` of {CPU_SIZE} tasks spends its time on {backend} "
        "(`--cpu`; bench/limited_cli.py sets the most reads in flight by monkeypatching "
        "reading/api.py in the benchmark's process, 8 being the CLI's; client CPU from the "
        "child's rusage, server CPU from /proc/PID/stat of the backend's process group before and "
        "after each run; alternating runs):",
        "",
        "| tasks | in flight | wall | requests | client CPU | server CPU | client CPU per request "
        "| server CPU per request | server CPU / wall |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for c in sorted(cpu, key=lambda x: (x.size, x.limit)):
        n = max(c.requests, 1)
        out.append(
            f"| {c.size} | {c.limit} (seen {c.peak}) | {c.wall.ms()} | {c.requests} | "
            f"{c.client.median * 1000:.0f} ms | {c.server.median * 1000:.0f} ms | "
            f"{c.client.median * 1000 / n:.2f} ms | {c.server.median * 1000 / n:.2f} ms | "
            f"{c.server.median / c.wall.median:.0%} |"
        )
    by = {(c.limit, c.size): c for c in cpu}
    big, small, one = by[(8, CPU_SIZE)], by[(8, CPU_SMALL)], by[(1, CPU_SIZE)]
    extra = max(big.requests - small.requests, 1)
    client_each = (big.client.median - small.client.median) * 1000 / extra
    server_each = big.server.median * 1000 / max(big.requests, 1)
    out += [
        "",
        f"At 8 in flight: {big.requests} requests in {big.wall.median:.2f} s, "
        f"{big.requests / big.wall.median:.0f} requests/s; the server's CPU {server_each:.2f} ms per "
        f"request, {big.server.median / big.wall.median:.0%} of the wall; the client's "
        f"{client_each:.2f} ms per request beyond the {small.size}-task run "
        f"({small.client.median * 1000:.0f} ms of CPU, start-up included). "
        f"From 1 to 8 in flight the wall shrinks {one.wall.median / big.wall.median:.2f}x.",
    ]
    if opens:
        shown = ", ".join(f"{mode} {seconds * 1000:.2f} ms" for mode, seconds in opens.items())
        out += [
            "",
            "The dashboard opens a `SessionDB` for every request; opening and closing one costs "
            f"(CPU, the backend's own interpreter, a copy of its state.db): {shown}.",
        ]
    if profile is not None:
        shares = ", ".join(f"{name} {own / profile.total:.0%}" for name, own in profile.groups[:8])
        out += [
            "",
            f"Client CPU by package's own code (cProfile with a CPU clock, one run at 1 in flight: "
            f"{profile.total:.2f} s under the profiler, {one.client.median:.2f} s without; the "
            f"profiler's cost per call inflates call-heavy code): {shares}.",
            "",
            f"The top hermes_task entries by cumulative CPU, below the {profile.chain} that hold 90% "
            "or more (the command's call chain down to the fan-out):",
            "",
            "| hermes_task entry | calls | own CPU | cumulative CPU | share |",
            "|---|---|---|---|---|",
        ]
        for where, calls, own, cumulative in profile.top:
            out.append(
                f"| `{where}` | {calls} | {own * 1000:.0f} ms | {cumulative * 1000:.0f} ms | "
                f"{cumulative / profile.total:.0%} |"
            )
    out.append("")
    return out


def where_figures(
    name: str, cpu: list[CpuResult], profile: ProfileResult | None, opens: dict[str, float]
) -> dict[str, str]:
    """One backend's figures for `where_summary`, formatted."""
    by = {(c.limit, c.size): c for c in cpu}
    big, small, one, most = by[(8, CPU_SIZE)], by[(8, CPU_SMALL)], by[(1, CPU_SIZE)], by[(16, CPU_SIZE)]
    servers = [by[(limit, CPU_SIZE)].server.median * 1000 / max(big.requests, 1) for limit in LIMITS]
    shares = [by[(limit, CPU_SIZE)].server.median / by[(limit, CPU_SIZE)].wall.median for limit in LIMITS]
    extra = max(big.requests - small.requests, 1)

    def own(*groups: str) -> str:
        if profile is None:
            return "not profiled"
        return f"{sum(s for g, s in profile.groups if g in groups) / profile.total:.0%}"

    return {
        "name": name,
        "server_ms": f"{big.server.median * 1000 / max(big.requests, 1):.2f} ms",
        "client_ms": f"{(big.client.median - small.client.median) * 1000 / extra:.2f} ms",
        "server_s": f"{big.server.median:.1f} s",
        "client_s": f"{big.client.median:.2f} s",
        "up_8": f"{one.wall.median / big.wall.median:.2f}x",
        "up_16": f"{big.wall.median / most.wall.median:.2f}x",
        "spread": f"{min(servers):.1f}–{max(servers):.1f} ms",
        "share": f"{max(shares):.0%}",
        "one_core": "yes" if max(shares) <= 1.0 else "",
        "opens": " / ".join(f"{mode} {s * 1000:.2f} ms" for mode, s in opens.items()) or "not measured",
        "ours": own("hermes_task"),
        "http": own("httpx", "httpcore", "h11"),
    }


def where_summary(
    items: list[tuple[str, list[CpuResult], ProfileResult | None, dict[str, float]]],
) -> list[str]:
    """One paragraph with every backend's figures side by side: where `recover`'s wall goes."""
    figures = [where_figures(*item) for item in items]

    def each(key: str) -> str:
        return ", ".join(f"{f['name']} {f[key]}" for f in figures)

    one_core = ": never more than one core's worth" if all(f["one_core"] for f in figures) else ""

    return [
        f"Where the time of `recover` of {CPU_SIZE} tasks goes (the `--cpu` figures below; 8 reads "
        "in flight unless said; each backend's load is given with its figures):",
        "",
        f"- the backend's CPU per request: {each('server_ms')}; the client's, beyond its start-up: "
        f"{each('client_ms')}. The {CPU_SIZE}-task run's requests take {each('server_s')} of the "
        f"backend's CPU, against a target of {TARGET_RECOVER_500} s for the whole run; the client's "
        f"whole CPU, start-up included: {each('client_s')};",
        f"- more reads in flight: 1 → 8 shrinks the wall {each('up_8')}, 8 → 16 {each('up_16')}; the "
        f"backend's CPU per request stays within {each('spread')} at every limit, and its CPU is at "
        f"most {each('share')} of the wall{one_core};",
        f"- opening and closing a `SessionDB`, which the dashboards do for every request: {each('opens')};",
        f"- of the client's profiled CPU, hermes_task's own code holds {each('ours')}; httpx, httpcore "
        f"and h11 {each('http')}.",
        "",
    ]


WHERE_HEADING = f"## Where `recover` of {CPU_SIZE} tasks spends its time (issue 29)"


def where_markdown(where: list[WhereResult]) -> list[str]:
    """The `--cpu` section: the summary, then each backend's figures."""
    out = [
        WHERE_HEADING,
        "",
        "`python -m bench.bench_scale --cpu` (`--only wheretime`): a 10- and a 500-task parent seeded as "
        "in the section above; `recover PARENT --json` timed with the client's and the backend's CPU. "
        "Load average (1 min) at each backend's start and end is given: the machine is shared, "
        "absolute figures move with it.",
        "",
        *where_summary([(w.backend, w.cpu, w.profile, w.opens) for w in where]),
    ]
    for w in where:
        out += [f"### {w.backend} {w.version} (load {w.load[0]:.2f} → {w.load[1]:.2f})", ""]
        out += cpu_markdown(w.backend, w.cpu, w.profile, w.opens)
    return out


# -- the whole suite ----------------------------------------------------------------------------


@dataclass
class ScaleResult:
    backend: str
    version: str
    recover: list[RecoverResult]
    trees: list[TreeResult]
    watch: WatchResult
    latency: list[LatencyResult]
    drain: list[DrainResult]
    load: tuple[float, float]


@dataclass
class WhereResult:
    backend: str
    version: str
    cpu: list[CpuResult]
    profile: ProfileResult
    opens: dict[str, float]
    load: tuple[float, float]


def measure_where(backend: Any, *, quick: bool = False) -> WhereResult:
    """Only the where-the-time-goes part (`--cpu`): a 10- and a 500-task parent seeded."""
    load0 = os.getloadavg()[0]
    say(f"  seeding {CPU_SMALL} and {CPU_SIZE} tasks on {backend.name} ...")
    parents = {n: backend.fan_out(goals(n))["parent"] for n in (CPU_SMALL, CPU_SIZE)}
    say(f"  recover CPU and in-flight limits on {backend.name} ...")
    cpu = measure_cpu(backend, parents, 3 if quick else 5)
    say(f"  recover profile on {backend.name} ...")
    profile = profile_recover(backend, parents[CPU_SIZE])
    opens = sessiondb_open(backend)
    return WhereResult(backend.name, backend.version, cpu, profile, opens, (load0, os.getloadavg()[0]))


def measure(backend: Any, *, quick: bool = False) -> ScaleResult:
    runs = 3 if quick else 5
    load0 = os.getloadavg()[0]
    say(f"  seeding the scale scenarios on {backend.name} ...")
    parents = {n: backend.fan_out(goals(n))["parent"] for n in RECOVER_SIZES}
    trees = {(w, f): backend.fan_out(goals(w, f"tree {w}x{f} child"), nested=f)["parent"] for w, f in TREES}
    running = {n: backend.fan_out(goals(n, f"live {n}")) for n in FOLLOW_SIZES}
    finished = {n: backend.fan_out(goals(n, f"done {n}"), finished=True)["parent"] for n in DRAIN_SIZES}
    writer = backend.writer()
    try:
        say(f"  recover on {backend.name} ...")
        recover = measure_recover(backend, parents, runs)
        say(f"  recover --recursive on {backend.name} ...")
        tree = measure_trees(backend, trees, 1 if quick else 2)
        say(f"  follow --parent latency on {backend.name} ...")
        latency = [measure_latency(backend, running[n], 10 if quick else 30, writer) for n in FOLLOW_SIZES]
        say(f"  follow --parent drain on {backend.name} ...")
        drain = measure_drain(backend, finished, 1 if quick else 3)
        say(f"  recover --watch with a changing parent on {backend.name} ...")
        big = max(RECOVER_SIZES)
        watch = measure_watch(backend, parents[big], big, 20.0 if quick else 40.0, writer)
    finally:
        if writer.stdin is not None:
            writer.stdin.close()
        writer.wait(timeout=30)
    return ScaleResult(
        backend.name,
        backend.version,
        recover,
        tree,
        watch,
        latency,
        drain,
        (load0, os.getloadavg()[0]),
    )


def _p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20, method="inclusive")[-1] if len(values) > 1 else values[0]


def markdown(results: list[ScaleResult]) -> list[str]:
    out = [
        "## Big orchestrations (issue 29)",
        "",
        "`python -m bench.bench_scale` (`--only scale`): parents seeded through Hermes' own `SessionDB` "
        "(tests/support/seeding/fanout.py: one background unit of N goals, the children in the local "
        "store); requests counted from `--debug`. Targets: `recover` of 500 tasks in at most "
        f"{TARGET_RECOVER_500} s or {TARGET_RECOVER_GROWTH}x the 100-task run; `follow --parent` p95 "
        f"latency at 50 running children at most {TARGET_P95:.0f} s; a finished 100-task parent "
        f"drained in at most {TARGET_DRAIN_100:.0f} s. Load average (1 min) at each backend's start "
        "and end is given: the machine is shared, absolute figures move with it.",
        "",
    ]
    for r in results:
        out += [f"### {r.backend} {r.version} (load {r.load[0]:.2f} → {r.load[1]:.2f})", ""]
        out += [
            "`recover PARENT --json`, N running tasks proposed by the store (alternating runs):",
            "",
            "| tasks | wall | requests | most in flight | children proven | growth |",
            "|---|---|---|---|---|---|",
        ]
        small, big = sorted(r.recover, key=lambda x: x.size)[-2:]  # 100 and 500
        for x in r.recover:
            growth = f"{x.wall.median / small.wall.median:.2f}x the {small.size}-task run" if x is big else ""
            out.append(
                f"| {x.size} | {x.wall.ms()} | {x.requests} | {x.peak} | {x.found} of {x.size} | {growth} |"
            )
        ratio = big.wall.median / small.wall.median
        fast, flat = big.wall.median <= TARGET_RECOVER_500, ratio <= TARGET_RECOVER_GROWTH
        verdict = (
            "**within target**"
            if fast
            else f"**within target by growth only** (over {TARGET_RECOVER_500} s)"
            if flat
            else "**over target**"
        )
        out += [
            "",
            f"Verdict: {verdict} ({big.wall.median:.2f} s at {big.size}, "
            f"{ratio:.2f}x the {small.size}-task run; requests {big.requests / max(small.requests, 1):.2f}x for "
            f"{big.size / small.size:.0f}x the tasks).",
            "",
            "`recover PARENT --recursive --json`, W children each delegating F tasks:",
            "",
            "| tree | tasks | wall | requests | listed | bound reached |",
            "|---|---|---|---|---|---|",
        ]
        for t in r.trees:
            w, f = t.shape
            out.append(
                f"| {w}x{f} | {w + w * f} | {t.wall.ms()} | {t.requests} | {t.listed} | {'yes' if t.bound else 'no'} |"
            )
        cycles = r.watch.cycles
        out += [
            "",
            f"`recover PARENT --watch` on {r.watch.size} running tasks, {r.watch.rows} parent rows appended "
            f"(one every 4 s): the first cycle (the history, every proposal proven) {r.watch.first_requests} "
            f"requests in {r.watch.first_seconds:.2f} s or more; the {len(cycles)} later cycles at most "
            f"{max((c[0] for c in cycles), default=0)} requests (median "
            f"{statistics.median([c[0] for c in cycles]) if cycles else 0:.0f}) and at most "
            f"{max((c[1] for c in cycles), default=0):.2f} s of work each.",
            "",
            "`follow --parent PARENT --json`, N running children, rows written to random children "
            "(commit → stdout):",
            "",
            "| children | rows | median | p95 | max | requests per cycle | verdict |",
            "|---|---|---|---|---|---|---|",
        ]
        for lat in r.latency:
            p95 = _p95(lat.latencies)
            verdict = "" if lat.size != 50 else ("within target" if p95 <= TARGET_P95 else "**over target**")
            out.append(
                f"| {lat.size} | {len(lat.latencies)} | {statistics.median(lat.latencies):.2f} s | {p95:.2f} s | "
                f"{max(lat.latencies):.2f} s | {lat.requests_per_cycle:.1f} | {verdict} |"
            )
        out += [
            "",
            "`follow --parent PARENT --json` of a finished parent (every child ended, the completion row "
            "written), until it exits:",
            "",
            "| tasks | wall | requests | verdict |",
            "|---|---|---|---|",
        ]
        for d in r.drain:
            verdict = (
                ""
                if d.size != 100
                else ("within target" if d.wall.median <= TARGET_DRAIN_100 else "**over target**")
            )
            out.append(f"| {d.size} | {d.wall.ms()} | {d.requests} | {verdict} |")
        out.append("")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--backends", default="official,iot")
    parser.add_argument("--quick", action="store_true", help="fewer runs and writes (not for the docs)")
    parser.add_argument("--markdown", action="store_true", help="(the default) print the Markdown section")
    parser.add_argument(
        "--cpu",
        action="store_true",
        help=f"only where `recover` of {CPU_SIZE} tasks spends its time (CPU, in-flight limits, profile)",
    )
    args = parser.parse_args(argv)
    names = args.backends.split(",")
    if args.cpu:
        with backends(names) as servers:
            where = []
            for name in names:
                say(f"where the time goes on {name} ...")
                where.append(measure_where(servers[name], quick=args.quick))
        print("\n".join(where_markdown(where)))
        return 0
    results = []
    with backends(names) as servers:
        for name in names:
            say(f"scale on {name} ...")
            results.append(measure(servers[name], quick=args.quick))
    print("\n".join(markdown(results)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
