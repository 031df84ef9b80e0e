"""The command-line interface: the typer app (`app.py`), the shared options and injected
environment (`options.py`), the session and its shell (`session.py`), the pager, and one module
per command; the only package that imports typer. `main` is still found here (console scripts
of older versions import `hermes_task.cli:main`), imported only when asked for: `app.py`
imports this package's modules, so this file must not import `app.py` first.
"""

from __future__ import annotations

from collections.abc import Callable


def __getattr__(name: str) -> Callable[[], None]:
    if name == "main":
        from hermes_task.cli.app import main  # lazy: app.py imports this package first

        return main
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
