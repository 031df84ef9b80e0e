"""Tasks whose child ended while the parent has no result for them (`recover`, `--watch`).

Hermes delivers a background task's completion as a new parent turn only when the parent agent
is idle; until then (or for good, when the parent process is gone) it holds it in the store's
`async_delegations` table. `Unreported` runs after `find_children` on a conversation's tasks:
for each task the parent has not reported (`running`, `unknown`) whose child id is known, it
proves the child's lineage to its newest segment as `show` does (exact-id, profile-checked
details; the dashboard's hint and the store's continuations while the newest segment ended by
compression) and reads that segment's state. Rules:

- Ownership first: the child's root detail must name a segment that carries the task's spawn
  call as both its parent and its `_delegate_from`. A child that fails decides nothing: its
  task stays as the parent says, and it is not read again.
- Ended means the newest *proven* segment ended for a reason other than compression (a rotated
  child's root ends at compression). Then the task is never `running`: the store's record of
  its delegation (one exact-id lookup) may propose its outcome (`core/ledger.py`), which the
  task takes with `result_source: "store"`; without a proposal it is `ended_unreported`. Both
  are terminal. A running or undecided child only sets `child_state`; the store's word alone
  never changes a task.
- Across a watch's cycles (`again`) each child's proof is kept: a running child costs one fresh
  detail read of its newest segment per check; at most `per_cycle` children are checked in one
  cycle, in turn; an ended child is not read again (only its record, until that proposes).
  `steady()` is False right after a task became `ended_unreported`: the watch looks at the
  store once more (a completion persisted a moment after the child closed) before ending on it.
- `shared` (reading/details.py): the details this run (`recover`) or cycle (a watch) read
  already, so a child whose proposal was just proven is not read again for its state.
- Each child's reads are sequential (one request in flight per child); different children are
  checked side by side (reading/fanout.py), and what they found is recorded in task order.
  `--debug` lines name the task, the child id and its state, never content.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

from msgspec.structs import replace

from hermes_task.core.delegations import RESULT_FIELDS, TERMINAL_STATUSES, call_sessions
from hermes_task.core.documents import TaskEntry
from hermes_task.core.ledger import LedgerRecord, Proposal, propose
from hermes_task.core.lineage import BoundReached
from hermes_task.core.verdict import UNREPORTED
from hermes_task.dashboard.wire import SessionDetail, WireMessage
from hermes_task.failures import HermesError
from hermes_task.reading.api import DashboardAPI
from hermes_task.reading.details import DetailReader, SharedDetails
from hermes_task.reading.discovery import LineageProof
from hermes_task.reading.fanout import gather
from hermes_task.reading.ownership import owned_by
from hermes_task.reading.storehints import StoreHints

MAX_CHECKS_PER_CYCLE = 8
ChildState = Literal["running", "ended", "unknown"]


def state_of(tip: SessionDetail) -> ChildState:
    """The state of a child's newest proven segment (as `show`'s `task.state`)."""
    if tip.end_reason == "compression":
        return "unknown"
    if tip.ended_at is None and tip.end_reason is None:
        return "running"
    return "ended"


class _Child(LineageProof):
    """One child's proven lineage and what the last check found, kept across checks."""

    def __init__(
        self, client: DashboardAPI, child_id: str, store: StoreHints, shared: SharedDetails | None
    ) -> None:
        super().__init__(client, child_id, hint=True, store=store)
        self.shared = shared
        self.owned: bool | None = None
        self.state: ChildState | None = None

    def check(self, segments: frozenset[str]) -> ChildState | None:
        """Prove the lineage to the newest segment and read its state; None when the child
        is not proven the task's. Failures raise `HermesError`."""
        reader = DetailReader(self.client, shared=self.shared)
        try:
            if self.owned is None:
                self.owned = owned_by(reader(self.anchor_id), segments)
            if not self.owned:
                return None
            if self._discover(reader) is not None:  # two proven continuations: no tip to read
                return "unknown"
            return state_of(reader(self.path[-1]))
        except BoundReached:
            return "unknown"


