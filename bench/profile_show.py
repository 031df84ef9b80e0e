"""Where `show --json` spends its time: import costs by package, and phases in one process.

Run by bench/run.py when `show` is over its target ratio, and on its own:

    .venv/bin/python bench/profile_show.py URL TOKEN_FILE ARGS...   (phases, in-process)

- `importtime(cmd)` runs the command with `-X importtime` and sums self time per top-level
  package (what importing costs, whoever imported it);
- the phase script (this file's `main`) times, in one fresh process and in the order the
  CLI meets them, the imports, the two `httpx.Client` set-ups, the CLI call itself and
  the same GETs with plain httpx, so the differences say what each layer adds;
- `pyinstrument(cmd)` gives the call tree (frames of 5 ms or more) when pyinstrument is
  importable by the project interpreter or found in `$BENCH_PYINSTRUMENT_PATH`.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

_IMPORT_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|(\s+)(\S+)")


def importtime(cmd: Sequence[str], env: dict[str, str]) -> list[tuple[str, float]]:
    """Milliseconds of import self time per top-level package, largest first."""
    proc = subprocess.run(
        [cmd[0], "-X", "importtime", *cmd[1:]], capture_output=True, text=True, env=env, check=False
    )
    totals: dict[str, float] = defaultdict(float)
    for line in proc.stderr.splitlines():
        match = _IMPORT_LINE.match(line)
        if match:
            totals[match.group(4).split(".")[0]] += int(match.group(1)) / 1000
    return sorted(totals.items(), key=lambda kv: -kv[1])


def pyinstrument(cmd: Sequence[str], env: dict[str, str]) -> str | None:
    """The call tree of one run (frames >= 5 ms), or None without pyinstrument."""
    extra = os.environ.get("BENCH_PYINSTRUMENT_PATH", "")
    run_env = dict(env, PYTHONPATH=os.pathsep.join(filter(None, [extra, env.get("PYTHONPATH", "")])))
    probe = subprocess.run(
        [cmd[0], "-c", "import pyinstrument"], env=run_env, capture_output=True, check=False
    )
    if probe.returncode != 0:
        return None
    proc = subprocess.run(
        [cmd[0], "-m", "pyinstrument", "-i", "0.0005", "-r", "text", "--unicode", *cmd[1:]],
        capture_output=True,
        text=True,
        env=run_env,
        check=False,
    )
    keep = []
    for line in proc.stdout.splitlines():
        match = re.search(r"(\d+\.\d{3,4}) ", line)
        if (match and float(match.group(1)) >= 0.005) or "frames hidden" in line:
            keep.append(line.rstrip())
    return "\n".join(keep[:80])


def phases(
    cmd_python: str, args: Sequence[str], env: dict[str, str], runs: int = 5
) -> list[tuple[str, float, float, float]]:
    """Run this file's phase script in `runs` fresh processes; (phase, median, min, max ms)."""
    samples: dict[str, list[float]] = {}
    for _ in range(runs):
        proc = subprocess.run(
            [cmd_python, __file__, *args], capture_output=True, text=True, env=env, check=True
        )
        for line in proc.stdout.splitlines():
            name, _, ms = line.rpartition("\t")
            samples.setdefault(name, []).append(float(ms))
    return [(name, statistics.median(v), min(v), max(v)) for name, v in samples.items()]


def main(argv: list[str]) -> int:
    """Phase script: URL TARGETS_FILE then the `show` arguments (token in the environment)."""
    url, targets_file, args = argv[1], argv[2], argv[3:]
    with open(targets_file) as handle:
        targets = handle.read().split()
    marks: list[tuple[str, float]] = []

    def step(name: str, action: Callable[[], Any]) -> Any:
        started = time.perf_counter()
        result = action()
        marks.append((name, (time.perf_counter() - started) * 1000))
        return result

    step("import typer and the command tree (hermes_task.cli.app)", lambda: __import__("hermes_task.cli.app"))
    typer = sys.modules["typer"]

    def show_command() -> Any:
        return typer.main.get_command(__import__("hermes_task.cli.show", fromlist=["app"]).app)

    step("import cli/show.py and build its click command (typer reads the signature)", show_command)
    httpx = step("import httpx", lambda: __import__("httpx"))
    step(
        "import the core (client, wire, snapshot, model, render: msgspec Structs, no pydantic)",
        lambda: [
            __import__(m)
            for m in (
                "hermes_task.dashboard.client",
                "hermes_task.reading.reader",
                "hermes_task.render.jsontext",
            )
        ],
    )
    step("httpx.Client() with TLS verification (loads the CA bundle)", lambda: httpx.Client().close())
    step("httpx.Client(verify=False)", lambda: httpx.Client(verify=False).close())
    from hermes_task.cli.app import app

    def cli() -> None:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
            app([*args, "--url", url])

    step("the CLI call in-process (typer parsing, connect, the GETs, proof, projection, JSON)", cli)
    step("the same CLI call again (warm: no first-call costs)", cli)

    def plain() -> None:
        headers = {"X-Hermes-Session-Token": os.environ["HERMES_DASHBOARD_TOKEN"]}
        with httpx.Client(base_url=url, headers=headers, verify=False, trust_env=False) as client:
            for target in targets:
                client.get(target).json()

    step("the same GETs with plain httpx (warm, no TLS context)", plain)
    for name, ms in marks:
        print(f"{name}\t{ms:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
