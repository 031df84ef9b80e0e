"""Start-up time: `hermes-task --help` and `--version`, next to `python -c pass` for scale."""

from __future__ import annotations

from bench.common import HERMES_TASK, PYTHON, Stats, clean_env, interleaved

TARGET_MS = 150  # issue 27: typer answers both, no pre-rendered help (issue 18 had 80 ms with one)


def measure(runs: int = 15) -> dict[str, Stats]:
    commands = {
        "hermes-task --version": [str(HERMES_TASK), "--version"],
        "hermes-task --help": [str(HERMES_TASK), "--help"],
        "python -c pass": [str(PYTHON), "-c", "pass"],
    }
    return interleaved(commands, clean_env(), runs)


def markdown(stats: dict[str, Stats]) -> list[str]:
    out = [
        "## Start-up",
        "",
        f"Target ≤ {TARGET_MS} ms. Wall time of a subprocess, median of {len(next(iter(stats.values())).values)} "
        "runs (min–max), the three commands alternating; output to a pipe, so `--help` renders without colour.",
        "",
        "| command | median (min–max) | verdict |",
        "|---|---|---|",
    ]
    for name, s in stats.items():
        verdict = (
            "(scale)"
            if name.startswith("python")
            else ("within target" if s.median * 1000 <= TARGET_MS else "**over target**")
        )
        out.append(f"| `{name}` | {s.ms()} | {verdict} |")
    return out
