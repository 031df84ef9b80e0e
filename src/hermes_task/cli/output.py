"""Command output of transcripts: the JSON document, or rendered rows (paged on a tall
terminal) and the warnings on stderr.

Invariant: with `--json` stdout carries exactly the document; otherwise rows go to stdout
(or the pager) and warnings to stderr, never mixed.
"""

from __future__ import annotations

from typing import Any

from hermes_task.cli.options import Common
from hermes_task.cli.shell import console


def emit_warnings(common: Common, warnings: list[Any]) -> None:
    """Warnings as `warning: ...` lines on stderr, but for the repeating ones under `--quiet`
    (JSON carries them all in the document)."""
    from hermes_task.cli.quiet import dropped

    warnings = [w for w in warnings if not dropped(common.quiet, w.code)]
    if common.json or not warnings:
        return
    from rich.text import Text

    err = console(common, stderr=True)
    for warning in warnings:
        line = Text("warning: ", style="bold yellow")
        line.append(warning.message)
        err.print(line)


def output_transcript(common: Common, doc: Any, **view: bool) -> None:
    """A transcript document as JSON, or rendered rows (paged on a tall terminal) plus warnings."""
    env = common.env
    if common.json:
        from hermes_task.render import jsonout

        env.write_stdout(jsonout.document(doc))
        return
    from hermes_task.render import terminal

    out = console(common)
    tty = env.isatty(env.stdout)
    if common.pager is False or not tty:
        terminal.transcript(out, doc, markdown=tty, **view)  # reasoning, full, utc
    else:
        from hermes_task.cli import pager

        with out.capture() as captured:  # rich's rendering of sanitised text: all the pager sees
            terminal.transcript(out, doc, markdown=True, **view)
        pager.show(
            captured.get(),
            requested=common.pager,
            height=out.size.height,
            env=dict(env.environ),
            write=env.write_stdout,
            encoding=getattr(env.stdout, "encoding", None) or "utf-8",
        )
    emit_warnings(common, doc.warnings)
