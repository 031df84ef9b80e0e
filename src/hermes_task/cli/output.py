"""Command output of transcripts: the JSON document, plain text (not a terminal, no colour:
the bytes rich would print, formatted without rich and written as they are formatted), or
rich on a terminal (paged when taller than the screen), and the warnings on stderr.

Invariant: with `--json` stdout carries exactly the document; otherwise rows go to stdout
(or the pager) and warnings to stderr, never mixed.
"""

from __future__ import annotations

from typing import Any

from hermes_task.cli.common import Common
from hermes_task.cli.environment import columns
from hermes_task.cli.shell import color_enabled, console, stderr_line


def emit_warnings(common: Common, warnings: list[Any]) -> None:
    """Warnings as `warning: ...` lines on stderr, but for the repeating ones under `--quiet`
    (JSON carries them all in the document)."""
    from hermes_task.cli.quiet import dropped

    if common.json:
        return
    for warning in warnings:
        if not dropped(common.quiet, warning.code):
            stderr_line(common, f"warning: {warning.message}", "bold yellow")


def output_transcript(common: Common, doc: Any, **view: bool) -> None:
    """A transcript document as JSON, or rendered rows (paged on a tall terminal) plus warnings."""
    env = common.env
    if common.json:
        from hermes_task.render import jsonout

        env.write_stdout(jsonout.document(doc))
        return
    tty = env.isatty(env.stdout)
    if not tty and not color_enabled(common, env.stdout):
        from hermes_task.render.plain_rows import Style, transcript_chunks

        for chunk in transcript_chunks(doc, Style(**view), columns(env.environ)):
            env.write_stdout(chunk)  # the same bytes rich prints here, without rich
        emit_warnings(common, doc.warnings)
        return
    from hermes_task.render import terminal

    out = console(common)
    reasoning, full, utc = (view.get(flag, False) for flag in ("reasoning", "full", "utc"))
    if common.pager is False or not tty:
        terminal.transcript(
            out, doc, markdown=tty, reasoning=reasoning, full=full, utc=utc, write=env.write_stdout
        )
    else:
        from hermes_task.cli import pager

        stream = pager.Stream(
            requested=common.pager,
            height=out.size.height,
            env=dict(env.environ),
            write=env.write_stdout,
            encoding=getattr(env.stdout, "encoding", None) or "utf-8",
        )
        try:  # rich's rendering of sanitised text, about 200 rows at a time: all the pager sees
            terminal.transcript(
                out, doc, markdown=True, reasoning=reasoning, full=full, utc=utc, write=stream.feed
            )
        finally:
            stream.close()
    emit_warnings(common, doc.warnings)
