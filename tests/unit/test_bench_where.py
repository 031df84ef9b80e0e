"""The where-the-time-goes part of bench/bench_scale.py (`--cpu`, issue 29): the benchmark's
own limit on reads in flight (bench/limited_cli.py, no user-visible option), the server CPU
read from /proc, the profile's summary and the per-request arithmetic. No time is asserted:
the figures are docs/benchmarks.md's."""

from __future__ import annotations

import cProfile
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest
from bench import bench_scale, limited_cli
from bench.common import Stats

from hermes_task.core.sanitize import is_valid_id
from hermes_task.reading import api

REPO = Path(__file__).resolve().parents[2]


def test_the_benchmarks_limit_reaches_every_gather_that_passes_none(monkeypatch: pytest.MonkeyPatch) -> None:
    defaults = api.gather.__kwdefaults__
    assert defaults is not None
    monkeypatch.setitem(defaults, "limit", defaults["limit"])  # restored after the test
    monkeypatch.setattr(api, "MAX_IN_FLIGHT", api.MAX_IN_FLIGHT)
    lines: list[str] = []
    limited_cli.set_limit(3)
    api.gather([lambda: time.sleep(0.01) for _ in range(9)], what="jobs", debug=lines.append)
    assert lines[0] == "fan-out jobs: 9 jobs, at most 3 in flight"
    assert lines[1].endswith(", 3 in flight at most")
    assert api.MAX_IN_FLIGHT == 3


def test_the_limited_cli_runs_the_cli_and_profiles_it(tmp_path: Path) -> None:
    out = tmp_path / "run.pstats"
    proc = subprocess.run(
        [sys.executable, "-m", "bench.limited_cli", "2", "--profile", str(out), "--", "--version"],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("hermes-task ")
    summary = bench_scale.summarise_profile(str(out))
    assert summary.total > 0
    assert "hermes_task" in dict(summary.groups)


def test_the_limited_cli_passes_the_clis_exit_status_on() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "bench.limited_cli", "2", "--", "no-such-command"],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr


def test_server_cpu_sums_the_process_group_from_proc() -> None:
    """A child leading its own group burns CPU; the group's figure is at least what the
    child's rusage says (both in clock ticks), and a group with no process has none."""
    burn = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass\ninput()"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with subprocess.Popen(
        [sys.executable, "-c", burn], stdin=subprocess.PIPE, text=True, start_new_session=True
    ) as proc:
        deadline = time.monotonic() + 30
        seen = 0.0
        while seen < 0.3 and time.monotonic() < deadline:
            time.sleep(0.05)
            seen = bench_scale.server_cpu(proc.pid)
        assert proc.stdin is not None
        proc.stdin.write("\n")
        proc.stdin.close()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    used = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    tick = 1 / os.sysconf("SC_CLK_TCK")
    assert 0.3 - tick <= seen <= used + tick
    assert bench_scale.server_cpu(2**22 + 7) == 0  # above the kernel's largest pid


def test_the_profile_summary_groups_own_cpu_and_lists_our_entries(tmp_path: Path) -> None:
    def work() -> None:
        for i in range(5000):
            is_valid_id(f"20261202_090000_{i:06x}")

    profiler = cProfile.Profile(time.process_time)
    profiler.runcall(work)
    path = tmp_path / "work.pstats"
    profiler.dump_stats(str(path))
    summary = bench_scale.summarise_profile(str(path), top=3)
    groups = dict(summary.groups)
    assert summary.total == pytest.approx(sum(groups.values()))
    assert groups["hermes_task"] > 0
    # is_valid_id and check_id hold the whole run: the chain, left out; then what they call
    assert summary.chain == 2
    assert summary.top[0][:2] == ("core/sanitize.py:55 _has_control", 5000)
    assert all(t[3] < 0.9 * summary.total for t in summary.top)
    assert [t[3] for t in summary.top] == sorted((t[3] for t in summary.top), reverse=True)


def cpu(
    limit: int, size: int, wall: float, client: float, server: float, requests: int
) -> bench_scale.CpuResult:
    return bench_scale.CpuResult(
        limit, size, Stats((wall,)), Stats((client,)), Stats((server,)), requests, limit
    )


RUNS = [
    cpu(8, 10, 0.5, 0.30, 0.08, 23),
    cpu(1, 500, 10.0, 1.80, 8.00, 1003),
    cpu(4, 500, 8.0, 1.70, 8.00, 1003),
    cpu(8, 500, 8.0, 1.78, 8.02, 1003),
    cpu(16, 500, 8.0, 1.80, 8.00, 1003),
]


