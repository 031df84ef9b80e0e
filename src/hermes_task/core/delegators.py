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
from typing import Annotated, Literal

from msgspec import Meta, Struct, field

from hermes_task.core.children import StoreSession, is_delegated_child, same_profile
from hermes_task.core.documents import WarningItem
from hermes_task.core.sanitize import clean_line, is_valid_id

FIRST_WORDS = 100


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


class ParentEntry(Struct, frozen=True, kw_only=True):
    """One session that called `delegate_task`, proven over HTTP."""

    id: Annotated[
        str,
        Meta(description="The session id: what `recover PARENT_ID` and `follow --parent` take."),
    ]
    source: Annotated[
        str | None,
        Meta(description="The session's source (cli, telegram, subagent, ...)."),
    ]
    started_at: float | None
    ended_at: float | None
    end_reason: Annotated[
        str | None,
        Meta(description="Why it ended; `compression`: the chat continues in a newer segment."),
    ]
    state: Annotated[
        Literal["open", "ended"],
        Meta(description="`ended` when the dashboard shows an end time, else `open` (idle or running)."),
    ]
    title: Annotated[
        str | None,
        Meta(description="The session's title, from its detail; null when it has none."),
    ]
    first_words: Annotated[
        str | None,
        Meta(
            description="When it has no title: its first user row, on one line, at most 100 characters; else null."
        ),
    ]
    delegated_children: Annotated[
        int,
        Meta(
            description="Sessions the dashboard shows as delegated by this one (one per task whose child "
            "started), each proven by its own detail."
        ),
    ]
    more_children: Annotated[
        bool,
        Meta(description="True when the store proposed more children than were checked (the first 50)."),
    ]
    last_delegated_at: Annotated[
        float | None,
        Meta(description="When its newest proven child started: the list's order, newest first."),
    ]
    delegated_by: Annotated[
        str | None,
        Meta(description="The session that delegated this one, when it is itself a delegated child."),
    ]


class ParentsDoc(Struct, frozen=True, kw_only=True):
    schema_version: Literal[1] = 1
    kind: Literal["parents"] = "parents"
    parents: list[ParentEntry]
    warnings: list[WarningItem] = field(default_factory=list)


__all__ = ["FIRST_WORDS", "ParentEntry", "ParentsDoc", "children_of", "first_words", "propose_parents"]
