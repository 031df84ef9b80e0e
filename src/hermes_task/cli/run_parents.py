"""`parents`' work: what `hermes-task parents` runs once typer has parsed its arguments
(`cli/parents.py` declares the command): the newest chats that called delegate_task, each
proven over HTTP (`reading/parentfinder.py`), written as JSON, a table or tab-separated lines.
"""

from __future__ import annotations

from hermes_task.cli.common import Common
from hermes_task.cli.endings import stderr_line
from hermes_task.cli.output import emit_warnings
from hermes_task.cli.session import Session
from hermes_task.cli.shell import run
from hermes_task.core.documents import ParentEntry, ParentsDoc, WarningItem
from hermes_task.reading.hints import find_parents
from hermes_task.render.jsontext import document


def run_parents(common: Common, *, limit: int = 10, header: bool = False, utc: bool = False) -> None:
    """The newest `limit` chats that delegated (`hermes-task parents --help`)."""

    def body(session: Session) -> None:
        resolved = session.settings
        store = session.open_store()  # not the session's hints: find_parents reads it whole
        path = str(resolved.store) if resolved.store is not None else None
        try:
            entries, warnings = find_parents(
                session.client, store, limit, off=resolved.store_off, path=path, debug=session.debug
            )
        finally:
            if store is not None:
                store.close()
        session.close()
        output(session, entries, warnings, header=header, utc=utc)

    run(Session(common), body)


def output(
    session: Session, entries: list[ParentEntry], warnings: list[WarningItem], *, header: bool, utc: bool
) -> None:
    """The chats as JSON, a table on a terminal, or tab-separated lines when piped."""
    common = session.common
    env = common.env
    if common.json:
        env.write_stdout(document(ParentsDoc(parents=entries, warnings=warnings)))
        return
    if not entries:
        stderr_line(common, "no chat in the store called delegate_task (that the dashboard shows)", "dim")
    elif env.isatty(env.stdout):
        from hermes_task.render import terminal  # lazy: rich, only for a listing as text

        session.console().print(terminal.parents_renderable(entries, utc=utc), crop=False)
    else:
        from hermes_task.render import terminal  # lazy: rich, only for a listing as text

        lines = terminal.parent_lines(entries, header=header, utc=utc)
        env.write_stdout("".join(line + "\n" for line in lines))
    emit_warnings(common, warnings)
