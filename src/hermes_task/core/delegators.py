"""The chats that delegated (`hermes-task parents`): what the store proposes, and the document.

Rules (docs/identity.md, "Where a parent id comes from"):

- The store proposes a session as a parent when one of its newest rows with a parent is a
  delegated child of it (`parent_session_id` and `_delegate_from` both name it: only
  Hermes' `delegate_task` writes that pair), of the profile in use, with both ids passing
  the id check. Proposals come in the order of their newest such child, each once.
- Nothing proposed is shown before HTTP proves it (`reading/parentfinder.py`): the
  parent's own exact-id, profile-checked detail, and at least one proposed child whose
  exact-id detail names the parent as its delegation parent. `delegated_children` counts
  the children proven that way, never the store's rows.
- Every text comes from HTTP and is sanitised: the title, or else the first words of the
  session's first user row (whitespace runs collapsed, at most `FIRST_WORDS` characters).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import field
from typing import Literal

from hermes_task.core.children import StoreSession, is_delegated_child, same_profile
from hermes_task.core.documents import WarningItem
from hermes_task.core.ids import is_valid_id
from hermes_task.core.sanitize import clean_line
from hermes_task.records import record

FIRST_WORDS = 100


def _doc(text: str) -> dict[str, str]:
    return {"description": text}


def propose_parents(rows: Sequence[StoreSession], profile: str | None, limit: int) -> list[str]:
    """The parents of the delegated children among `rows` (newest first), in the order of
    their newest child, each once, at most `limit` (module docstring)."""
    out: list[str] = []
    for row in rows:
        parent = row.parent_session_id
        if parent is None or parent in out or not (is_valid_id(parent) and is_valid_id(row.id)):
            continue
        if is_delegated_child(row, parent) and same_profile(row, profile):
            out.append(parent)
            if len(out) >= limit:
                break
    return out


def children_of(rows: Sequence[StoreSession], parent: str, profile: str | None) -> list[StoreSession]:
    """The store's delegated children of `parent` among `rows`, newest first (proposals)."""
    kids = [
        r for r in rows if is_delegated_child(r, parent) and same_profile(r, profile) and is_valid_id(r.id)
    ]
    return sorted(
        kids, key=lambda r: r.started_at if r.started_at is not None else float("-inf"), reverse=True
    )


def first_words(text: str | None) -> str | None:
    """A first user row as one sanitised line: whitespace runs collapsed, cut with `…`."""
    if text is None:
        return None
    flat = " ".join(clean_line(text).split())
    if not flat:
        return None
    return flat if len(flat) <= FIRST_WORDS else flat[: FIRST_WORDS - 1] + "…"


@record
class ParentEntry:
    """One session that called `delegate_task`, proven over HTTP."""

    id: str = field(metadata=_doc("The session id: what `recover PARENT_ID` and `follow --parent` take."))
    source: str | None = field(metadata=_doc("The session's source (cli, telegram, subagent, ...)."))
    started_at: float | None
    ended_at: float | None
    end_reason: str | None = field(
        metadata=_doc("Why it ended; `compression`: the chat continues in a newer segment.")
    )
    state: Literal["open", "ended"] = field(
        metadata=_doc("`ended` when the dashboard shows an end time, else `open` (idle or running).")
    )
    title: str | None = field(metadata=_doc("The session's title, from its detail; null when it has none."))
    first_words: str | None = field(
        metadata=_doc(
            "When it has no title: its first user row, on one line, at most 100 characters; else null."
        )
    )
    delegated_children: int = field(
        metadata=_doc(
            "Sessions the dashboard shows as delegated by this one (one per task whose child "
            "started), each proven by its own detail."
        )
    )
    more_children: bool = field(
        metadata=_doc("True when the store proposed more children than were checked (the first 50).")
    )
    last_delegated_at: float | None = field(
        metadata=_doc("When its newest proven child started: the list's order, newest first.")
    )
    delegated_by: str | None = field(
        metadata=_doc("The session that delegated this one, when it is itself a delegated child.")
    )


@record
class ParentsDoc:
    schema_version: Literal[1] = 1
    kind: Literal["parents"] = "parents"
    parents: list[ParentEntry]
    warnings: list[WarningItem] = field(default_factory=list)


__all__ = ["FIRST_WORDS", "ParentEntry", "ParentsDoc", "children_of", "first_words", "propose_parents"]
