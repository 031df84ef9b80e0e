"""The command-line interface: typer app (`app.py`), shared options (`options.py`), the one
shell every command runs in (`shell.py`), the injected environment (`environment.py`), and
one module per command. The only package that imports typer (a test checks it)."""

from __future__ import annotations

from hermes_task.cli.app import app, main

__all__ = ["app", "main"]
