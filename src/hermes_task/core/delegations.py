"""The delegated tasks of one conversation, recovered from its transcript rows (pure).

Rules:

- Only `delegate_task` spawn calls count (an omitted or empty `action` means spawn; `list`,
  `steer`, `stop` and any other action are excluded), with their known results: the top-level
  result and its `results` entries. A control acknowledgement (`action`, `subagents`, a
  `queued` or `interrupt_requested` status) is never a spawn result, even under a spawn call's
  id, and a stop request is not evidence that a child stopped.
- A background `dispatched` result expands its `goals` (and iot `subagent_ids`, per-unit
  `delegation_id`s) into one task each, `running`, with no child reference. A legacy top-level
  `goal` argument is one task; a `tasks` list (or its JSON string) is one task each. A spawn
  call answered by an error payload spawned nothing.
- Async completion rows (user rows `[ASYNC DELEGATION BATCH COMPLETE — deleg_…]`,
  `[ASYNC DELEGATION COMPLETE — deleg_…]`, iot `[ASYNC DELEGATION TASK FAILED — deleg_…, task
  i/n]`) update the tasks of a delegation known from a spawn result (`completion.py`); a
  crashed batch (`--- ERROR ---`, no task blocks) makes its tasks `error`.
- Only recognised terminal statuses are terminal, and terminal is sticky: later progress never
  reopens a task. Missing or unfamiliar statuses stay non-terminal (`unknown`).
- A child reference is only a valid structured `child_session_id` of a `results` entry: never a
  nested `session_id`, task number, goal or log path (else `no_durable_child_reference`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from msgspec import Struct, field
from msgspec.structs import fields

from hermes_task.core import completion_rows as completion
from hermes_task.core import results as outcome
from hermes_task.core.documents import TaskEntry
from hermes_task.core.ids import is_valid_id
from hermes_task.core.ui_strings import TaskStatus
from hermes_task.core.wire import WireMessage

TOOL = "delegate_task"
# the statuses a parent records that end a task (`ended_unreported` is proven from the child)
TERMINAL_STATUSES = frozenset(s for s in TaskStatus if s.ends) - {TaskStatus.ended_unreported}
NO_REFERENCE = "no_durable_child_reference"
RESULT_FIELDS = tuple(f.name for f in fields(outcome.TaskResult))
_CONTROL_STATUSES = frozenset({"queued", "interrupt_requested"})


def number_order(number: str) -> tuple[tuple[int, int, str], ...]:
    """The sort key of a task number (`CALL.TASK`, or a nested `1.2.3`): its parts as numbers,
    so 1.9 comes before 1.10 (a part that is not a number sorts after the numbers, as text)."""
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in number.split("."))


def _json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except (ValueError, RecursionError):  # not JSON, or nested past the parser's limit
            return None
    return value


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _ident(value: object) -> str | None:
    return value if isinstance(value, str) and is_valid_id(value) else None


def _index(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def status_of(raw: object) -> TaskStatus:
    """A recorded status in the contract's vocabulary: a recognised terminal status or
    `running` as is, anything else (missing, `queued`, `success`, ...) `unknown`."""
    if isinstance(raw, str) and (raw in TERMINAL_STATUSES or raw == "running"):
        return TaskStatus[raw]  # a member's name is its value
    return TaskStatus.unknown


class _Task(Struct):
    index: int
    goal: str | None = None
    delegation_id: str | None = None
    subagent_id: str | None = None
    child: str | None = None
    status: TaskStatus = TaskStatus.unknown
    result: outcome.TaskResult = outcome.EMPTY

    def update(self, status: TaskStatus, result: outcome.TaskResult | None = None) -> None:
        """A reported status (terminal is sticky) and outcome (known fields are kept)."""
        if self.status not in TERMINAL_STATUSES:
            self.status = status
        self.result = self.result.merged(result)


class _Call(Struct):
    call_id: str | None
    goals: list[str | None]
    number: int
    tasks: dict[int, _Task] = field(default_factory=dict)
    answered: bool = False
    failed: bool = False

    def task(self, index: int) -> _Task:
        if index not in self.tasks:
            goal = self.goals[index] if index < len(self.goals) else None
            self.tasks[index] = _Task(index, goal)
        return self.tasks[index]


def _spawn_goals(arguments: Any) -> list[str | None] | None:
    """The goals of a spawn call's arguments, or None when the call is not a spawn."""
    args = _json(arguments)
    if not isinstance(args, dict):
        args = {}  # unreadable arguments: the action is omitted, so it is a spawn
    action = args.get("action")
    if action is not None and not (isinstance(action, str) and action.strip().lower() in ("", "spawn")):
        return None
    tasks = _json(args.get("tasks"))
    if isinstance(tasks, list) and tasks:
        return [_text(t.get("goal")) if isinstance(t, dict) else None for t in tasks]
    goal = args.get("goal")
    return [goal] if isinstance(goal, str) and goal.strip() else []


