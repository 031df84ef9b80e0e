"""`hermes-task parents`: the newest chats that called delegate_task, where a PARENT_ID comes from."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from hermes_task.cli.common import Common
from hermes_task.cli.endings import stderr_line
from hermes_task.cli.options import Utc, command_app, with_common
from hermes_task.cli.output import emit_warnings
from hermes_task.cli.session import Session
from hermes_task.cli.shell import run

if TYPE_CHECKING:
    from hermes_task.core.delegators import ParentEntry
    from hermes_task.core.documents import WarningItem


app = command_app()


@app.command()
@with_common(pager=False)
def parents(
    limit: Annotated[
        int,
        typer.Option("--limit", metavar="N", min=1, max=100, help="List at most N chats (1-100)."),
    ] = 10,
    header: Annotated[
        bool, typer.Option("--header", help="Piped output: print the column names first.")
    ] = False,
    utc: Utc = False,
    *,
    common: Common,
) -> None:
    """List the newest chats that called delegate_task: the PARENT_ID recover and follow --parent take.

    The dashboard's local Hermes store proposes the parents of its newest delegated children
    (read-only; run on the dashboard's host, or pass --store PATH); each is printed only once
    the dashboard shows it and at least one child that names it as its delegation parent.
    Most recent delegation first: id, start, children proven, state, title (or its first user
    words). Piped, one tab-separated line per chat. Without a store: exit 12.
    """

    def body(session: Session) -> None:
        from hermes_task.reading.parentfinder import find_parents

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
    from hermes_task.core.delegators import ParentsDoc

    env = common.env
    if common.json:
        from hermes_task.render.jsontext import document

        env.write_stdout(document(ParentsDoc(parents=entries, warnings=warnings)))
        return
    if not entries:
        stderr_line(common, "no chat in the store called delegate_task (that the dashboard shows)", "dim")
    elif env.isatty(env.stdout):
        from hermes_task.render.parentsout import parents_renderable

        session.console().print(parents_renderable(entries, utc=utc), crop=False)
    else:
        from hermes_task.render.parentsout import parent_lines

        env.write_stdout("".join(line + "\n" for line in parent_lines(entries, header=header, utc=utc)))
    emit_warnings(common, warnings)