def test_the_per_request_figures_are_the_ratios_of_the_runs() -> None:
    text = "\n".join(bench_scale.cpu_markdown("official", RUNS, None, {"read-write": 0.0025}))
    assert (
        "| 500 | 8 (seen 8) | 8000 ms (8000–8000, n=1) | 1003 | 1780 ms | 8020 ms | 1.77 ms | 8.00 ms | 100% |"
        in text
    )
    assert "the client's 1.51 ms per request beyond the 10-task run" in text  # (1.78 - 0.30) / 980
    assert "From 1 to 8 in flight the wall shrinks 1.25x." in text
    assert "read-write 2.50 ms" in text


def test_the_summary_puts_each_backends_figures_side_by_side() -> None:
    official = [
        cpu(8, 10, 0.5, 0.30, 0.08, 23),
        cpu(1, 500, 12.0, 1.80, 6.00, 1003),
        cpu(4, 500, 10.0, 1.70, 6.50, 1003),
        cpu(8, 500, 10.0, 1.78, 6.02, 1003),
        cpu(16, 500, 11.0, 1.80, 6.10, 1003),
    ]
    iot = [
        cpu(c.limit, c.size, c.wall.median / 2, c.client.median, c.server.median, c.requests)
        for c in official
    ]
    text = "\n".join(
        bench_scale.where_summary(
            [("official", official, None, {"read-write": 0.0025}), ("iot", iot, None, {"read-only": 0.004})]
        )
    )
    assert "the backend's CPU per request: official 6.00 ms, iot 6.00 ms;" in text
    assert "1 → 8 shrinks the wall official 1.20x, iot 1.20x, 8 → 16 official 0.91x, iot 0.91x" in text
    assert "stays within official 6.0–6.5 ms, iot 6.0–6.5 ms" in text
    assert "at most official 65%, iot 130% of the wall;" in text  # 6.5 s in 10 s; in 5 s: 2 cores
    alone = "\n".join(bench_scale.where_summary([("official", official, None, {})]))
    assert "at most official 65% of the wall: never more than one core's worth;" in alone
    assert "which the dashboards do for every request: official not measured;" in alone
    assert "official read-write 2.50 ms, iot read-only 4.00 ms" in text
    assert "hermes_task's own code holds official not profiled" in text


PROFILE = bench_scale.ProfileResult(
    2.0, [("httpx", 1.5), ("hermes_task", 0.5)], [("core/sanitize.py:47 is_valid_id", 9, 0.1, 0.2)], 3
)


def test_the_where_section_is_spliced_apart_from_the_scale_section() -> None:
    """`--only wheretime` replaces its own section and `--only scale` leaves it alone: neither
    heading starts like the other."""
    from bench import run

    where = bench_scale.WhereResult(
        "official",
        "0.19.0",
        [cpu(c.limit, c.size, 8.0, 1.5, 6.0, c.requests) for c in RUNS],
        PROFILE,
        {},
        (1.0, 2.0),
    )
    section = bench_scale.where_markdown([where])
    assert section[0] == run.SECTIONS["wheretime"]
    assert "### official 0.19.0 (load 1.00 → 2.00)" in section
    text = "\n".join(section)
    assert "hermes_task's own code holds official 25%; httpx, httpcore and h11 official 75%." in text
    assert "| `core/sanitize.py:47 is_valid_id` | 9 | 100 ms | 200 ms | 10% |" in text
    assert "below the 3 that hold 90% or more" in text
    doc = (
        "# B\n\n## Big orchestrations (issue 29)\n\nold scale\n\n"
        + run.SECTIONS["wheretime"]
        + "\n\nold where\n"
    )
    spliced = run.splice(doc, ["# B", ""], {run.SECTIONS["scale"]: [run.SECTIONS["scale"], "", "new scale"]})
    assert "new scale" in spliced
    assert "old where" in spliced
    assert "old scale" not in spliced
    spliced = run.splice(doc, ["# B", ""], {run.SECTIONS["wheretime"]: section})
    assert "old scale" in spliced
    assert "old where" not in spliced
    assert spliced.count(run.SECTIONS["wheretime"]) == 1


def test_a_section_appended_after_a_document_without_a_final_blank_line_is_set_apart() -> None:
    from bench import run

    doc = "# B\n\n## Big orchestrations (issue 29)\n\n| 500 | 36408 ms |\n"
    spliced = run.splice(
        doc, ["# B", ""], {run.SECTIONS["wheretime"]: [run.SECTIONS["wheretime"], "", "new"]}
    )
    assert f"| 500 | 36408 ms |\n\n{run.SECTIONS['wheretime']}\n\nnew\n" in spliced