def _tool_calls(msg: WireMessage) -> list[dict[str, Any]]:
    calls = _json(msg.tool_calls)
    return [c for c in calls if isinstance(c, dict)] if isinstance(calls, list) else []


def _is_control_ack(payload: dict[str, Any]) -> bool:
    action = payload.get("action")
    return (
        (action is not None and action != "spawn")
        or "subagents" in payload
        or payload.get("status") in _CONTROL_STATUSES
    )


def _unit_delegations(raw_units: Any) -> dict[int, str | None]:
    """Task index -> its unit's delegation id, from a dispatch's `units` (a later unit naming
    the same index wins)."""
    units: dict[int, str | None] = {}
    for unit in raw_units if isinstance(raw_units, list) else []:
        if isinstance(unit, dict) and isinstance(unit.get("task_indexes"), list):
            for i in unit["task_indexes"]:
                if _index(i) is not None:
                    units[i] = _ident(unit.get("delegation_id"))
    return units


class _Recovery:
    def __init__(self) -> None:
        self.calls: dict[str, _Call] = {}
        self.order: list[_Call] = []
        # each task once per delegation (by identity, in order); by task index when a completion asks
        self.delegations: dict[str, dict[int, _Task]] = {}
        self.by_index: dict[str, dict[int, list[_Task]]] = {}
        self.sessions: dict[str, set[str]] = {}

    def add_call(self, msg: WireMessage, call: dict[str, Any]) -> None:
        fn = call.get("function")
        name, arguments = (fn.get("name"), fn.get("arguments")) if isinstance(fn, dict) else (None, None)
        call_id = _text(call.get("id"))
        if name != TOOL:
            return
        if call_id is not None:
            if call_id in self.sessions:  # the same call on a cloned row counts once
                self.sessions[call_id].add(msg.session_id)
                return
            self.sessions[call_id] = {msg.session_id}
        goals = _spawn_goals(arguments)
        if goals is None:
            return
        entry = _Call(call_id, goals, len(self.order) + 1)
        self.order.append(entry)
        if call_id is not None:
            self.calls[call_id] = entry

    def _register(self, delegation_id: str | None, tasks: Iterable[_Task]) -> None:
        if delegation_id is not None:
            known = self.delegations.setdefault(delegation_id, {})
            for task in tasks:
                known.setdefault(id(task), task)
            self.by_index.pop(delegation_id, None)

    def _indexed(self, delegation_id: str) -> dict[int, list[_Task]]:
        if delegation_id not in self.by_index:
            table = self.by_index[delegation_id] = {}
            for task in self.delegations.get(delegation_id, {}).values():
                table.setdefault(task.index, []).append(task)
        return self.by_index[delegation_id]

    def add_result(self, call: _Call, payload: Any) -> None:
        if call.answered or call.failed or not isinstance(payload, dict) or _is_control_ack(payload):
            return
        results = payload.get("results")
        if isinstance(results, list):
            self._add_finished(call, payload, results)
        elif payload.get("status") == "dispatched":
            self._add_dispatched(call, payload)
        elif "error" in payload:
            call.failed = True

    def _add_finished(self, call: _Call, payload: dict[str, Any], results: list[Any]) -> None:
        """A blocking spawn's result: one entry per task, in order or by `task_index`."""
        call.answered = True
        top = _ident(payload.get("delegation_id"))
        for position, entry in enumerate(results):
            if not isinstance(entry, dict):
                continue
            index = _index(entry.get("task_index"))
            task = call.task(position if index is None else index)
            task.goal = task.goal or _text(entry.get("goal"))
            task.delegation_id = task.delegation_id or _ident(entry.get("delegation_id")) or top
            task.subagent_id = task.subagent_id or _ident(entry.get("subagent_id"))
            task.child = task.child or _ident(entry.get("child_session_id"))
            task.update(status_of(entry.get("status")), outcome.from_entry(entry))
            self._register(task.delegation_id, [task])
        self._register(top, call.tasks.values())

    def _add_dispatched(self, call: _Call, payload: dict[str, Any]) -> None:
        """A background spawn's dispatch: every task running, under its unit's delegation."""
        call.answered = True
        goals = payload.get("goals")
        if isinstance(goals, list) and goals:
            # The dispatch's goals are authoritative, but a null entry says nothing: the
            # goal the call's arguments gave for that task stays.
            known = call.goals
            call.goals = [_text(g) or (known[i] if i < len(known) else None) for i, g in enumerate(goals)]
            call.tasks = {}
        top = _ident(payload.get("delegation_id"))
        units = _unit_delegations(payload.get("units"))
        sids = payload.get("subagent_ids")
        sids = sids if isinstance(sids, list) else []
        for i in range(len(call.goals)):
            task = call.task(i)
            task.delegation_id = units.get(i) or top
            task.subagent_id = _ident(sids[i]) if i < len(sids) else None
            task.update(TaskStatus.running)
            self._register(task.delegation_id, [task])
        self._register(top, call.tasks.values())

    def goal_of(self, delegation_id: str, index: int) -> str | None:
        return next((t.goal for t in self._indexed(delegation_id).get(index, [])), None)

    def add_completion(self, msg: WireMessage) -> None:
        """Statuses from a completion row, for a delegation known from a spawn result."""
        done = completion.parse(msg, self.goal_of)
        tasks = list(self.delegations.get(done.delegation_id, {}).values()) if done else []
        if done is None or not tasks:
            return
        if done.kind == "batch_error":
            for task in tasks:
                task.update(TaskStatus.error)
        elif done.kind == "single":
            if len(tasks) == 1:
                tasks[0].update(status_of(done.updates[0][1]), done.updates[0][2])
        else:
            table = self._indexed(done.delegation_id)
            for index, status, result in done.updates:
                for task in table.get(index, []):
                    task.update(status_of(status), result)

    def entries(self) -> list[TaskEntry]:
        out: list[TaskEntry] = []
        for call in self.order:
            if call.failed:
                continue
            for index in sorted(set(range(len(call.goals))) | set(call.tasks)):
                task, done = call.task(index), call.task(index).result
                out.append(
                    TaskEntry(
                        call_id=call.call_id,
                        goal=task.goal,
                        task_index=task.index,
                        delegation_id=task.delegation_id,
                        subagent_id=task.subagent_id,
                        child_session_id=task.child,
                        status=task.status,
                        terminal=task.status in TERMINAL_STATUSES,
                        unavailable_reason=None if task.child else NO_REFERENCE,
                        call_number=call.number,
                        number=f"{call.number}.{task.index + 1}",
                        result_source="parent" if task.status in TERMINAL_STATUSES else None,
                        **{name: getattr(done, name) for name in RESULT_FIELDS},
                    )
                )
        return out


def _walk(messages: Sequence[WireMessage], *, whole: bool = True) -> _Recovery:
    rec = _Recovery()
    for msg in messages:  # every pass is linear in rows
        if msg.role != "tool":
            for call in _tool_calls(msg):
                rec.add_call(msg, call)
    for msg in messages if whole else ():
        if msg.role == "tool" and msg.tool_call_id in rec.calls:
            rec.add_result(rec.calls[msg.tool_call_id], _json(msg.content))
    for msg in messages if whole else ():
        rec.add_completion(msg)
    return rec


def recover(messages: Sequence[WireMessage]) -> list[TaskEntry]:
    """The delegated tasks of a transcript, in call order then task index (rules above).

    Pure and order-stable: the same rows always give the same list; a call id seen twice
    (a cloned row) counts once, and a second result for the same call is ignored."""
    return _walk(messages).entries()


def call_sessions(messages: Sequence[WireMessage]) -> dict[str, frozenset[str]]:
    """For each delegate_task call id, the session ids of the rows that carry it: the
    segments a child spawned by that call may name as its parent."""
    return {k: frozenset(v) for k, v in _walk(messages, whole=False).sessions.items()}
