"""The local store as the reading layer uses it: ids proposed by the store, proven over HTTP.

Invariant: nothing read from the store is shown or trusted. `StoreHints` wraps an optional
`Store` (off, or unavailable, as `settings` decided) and turns the first failure into one
`store_unavailable` warning; `find_children` proposes each task's child from the store
(`core/children.py` matching) and prints an id only after one exact-id, profile-checked
detail read shows it names the spawning segment as `parent_session_id` and
`_delegate_from`. A proposal the dashboard does not know (404) is dropped; when every
proposal of a run was unknown, the store is another dashboard's (`foreign`). Debug lines
name what was dropped and why, never content.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TypeVar

from hermes_task.core.children import (
    AMBIGUOUS,
    Spawn,
    StoreSession,
    StoreUnavailable,
    is_delegated_child,
    match,
    normalise_goal,
    same_profile,
    spawn_times,
)
from hermes_task.core.documents import TaskEntry, WarningItem
from hermes_task.core.ledger import LedgerRecord
from hermes_task.core.lineage import LineageRejected, parse_model_config
from hermes_task.core.messages import STORE_REASONS, warning_message
from hermes_task.core.wire import WireMessage
from hermes_task.failures import Code, HermesError
from hermes_task.reading.api import DashboardAPI, StoreAPI

DebugWriter = Callable[[str], None]
T = TypeVar("T")


class StoreHints:
    """An optional store; every lookup answers `None` once the store is off or failed."""

    def __init__(
        self, store: StoreAPI | None, off: str | None = None, *, debug: DebugWriter | None = None
    ) -> None:
        self.store = store
        self.off = off if store is None else None
        self.debug = debug
        self.warning: WarningItem | None = None
        self.reason: str | None = None
        self.failed = False
        self.tried = 0
        self.unknown = 0

    def _unavailable(self, reason: str) -> None:
        self.failed = self.failed or reason != "foreign"
        if self.warning is None:
            self.reason = reason
            detail = STORE_REASONS.get(reason, reason)
            self.warning = WarningItem(
                code="store_unavailable", message=warning_message("store_unavailable", detail)
            )

    def _call(self, lookup: Callable[[StoreAPI], T]) -> T | None:
        if self.store is None:
            self._unavailable(self.off or "disabled")
            return None
        try:
            return lookup(self.store)
        except StoreUnavailable as exc:
            self._unavailable(exc.reason)
            return None

    def children(self, session_id: str) -> list[StoreSession] | None:
        """The store's children of a session the dashboard showed; None (and the warning)
        when the store is unavailable or does not know that session (another dashboard's)."""
        found = self._call(lambda s: s.children(session_id))
        if found == [] and self._call(lambda s: s.knows(session_id)) is False:
            self._unavailable("foreign")
            return None
        return found

    def first_user_goal(self, session_id: str) -> str | None:
        return normalise_goal(self._call(lambda s: s.first_user_text(session_id)))

    def delegation(self, delegation_id: str) -> LedgerRecord | None:
        """The store's `async_delegations` record (a held completion); None when it has none
        or the store is unavailable (then the warning)."""
        return self._call(lambda s: s.delegation(delegation_id))

    def say(self, line: str) -> None:
        if self.debug is not None:
            self.debug(line)

    def proposal_checked(self, known: bool) -> None:
        """Count a proposal's HTTP outcome; all unknown means a foreign store."""
        self.tried += 1
        self.unknown += 0 if known else 1

    def warnings(self) -> list[WarningItem]:
        if self.tried and self.tried == self.unknown:
            self._unavailable("foreign")
        return [self.warning] if self.warning is not None else []

    def close(self) -> None:
        if self.store is not None:
            self.store.close()


def confirm_child(client: DashboardAPI, child_id: str, segment: str) -> str | None:
    """None when the dashboard confirms `child_id` as a child spawned by `segment`; else why not."""
    try:
        detail = client.detail(child_id)
    except HermesError as exc:
        if exc.code in (Code.NOT_FOUND, Code.IDENTITY_MISMATCH, Code.PROFILE_MISMATCH, Code.INCOMPATIBLE):
            return exc.code.value
        raise
    try:
        config = parse_model_config(detail) or {}
    except LineageRejected as exc:
        return exc.reason
    if detail.parent_session_id != segment or config.get("_delegate_from") != segment:
        return "names_another_parent"
    return None


def find_children(
    client: DashboardAPI, hints: StoreHints, messages: Sequence[WireMessage], tasks: Sequence[TaskEntry]
) -> list[TaskEntry]:
    """`tasks` with each missing child id proposed by the store and proven over HTTP;
    `child_ref_source` says where every id came from."""
    out = [replace(t, child_ref_source="transcript") if t.child_session_id else t for t in tasks]
    open_tasks = [i for i, t in enumerate(out) if t.child_session_id is None and t.call_id is not None]
    if not open_tasks:
        return out
    from hermes_task.core.delegations import call_sessions  # recover's parsing: not on show's path

    segments_of = call_sessions(messages)
    times = spawn_times(messages)
    spawns = [
        Spawn(
            key=i,
            goal=out[i].goal,
            segments=segments_of.get(out[i].call_id or "", frozenset()),
            spawned_at=times.get(out[i].call_id or ""),
        )
        for i in open_tasks
    ]
    rows: list[StoreSession] = []
    for segment in sorted({s for spawn in spawns for s in spawn.segments}):
        found = hints.children(segment)
        if found is None:
            return out
        rows += [r for r in found if is_delegated_child(r, segment) and same_profile(r, client.profile)]
    goals: dict[str, str | None] = {}
    for row in rows:
        goals[row.id] = hints.first_user_goal(row.id)
    if hints.failed:
        return out  # the store failed part-way: today's behaviour
    parent_of = {r.id: r.parent_session_id for r in rows}
    for key, proposal in match(spawns, rows, goals).items():
        task = out[key]
        if proposal == AMBIGUOUS:
            out[key] = replace(task, unavailable_reason=AMBIGUOUS)
            continue
        spawner = parent_of[proposal]
        assert spawner is not None
        why = confirm_child(client, proposal, spawner)
        hints.proposal_checked(why != Code.NOT_FOUND.value)
        if why is not None:
            hints.say(f"store: child proposal for task {key} dropped ({why})")
            continue
        out[key] = replace(task, child_session_id=proposal, child_ref_source="store", unavailable_reason=None)
    return out


__all__ = ["StoreHints", "confirm_child", "find_children"]
