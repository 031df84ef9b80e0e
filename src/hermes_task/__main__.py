"""`python -m hermes_task` and the `hermes-task` console script: the typer app
(`hermes_task.cli.app`), which answers `--version`, `--help` and every command itself."""

from __future__ import annotations

from hermes_task.cli.app import main

if __name__ == "__main__":
    main()
