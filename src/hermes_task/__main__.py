"""`python -m hermes_task` and the `hermes-task` console script.

`hermes-task --version` (or `-V`) alone is answered here, before typer and the command tree
are imported: the line typer's `--version` callback prints, in a fraction of the start-up
time. Everything else goes to `hermes_task.cli.main`.
"""

from __future__ import annotations

import os
import sys


def main() -> None:
    """Console-script entry point."""
    if sys.argv[1:] in (["--version"], ["-V"]):
        from hermes_task import __version__

        try:
            sys.stdout.write(f"hermes-task {__version__}\n")
            sys.stdout.flush()
        except BrokenPipeError:  # `| head -0`: quiet, as every command is
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return
    from hermes_task.cli import main as run

    run()


if __name__ == "__main__":
    main()
