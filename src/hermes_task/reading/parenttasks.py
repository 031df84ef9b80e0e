"""A parent chat's tasks document, read as `recover PARENT_ID` reads it (pure of typer and rich).

`read_parent_tasks` reads the parent (every page, or `pages`) through `reading/tasktree.py`,
fills the child ids its rows lack from the local store (proven over HTTP, `store/hints.py`),
settles the tasks whose child ended with no result (`reading/unreported.py`), and nests each
child's own tasks with `recursive`. `recover` and `export` both read through it, so the tasks
(and their `usage`) of an export are exactly `recover --json`'s.

Invariant: one run, one answer per session (`SharedDetails`): a detail read by one proof
serves every later reader; `paths` holds the proven lineage of every conversation read.
"""

from __future__ import annotations

from collections.abc import Callable

from msgspec import Struct

from hermes_task.core.documents import TasksDoc, TranscriptDoc
from hermes_task.core.verdict import summarize
from hermes_task.reading.api import DashboardAPI
from hermes_task.reading.details import SharedDetails
from hermes_task.reading.reader import TaskReader
from hermes_task.reading.tasktree import Conversation, build, conversation_of, read_history
from hermes_task.reading.unreported import Unreported
from hermes_task.store.hints import StoreHints, find_children


class ParentTasks(Struct, frozen=True, kw_only=True):
    """The tasks document; the proven lineage of every conversation read (by its id); and,
    when asked for, the parent's own transcript as `show` would document it."""

    doc: TasksDoc
    paths: dict[str, tuple[str, ...]]
    transcript: TranscriptDoc | None = None


def read_parent_tasks(
    client: DashboardAPI,
    hints: StoreHints,
    parent: str,
    *,
    shared: SharedDetails,
    recursive: bool = False,
    pages: int | None = None,
    debug: Callable[[str], None] | None = None,
    transcript: bool = False,
) -> ParentTasks:
    """The tasks of `parent` (module docstring); `transcript`: also the parent's transcript
    document (its rows: the spawn calls' times). Failures to read the parent raise."""
    paths: dict[str, tuple[str, ...]] = {}
    documents: dict[str, TranscriptDoc] = {}

    def read(sid: str, *, is_parent: bool = False) -> Conversation:
        reader = TaskReader(
            client, sid, hint=not is_parent, store=None if is_parent else hints, shared=shared
        )
        warnings = read_history(reader, pages)
        conversation = conversation_of(reader, warnings)
        paths[conversation.session_id] = conversation.path
        if is_parent and transcript:
            documents[sid] = reader.document(warnings)
        return conversation

    # With `recursive` a task's usage comes from its child's own read (reading/tasktree.py).
    settle = Unreported(client, hints, usage=not recursive, debug=debug, shared=shared)
    tasks, warnings = build(
        read(parent, is_parent=True),
        read,
        recursive=recursive,
        resolve=lambda conv, found: settle(
            conv.messages, find_children(client, hints, conv.messages, found, shared)
        ),
        read_detail=shared,
        debug=debug,
    )
    warnings += settle.warnings() + hints.warnings()
    doc = TasksDoc(parent_id=parent, tasks=tasks, summary=summarize(tasks), warnings=warnings)
    return ParentTasks(doc=doc, paths=paths, transcript=documents.get(parent))


__all__ = ["ParentTasks", "read_parent_tasks"]
