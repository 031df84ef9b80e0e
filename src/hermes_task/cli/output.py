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
from hermes_task.cli.shell import color_enabled, console


def plain_warning(message: str) -> str | None:
    """The line rich prints for `message` on a stderr without colour, when that is just the
    text (every character printable: no tab, control or zero-width character); else None."""
    return f"warning: {message}\n" if message.isprintable() else None


def emit_warnings(common: Common, warnings: list[Any]) -> None:
    """Warnings as `warning: ...` lines on stderr, but for the repeating ones under `--quiet`
    (JSON carries them all in the document)."""
    from hermes_task.cli.quiet import dropped

    warnings = [w for w in warnings if not dropped(common.quiet, w.code)]
    if common.json or not warnings:
        return
    stream = common.env.stderr
    if not color_enabled(common, stream):
        lines = [plain_warning(warning.message) for warning in warnings]
        if None not in lines:  # rich would print these very bytes: no need to import it
            stream.write("".join(line for line in lines if line is not None))
            stream.flush()
            return
    rich_warnings(common, [warning.message for warning in warnings])


def rich_warnings(common: Common, messages: list[str]) -> None:
    """`warning: MESSAGE` lines on stderr through rich (colour, or text rich must clean)."""
    from rich.text import Text

    err = console(common, stderr=True)
    for message in messages:
        line = Text("warning: ", style="bold yellow")
        line.append(message)
        err.print(line)


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
