"""The command-line interface (the only package that imports typer). `main` is still found here
for older console scripts, imported only when asked for (`app.py` imports this package first)."""

from __future__ import annotations

from collections.abc import Callable


def __getattr__(name: str) -> Callable[[], None]:
    if name == "main":
        from hermes_task.cli.app import main  # lazy: app.py imports this package first

        return main
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
