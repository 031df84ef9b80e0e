"""Tasks whose child ended while the parent has no result for them, and every task's usage.

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
  its delegation (one exact-id lookup) may propose its outcome (`core/delegations.py`), which the
  task takes with `result_source: "store"`; without a proposal it is `ended_unreported`. Both
  are terminal. A running or undecided child only sets `child_state`; the store's word alone
  never changes a task.
- Across a watch's cycles (`again`) each child's proof is kept: a running child costs one fresh
  detail read of its newest segment per check; at most `per_cycle` children are checked in one
  cycle, in turn; an ended child is not read again (only its record, until that proposes).
  `steady()` is False right after a task became `ended_unreported`: the watch looks at the
  store once more (a completion persisted a moment after the child closed) before ending on it.
- Usage (`usage=True`: `recover`, `recover --watch`): the children of terminal tasks are proven
  too, each once a cycle until its newest segment is proven ended (after the open tasks' in a
  watch's turn), and every task whose child is proven takes `usage` from that proof
  (`reading/childproof.py`); `steady()` is also False while a terminal task's child has never
  been checked, so a watch's last events carry it. At most `MAX_USAGE_CHILDREN` such children
  are proven in one run; the tasks past it have no usage, and `warnings()` names them.
- `shared` (reading/details.py): the details this run (`recover`) or cycle (a watch) read
  already, so a child whose proposal was just proven is not read again for its state.
- Each child's reads are sequential (one request in flight per child); different children are
  checked side by side (reading/fanout.py), and what they found is recorded in task order.
  `--debug` lines name the task, the child id and its state, never content.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from msgspec.structs import replace

from hermes_task.core.delegations import (
    RESULT_FIELDS,
    TERMINAL_STATUSES,
    LedgerRecord,
    Proposal,
    call_sessions,
    number_order,
    propose,
)
from hermes_task.core.documents import TaskEntry, WarningItem, warning
from hermes_task.core.ui_strings import RECOVER, TaskStatus, WarningCode
from hermes_task.core.wire import WireMessage
from hermes_task.failures import HermesError
from hermes_task.reading.api import DashboardAPI
from hermes_task.reading.childproof import ChildProof, ChildState, state_of
from hermes_task.reading.details import SharedDetails
from hermes_task.reading.fanout import gather
from hermes_task.reading.hints import StoreHints
from hermes_task.reading.polling import FINAL_RETRIES

MAX_CHECKS_PER_CYCLE = 8
NOT_READ = "unknown (not read: "
MAX_USAGE_CHILDREN = 100  # children of terminal tasks proven for their usage in one run


class Unreported:
    """A conversation's tasks as their children's proven ends make them (rules above)."""

    def __init__(
        self,
        client: DashboardAPI,
        hints: StoreHints,
        *,
        per_cycle: int | None = None,
        usage: bool = False,
        debug: Callable[[str], None] | None = None,
        warn: Callable[[WarningItem], None] | None = None,
        shared: SharedDetails | None = None,
    ) -> None:
        self.client = client
        self.hints = hints
        self.shared = shared
        self.per_cycle = per_cycle
        self.usage = usage  # also prove the children of terminal tasks, for their usage
        self.debug = debug
        self.warn = warn  # a watch's reporter: told `warnings()` once, when they first appear
        self.children: dict[str, ChildProof] = {}
        self.base: list[TaskEntry] = []
        self.segments: dict[str, frozenset[str]] = {}
        self.records: dict[str, LedgerRecord | None] = {}
        self.turn = 0
        self.ended: set[str] = set()
        self.fresh_ends = False
        self.admitted: set[str] = set()  # children proven for a terminal task's usage
        self.unproven: set[str] = set()  # the numbers of the tasks the bound left without usage
        self.warned = False
        self.failures: dict[str, int] = {}  # transient failures of each child's check, in a row
        self.locked = False  # the last look at the store's records met a lock

    def __call__(self, messages: Sequence[WireMessage], tasks: Sequence[TaskEntry]) -> list[TaskEntry]:
        """The tasks of `messages` (already resolved), settled; kept for `again`."""
        self.base = list(tasks)
        self.segments = call_sessions(messages)
        return self.again()

    def again(self) -> list[TaskEntry]:
        """The last tasks given, their children checked once more (at most `per_cycle`)."""
        self.records = {}
        if self.locked:  # the store met a lock last time: counted, so a lasting one ends
            self.failures["store"] = self.failures.get("store", 0) + 1
        self.locked = False
        opened = [t for t in self.base if self._open(t)]
        closed = [t for t in self.base if self.usage and self._closed(t) and self._admit(t)]
        first = [t for t in closed if self._child(t).state is None]
        self._check(opened + first + [t for t in closed if t not in first])
        out = [self._settled(t) for t in self.base]
        now = {t.number or "" for t in out if t.status == TaskStatus.ended_unreported}
        self.fresh_ends = bool(now - self.ended)
        self.ended = now
        if self.warn is not None and self.unproven and not self.warned:
            self.warned = True
            for item in self.warnings():
                self.warn(item)
        return out

    def steady(self) -> bool:
        """Has every `ended_unreported` task been seen so in the previous look too, and (with
        `usage`) every terminal task's child been checked once?"""
        unchecked = any(
            self._child(t).state is None and self._child(t).owned is not False
            for t in self.base
            if self.usage and self._closed(t) and t.child_session_id in self.admitted
        )
        return not self.fresh_ends and not unchecked and not self.locked

    def warnings(self) -> list[WarningItem]:
        """`bound_reached` when `MAX_USAGE_CHILDREN` left tasks without usage."""
        if not self.unproven:
            return []
        tasks = ", ".join(sorted(self.unproven, key=number_order))
        detail = RECOVER["usage_bound"].format(n=MAX_USAGE_CHILDREN, tasks=tasks)
        return [warning(WarningCode.bound_reached, detail)]

    def _admit(self, task: TaskEntry) -> bool:
        """May this terminal task's child be proven for its usage (`MAX_USAGE_CHILDREN`)?"""
        ref = task.child_session_id or ""
        proven = ref in self.children and self.children[ref].state is not None
        if proven or ref in self.admitted or len(self.admitted) < MAX_USAGE_CHILDREN:
            self.admitted.add(ref)
            self.unproven.discard(task.number or "")
            return True
        self.unproven.add(task.number or "?")
        return False

    @staticmethod
    def _open(task: TaskEntry) -> bool:
        return (
            task.status not in TERMINAL_STATUSES and task.child_session_id is not None and bool(task.call_id)
        )

    @staticmethod
    def _closed(task: TaskEntry) -> bool:
        return task.status in TERMINAL_STATUSES and task.child_session_id is not None and bool(task.call_id)

    def _child(self, task: TaskEntry) -> ChildProof:
        ref = task.child_session_id
        assert ref is not None
        if ref not in self.children:
            self.children[ref] = ChildProof(self.client, ref, self.hints, shared=self.shared)
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
            ref = task.child_session_id or ""
            if state is None and seen.startswith(NOT_READ):  # asked again, `FINAL_RETRIES` times
                self.failures[ref] = self.failures.get(ref, 0) + 1
                state = "unknown" if self.failures[ref] > FINAL_RETRIES else None
            self._child(task).state = state
            self._say(f"task {task.number} child {task.child_session_id}: {seen}")

    @staticmethod
    def _look(child: ChildProof, segments: frozenset[str]) -> tuple[ChildState | None, str]:
        """One child's check (on a worker thread: it touches only this child). A transient
        failure leaves it unchecked (None), to be checked again; any other is `unknown`."""
        try:
            state = child.check(segments)
        except HermesError as exc:  # not read this time (Ctrl-C is no HermesError: it ends the run)
            return (None if exc.retryable else "unknown"), f"{NOT_READ}{exc.code.value})"
        return state, state or "not proven the task's child"

    def _settled(self, task: TaskEntry) -> TaskEntry:
        child = self.children.get(task.child_session_id or "") if task.call_id else None
        if child is not None and child.owned and child.usage is not None:
            task = replace(task, usage=child.usage)
        if child is None or not self._open(task) or not child.owned or child.state is None:
            return task
        if child.state != "ended":
            return replace(task, child_state=child.state)
        locks = self.hints.locks
        proposal = self._proposal(task)
        if proposal is None and self.hints.locks != locks and self.failures.get("store", 0) <= FINAL_RETRIES:
            # The store's record could not be read for now: nothing decided, asked again.
            self.locked = True
            return replace(task, child_state="ended")
        if proposal is None:
            return replace(task, status=TaskStatus.ended_unreported, terminal=True, child_state="ended")
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


__all__ = ["MAX_CHECKS_PER_CYCLE", "MAX_USAGE_CHILDREN", "Unreported", "state_of"]
