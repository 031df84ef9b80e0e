"""Command output of transcripts: the JSON document, the Markdown document (`--format
markdown`), the plain painter's lines (not a terminal, no colour), or the terminal painter's
rows (colour, wrapping, Markdown; paged when taller than the screen), and the warnings on
stderr. Where the output goes and how it may
look is one explicit `Target` (`Session.target`).

Invariant: with `--json` stdout carries exactly the document; otherwise rows go to stdout
(or the pager) and warnings to stderr, never mixed.
"""

from __future__ import annotations

from typing import Any

from hermes_task.cli.common import Common, OutputFormat
from hermes_task.cli.endings import stderr_line
from hermes_task.cli.quiet import dropped
from hermes_task.cli.session import Session
from hermes_task.render.jsontext import document


def emit_warnings(common: Common, warnings: list[Any]) -> None:
    """Warnings as `warning: ...` lines on stderr, but for the repeating ones under `--quiet`
    (JSON carries them all in the document)."""
    if common.json:
        return
    for warning in warnings:
        if not dropped(common.quiet, warning.code):
            stderr_line(common, f"warning: {warning.message}", "bold yellow")


def output_transcript(session: Session, doc: Any, **view: Any) -> None:
    """A transcript document as JSON, or painted rows (paged on a tall terminal) plus warnings."""
    common = session.common
    env = common.env
    if common.json:
        env.write_stdout(document(doc))
        return
    from hermes_task.render.rows import View  # lazy: the row model (2 ms), not on --json's path

    if common.output_format is OutputFormat.markdown:
        from hermes_task.render.report import transcript_markdown  # lazy: only --format markdown

        for chunk in transcript_markdown(doc, View(**view)):
            env.write_stdout(chunk)  # a document: never paged, never coloured
        emit_warnings(common, doc.warnings)
        return
    out = session.target
    if out.plain:
        from hermes_task.render.rows import transcript_chunks  # lazy: as View

        for chunk in transcript_chunks(doc, View(**view), out.columns):
            env.write_stdout(chunk)  # written as it is formatted
        emit_warnings(common, doc.warnings)
        return
    from hermes_task.render import terminal_rows  # lazy: rich's cell widths, only on a terminal

    if common.pager is False or not out.tty:
        terminal_rows.transcript(out, doc, View(**view))
    else:
        from hermes_task.cli import pager  # lazy: subprocess, only on a terminal

        stream = pager.Stream(
            requested=common.pager,
            height=out.height,
            env=dict(env.environ),
            write=env.write_stdout,
            encoding=getattr(env.stdout, "encoding", None) or "utf-8",
        )
        try:  # painted from sanitised text, about 200 rows at a time: all the pager sees
            terminal_rows.transcript(out.to(stream.feed), doc, View(**view))
        finally:
            stream.close()
    emit_warnings(common, doc.warnings)
