"""`hermes-task recover`: the delegated tasks of a parent chat, optionally as a nested tree."""

from __future__ import annotations

from typing import Annotated

import typer

from hermes_task.cli.options import Common, with_common
from hermes_task.cli.shell import Known, connect, console, debug_writer, emit_warnings, resolve_settings, run
from hermes_task.cli.store import store_hints


@with_common(pager=False)
def recover(
    parent_id: Annotated[
        str,
        typer.Argument(
            help="The parent chat's session id (exactly as shown).", metavar="PARENT_ID", show_default=False
        ),
    ],
    recursive: Annotated[
        bool,
        typer.Option(
            "--recursive",
            help="Also read each task's child (when its id is known) and nest its own delegated tasks (depth <= 8).",
        ),
    ] = False,
    pages: Annotated[
        int | None,
        typer.Option(
            "--pages",
            min=1,
            help="Read at most N pages of each transcript (the newest 50 rows, then 500 per page), "
            "then warn that the list may be incomplete (default: every page).",
            show_default=False,
        ),
    ] = None,
    *,
    common: Common,
) -> None:
    """List the tasks a parent chat delegated: goal, status and child session when known.

    Reads PARENT_ID's transcript (GET only) and recovers its delegate_task spawn calls, their results and the async completion rows. The backends persist no child session id in the transcript: each task's child is looked up in the local Hermes store (by goal and order) and printed only once the dashboard confirms it. Feed the child id to show, follow or older.
    """

    def body(_known: Known) -> None:
        from hermes_task.core.ids import check_id

        parent = check_id(parent_id, what="PARENT_ID")
        with connect(common) as client, store_hints(resolve_settings(common), debug_writer(common)) as hints:
            from hermes_task.core.delegations import summarize
            from hermes_task.core.documents import TasksDoc
            from hermes_task.reading.storehints import find_children
            from hermes_task.reading.tasktree import build, read_conversation

            conversation = read_conversation(client, parent, hint=False, pages=pages)
            tasks, warnings = build(
                conversation,
                lambda sid: read_conversation(client, sid, hint=True, pages=pages, store=hints),
                recursive=recursive,
                resolve=lambda conv, found: find_children(client, hints, conv.messages, found),
            )
            warnings += hints.warnings()
        doc = TasksDoc(parent_id=parent, tasks=tasks, summary=summarize(tasks), warnings=warnings)
        from hermes_task.render import jsonout, terminal

        if common.json:
            common.env.write_stdout(jsonout.document(doc))
            return
        terminal.tasks(console(common), doc)
        emit_warnings(common, doc.warnings)

    run(common, body)
