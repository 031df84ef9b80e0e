"""The command-line interface: typer app (`app.py`), shared options (`options.py`), the one
shell every command runs in (`shell.py`), the injected environment (`environment.py`), and
one module per command. The only package that imports typer (a test checks it).

This file imports nothing: `show`'s typer-free start path (`fastpath.py`) imports modules of
this package without loading typer. The app is `hermes_task.cli.app.app`.
"""