class Unreported:
    """A conversation's tasks as their children's proven ends make them (rules above)."""

    def __init__(
        self,
        client: DashboardAPI,
        hints: StoreHints,
        *,
        per_cycle: int | None = None,
        debug: Callable[[str], None] | None = None,
        shared: SharedDetails | None = None,
    ) -> None:
        self.client = client
        self.hints = hints
        self.shared = shared
        self.per_cycle = per_cycle
        self.debug = debug
        self.children: dict[str, _Child] = {}
        self.base: list[TaskEntry] = []
        self.segments: dict[str, frozenset[str]] = {}
        self.records: dict[str, LedgerRecord | None] = {}
        self.turn = 0
        self.ended: set[str] = set()
        self.fresh_ends = False

    def __call__(self, messages: Sequence[WireMessage], tasks: Sequence[TaskEntry]) -> list[TaskEntry]:
        """The tasks of `messages` (already resolved), settled; kept for `again`."""
        self.base = list(tasks)
        self.segments = call_sessions(messages)
        return self.again()

    def again(self) -> list[TaskEntry]:
        """The last tasks given, their children checked once more (at most `per_cycle`)."""
        self.records = {}
        self._check([t for t in self.base if self._open(t)])
        out = [self._settled(t) for t in self.base]
        now = {t.number or "" for t in out if t.status == UNREPORTED}
        self.fresh_ends = bool(now - self.ended)
        self.ended = now
        return out

    def steady(self) -> bool:
        """Has every `ended_unreported` task been seen so in the previous look too?"""
        return not self.fresh_ends

    @staticmethod
    def _open(task: TaskEntry) -> bool:
        return (
            task.status not in TERMINAL_STATUSES and task.child_session_id is not None and bool(task.call_id)
        )

    def _child(self, task: TaskEntry) -> _Child:
        ref = task.child_session_id
        assert ref is not None
        if ref not in self.children:
            self.children[ref] = _Child(self.client, ref, self.hints, self.shared)
        return self.children[ref]

    def _check(self, tasks: list[TaskEntry]) -> None:
        due: list[TaskEntry] = []
        refs: set[str] = set()
        for task in tasks:  # each child once (two tasks naming one child share its state)
            child = self._child(task)
            if child.owned is not False and child.state != "ended" and child.anchor_id not in refs:
                refs.add(child.anchor_id)
                due.append(task)
        if self.per_cycle is not None and len(due) > self.per_cycle:
            start = self.turn % len(due)
            due = (due[start:] + due[:start])[: self.per_cycle]
            self.turn = start + len(due)
        jobs = [
            lambda task=task: self._look(
                self._child(task), self.segments.get(task.call_id or "", frozenset())
            )
            for task in due
        ]
        for task, (state, seen) in zip(
            due, gather(jobs, what="child state checks", debug=self.debug), strict=True
        ):
            self._child(task).state = state
            self._say(f"task {task.number} child {task.child_session_id}: {seen}")

    @staticmethod
    def _look(child: _Child, segments: frozenset[str]) -> tuple[ChildState | None, str]:
        """One child's check (on a worker thread: it touches only this child)."""
        try:
            state = child.check(segments)
        except HermesError as exc:  # not read this time (Ctrl-C is no HermesError: it ends the run)
            return "unknown", f"unknown (not read: {exc.code.value})"
        return state, state or "not proven the task's child"

    def _settled(self, task: TaskEntry) -> TaskEntry:
        child = self.children.get(task.child_session_id or "") if self._open(task) else None
        if child is None or not child.owned or child.state is None:
            return task
        if child.state != "ended":
            return replace(task, child_state=child.state)
        proposal = self._proposal(task)
        if proposal is None:
            return replace(task, status=UNREPORTED, terminal=True, child_state="ended")
        filled = {
            name: getattr(proposal.result, name) if getattr(task, name) is None else getattr(task, name)
            for name in RESULT_FIELDS
        }
        return replace(
            task,
            status=proposal.status,
            terminal=True,
            child_state="ended",
            result_source="store",
            delivery_state=proposal.delivery_state,
            **filled,
        )

    def _proposal(self, task: TaskEntry) -> Proposal | None:
        deleg, index = task.delegation_id, task.task_index
        if deleg is None or index is None:
            return None
        if deleg not in self.records:
            self.records[deleg] = self.hints.delegation(deleg)
        record = self.records[deleg]
        found = None
        if record is not None:
            segments = self.segments.get(task.call_id or "", frozenset())
            found = propose(record, delegation_id=deleg, task_index=index, goal=task.goal, segments=segments)
        self._say(
            f"task {task.number} {deleg}: " + (f"store proposes {found.status}" if found else "no outcome")
        )
        return found

    def _say(self, line: str) -> None:
        if self.debug is not None:
            self.debug(f"unreported: {line}")


__all__ = ["MAX_CHECKS_PER_CYCLE", "Unreported", "state_of"]
