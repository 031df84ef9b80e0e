"""hermes-task's CLI with the fan-out limit set, optionally under cProfile (benchmarks only).

    .venv/bin/python -m bench.limited_cli LIMIT [--profile OUT] -- ARGS...

Runs `hermes_task.cli.app.main` with ARGS after setting the most reads in flight
(reading/api.py's `MAX_IN_FLIGHT`, the default of `gather`'s `limit`) to LIMIT by
monkeypatching it in this process: users have no option for it, and none is added for the
benchmark. `--profile OUT` writes a cProfile of the run to OUT (pstats format), timed by
the process's CPU clock (time spent waiting for the server is not counted). cProfile
sees only the thread it was enabled on, so profile with LIMIT 1: every read then runs on the
caller's thread (`gather` runs jobs inline when one worker is allowed).
"""

from __future__ import annotations

import cProfile
import sys
import time

from hermes_task.reading import api


def set_limit(limit: int) -> None:
    """Every `gather` call that does not pass `limit` (all of them in src/) uses `limit`."""
    api.MAX_IN_FLIGHT = limit
    defaults = api.gather.__kwdefaults__
    if defaults is None or "limit" not in defaults:
        raise SystemExit("reading/api.gather has no `limit` default to set")
    defaults["limit"] = limit


def main(argv: list[str]) -> int:
    if len(argv) < 2 or "--" not in argv:
        print(__doc__, file=sys.stderr)
        return 2
    split = argv.index("--")
    head, args = argv[:split], argv[split + 1 :]
    set_limit(int(head[0]))
    profile_to = head[head.index("--profile") + 1] if "--profile" in head else None
    from hermes_task.cli.app import main as cli_main

    sys.argv = ["hermes-task", *args]
    profiler = cProfile.Profile(time.process_time) if profile_to else None  # CPU, not wall
    code: int = 0
    try:
        if profiler is not None:
            profiler.enable()
        cli_main()
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    finally:
        if profiler is not None and profile_to is not None:
            profiler.disable()
            profiler.dump_stats(profile_to)
    return code


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
