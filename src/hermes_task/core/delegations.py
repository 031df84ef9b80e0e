"""The delegated tasks of one conversation, recovered from its transcript rows, with their outcomes
(pure, sanitised): docs/commands.md (`recover`: "Numbering", "Results", "What counts", "Statuses",
"Child sessions"), and for `propose` docs/identity.md ("Completions the parent has not received").
Beyond them:

- A control acknowledgement (`action`, `subagents`, a `queued` or `interrupt_requested` status) is
  never a spawn result, even under a spawn call's id. A `dispatched` result's tasks (its `goals`,
  iot's `subagent_ids` and per-unit `delegation_id`s) are `running`.
- A completion row whose `display_metadata` names another delegation than its header is ignored; a
  task's known goal is skipped before its status is read, so a goal cannot forge a status; a crashed
  batch (`--- ERROR ---`, no task blocks) makes its tasks `error`.
- Every outcome field is typed or null (numbers finite and non-negative, counts never bools);
  merging two results only fills null fields (the first source wins).
- `propose`: a unit without `results` is one task, the document itself; a crashed batch gives each
  task its status and error; `delivery_state` is kept only when one short word.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, Literal

from msgspec import Struct, field
from msgspec.structs import fields, replace

from hermes_task.core.documents import TaskEntry, TaskTokens, ToolTraceCounts
from hermes_task.core.lineage import json_value, normalise_goal
from hermes_task.core.projection import content_text
from hermes_task.core.sanitize import clean, clean_line, is_valid_id
from hermes_task.core.ui_strings import TaskStatus
from hermes_task.core.wire import WireMessage, amount, count


class TaskResult(Struct, frozen=True):
    """One task's reported outcome; every field optional."""

    summary: str | None = None
    duration_seconds: float | None = None
    exit_reason: str | None = None
    api_calls: int | None = None
    model: str | None = None
    tokens: TaskTokens | None = None
    error: str | None = None
    tool_trace: ToolTraceCounts | None = None

    def merged(self, other: TaskResult | None) -> TaskResult:
        """This result with its null fields taken from `other`."""
        fill = {
            f.name: getattr(other, f.name)
            for f in fields(self)
            if getattr(self, f.name) is None and getattr(other, f.name, None) is not None
        }
        return replace(self, **fill) if fill else self


EMPTY = TaskResult()


def _prose(value: object, *, line: bool = False) -> str | None:
    """`value` cleaned (`clean_line` for a one-line field) and stripped; None unless text."""
    text = (clean_line if line else clean)(value).strip() if isinstance(value, str) else ""
    return text or None


def from_entry(entry: dict[str, Any]) -> TaskResult:
    """The outcome a `results` entry (or a store record's) reports."""
    tokens, trace = entry.get("tokens"), entry.get("tool_trace")
    given, taken = (count(tokens.get(k)) if isinstance(tokens, dict) else None for k in ("input", "output"))
    steps = [step for step in trace if isinstance(step, dict)] if isinstance(trace, list) else None
    errors = sum(step.get("status") not in (None, "ok") for step in steps or ())
    return TaskResult(
        summary=_prose(entry.get("summary")),
        duration_seconds=amount(entry.get("duration_seconds")),
        exit_reason=_prose(entry.get("exit_reason"), line=True),
        api_calls=count(entry.get("api_calls")),
        model=_prose(entry.get("model"), line=True),
        tokens=None if given is None and taken is None else TaskTokens(input=given, output=taken),
        error=_prose(entry.get("error")),
        tool_trace=None if steps is None else ToolTraceCounts(calls=len(steps), errors=errors),
    )


_MODEL = re.compile(r"(?m)^Role: \S+ +Model: (\S+)")
_BLOCK_HEAD = re.compile(
    r"  \(status=([A-Za-z_]+)(?:, api_calls=(\d+))?(?:, (\d+(?:\.\d+)?)s)?(?:, TRUNCATED[^)\n]*)?\) ---"
)
_STATUS_LINE = re.compile(
    r"(?m)^Status: ([A-Za-z_]+)(?: +API calls: (\d+))? +Duration: (\d+(?:\.\d+)?)s[^\n]*$"
)
_NO_SUMMARY = re.compile(r"\(no summary — status=[A-Za-z_]+(?:: (.*))?\)\Z", re.S)
_PARTIAL = "\nPartial output:\n"
_LIVE = re.compile(r"(?m)^Full live transcript \(complete tool/assistant trace\): .*$")


def unit_model(preamble: str) -> str | None:
    """The last `Role: … Model: …` line before the first task block (a quoted one cannot win)."""
    found = list(_MODEL.finditer(preamble))
    return _prose(found[-1].group(1), line=True) if found else None


def _text_result(head: re.Match[str], summary: str, model: str | None, error: str | None) -> TaskResult:
    """The outcome of a status header (its groups: status, API calls, seconds) and its body."""
    calls, seconds = head.group(2, 3)
    return TaskResult(
        summary=_prose(summary),
        duration_seconds=None if seconds is None else amount(float(seconds)),
        api_calls=None if calls is None else int(calls),
        model=model,
        error=_prose(error),
    )


def block_result(rest: str, model: str | None) -> tuple[str | None, TaskResult]:
    """A batch block's raw status and result, from its `  (status=…) ---` header on (none unreadable)."""
    head = _BLOCK_HEAD.match(rest)
    if head is None:
        return None, EMPTY
    status = head.group(1)
    body = _LIVE.sub("", rest[head.end() :]).strip("\n")
    summary, error = body, None
    if status not in ("completed", "success"):
        empty = _NO_SUMMARY.match(body)
        if empty is not None:
            summary, error = "", empty.group(1)
        elif body.startswith(f"({status}: ") and _PARTIAL in body:
            first, _sep, summary = body.partition(_PARTIAL)
            error = first[len(status) + 3 : -1] if first.endswith(")") else None
        elif body.startswith("Partial output:\n"):
            summary = body[len("Partial output:\n") :]
    return status, _text_result(head, summary, model, error)


_HEADER = re.compile(
    r"\s*\[ASYNC DELEGATION (BATCH COMPLETE|COMPLETE|TASK FAILED) — ([^\]\s,]+)(?:, task (\d+)/\d+)?\]"
)
_BLOCK = re.compile(r"(?m)^--- \S+ TASK (\d+)/\d+")
_LINE_STATUS = re.compile(r"(?m)^Status: ([A-Za-z_]+) ")
_FAILED_LEAD = "The subagent did not complete successfully (status={})."
_INTERRUPTED_LEAD = "The subagent was interrupted before completing: "

GoalOf = Callable[[str, int], "str | None"]


class Completion(Struct, frozen=True):
    """One completion row: per task index (0-based, call-wide) a raw status (None: unread) and outcome."""

    delegation_id: str
    kind: Literal["batch", "batch_error", "single", "task_failed"]
    updates: tuple[tuple[int, str | None, TaskResult], ...] = ()


def _after(text: str, label: str, goal: str | None, *, anywhere: bool) -> str:
    """`text` after `label + goal` (at its start unless `anywhere`), so a goal is never read as a status."""
    if goal:
        at = text.find(label + goal) if anywhere else (0 if text.startswith(label + goal) else -1)
        if at >= 0:
            return text[at + len(label) + len(goal) :]
    return text


def parse_completion(msg: WireMessage, goal_of: GoalOf) -> Completion | None:
    """The completion a user row reports, or None; `goal_of(delegation_id, index)`: a known goal."""
    text = content_text(msg.content) if msg.role == "user" else None
    head = _HEADER.match(text or "")
    if text is None or head is None:
        return None
    kind, delegation_id = head.group(1), head.group(2)
    meta = msg.display_metadata
    claimed = meta.get("delegation_id") if isinstance(meta, dict) else None
    if isinstance(claimed, str) and claimed and claimed != delegation_id:
        return None
    body = text[head.end() :]
    if kind == "TASK FAILED":
        return _task_failed(delegation_id, int(head.group(3)) - 1, body, goal_of)
    done = (_single if kind == "COMPLETE" else _batch)(delegation_id, body, goal_of)
    seconds = amount(meta.get("duration_seconds")) if isinstance(meta, dict) else None
    if done is None or len(done.updates) != 1 or seconds is None:
        return done
    # iot's `display_metadata` times a one-task unit whose text gave no duration
    ((index, status, result),) = done.updates
    return replace(done, updates=((index, status, result.merged(TaskResult(duration_seconds=seconds))),))


def _task_failed(delegation_id: str, index: int, body: str, goal_of: GoalOf) -> Completion | None:
    """The iot fork's early notice that task `index` (0-based) failed; None for an index < 0."""
    if index < 0:
        return None
    rest = _after(body, "Task: ", goal_of(delegation_id, index), anywhere=True)
    notice = _LINE_STATUS.search(rest)
    result, line = EMPTY, _STATUS_LINE.search(rest)
    if line is not None:  # its duration and `Error:` line
        after = rest[line.end() :]
        error = after[len("\nError: ") :].split("\n", 1)[0] if after.startswith("\nError: ") else None
        result = TaskResult(duration_seconds=amount(float(line.group(3))), error=_prose(error))
    return Completion(delegation_id, "task_failed", ((index, notice.group(1) if notice else None, result),))


def _single(delegation_id: str, body: str, goal_of: GoalOf) -> Completion:
    """The single-task form: its `Status: … Duration: …s` line and `--- RESULT ---`, or a bare `Status:`."""
    rest = _after(body, "Original goal: ", goal_of(delegation_id, 0), anywhere=True)
    line = _LINE_STATUS.search(rest)
    model = unit_model(rest[: line.start()] if line else rest)
    found = _STATUS_LINE.search(rest)
    if found is None:
        said, result = (line.group(1) if line else None), TaskResult(model=model)
    else:
        said = found.group(1)
        _head, marker, text = rest[found.end() :].partition("\n--- RESULT ---\n")
        summary, error = (text if marker else ""), None
        if said not in ("completed", "success"):
            reason, _sep, summary = summary.partition(_PARTIAL.lstrip("\n"))
            for lead in (_FAILED_LEAD.format(said), _INTERRUPTED_LEAD):
                if reason.startswith(lead):
                    error = reason[len(lead) :]
                    break
        result = _text_result(found, summary, model, error)
    return Completion(delegation_id, "single", ((0, said, result),))


def _batch(delegation_id: str, body: str, goal_of: GoalOf) -> Completion | None:
    """The batch form: an update per task block (an index's first wins), or the unit's `--- ERROR ---`."""
    blocks = list(_BLOCK.finditer(body))
    if not blocks:
        return Completion(delegation_id, "batch_error") if "\n--- ERROR ---\n" in body else None
    model = unit_model(body[: blocks[0].start()])
    updates: dict[int, tuple[str | None, TaskResult]] = {}
    for block, following in zip(blocks, [*blocks[1:], None], strict=True):
        index = int(block.group(1)) - 1
        if index < 0 or index in updates:
            continue
        text = body[block.end() : following.start() if following else len(body)]
        rest = _after(text, ": ", goal_of(delegation_id, index), anywhere=False)
        rest = rest[max(rest.find("  (status="), 0) :]  # an unknown goal: skip to its header's status
        updates[index] = block_result(rest, model)
    return Completion(delegation_id, "batch", tuple((i, *update) for i, update in updates.items()))


# the statuses a parent records that end a task (`ended_unreported` is proven from the child)
TERMINAL_STATUSES = frozenset(s for s in TaskStatus if s.ends) - {TaskStatus.ended_unreported}
NO_REFERENCE = "no_durable_child_reference"
RESULT_FIELDS = tuple(f.name for f in fields(TaskResult))


def number_order(number: str) -> tuple[tuple[int, int, str], ...]:
    """The sort key of a task number (`1.2.3`): 1.9 before 1.10, a part not a number last."""
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in number.split("."))


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _ident(value: object) -> str | None:
    return value if isinstance(value, str) and is_valid_id(value) else None


def status_of(raw: object) -> TaskStatus:
    """A recognised terminal status or `running` as is; anything else `unknown`."""
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
    result: TaskResult = EMPTY

    def update(self, status: TaskStatus, result: TaskResult | None = None) -> None:
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
    args = json_value(arguments)
    args = args if isinstance(args, dict) else {}  # unreadable: the action is omitted, so a spawn
    action = args.get("action")
    if action is not None and not (isinstance(action, str) and action.strip().lower() in ("", "spawn")):
        return None
    tasks = json_value(args.get("tasks"))
    if isinstance(tasks, list) and tasks:
        return [_text(t.get("goal")) if isinstance(t, dict) else None for t in tasks]
    goal = args.get("goal")
    return [goal] if isinstance(goal, str) and goal.strip() else []


def _finished(call: _Call, results: list[Any], top: str | None) -> None:
    """A blocking spawn's result: one entry per task, in order or by `task_index`."""
    for position, entry in enumerate(results):
        if not isinstance(entry, dict):
            continue
        index = count(entry.get("task_index"))
        task = call.task(position if index is None else index)
        task.goal = task.goal or _text(entry.get("goal"))
        task.delegation_id = task.delegation_id or _ident(entry.get("delegation_id")) or top
        task.subagent_id = task.subagent_id or _ident(entry.get("subagent_id"))
        task.child = task.child or _ident(entry.get("child_session_id"))
        task.update(status_of(entry.get("status")), from_entry(entry))


def _dispatched(call: _Call, payload: dict[str, Any], top: str | None) -> None:
    """A background spawn's dispatch: every task running, under its unit's delegation."""
    goals = payload.get("goals")
    if isinstance(goals, list) and goals:
        # The dispatch's goals are authoritative, but a null entry says nothing: the
        # goal the call's arguments gave for that task stays.
        known = call.goals
        call.goals = [_text(g) or (known[i] if i < len(known) else None) for i, g in enumerate(goals)]
    units: dict[int, str | None] = {}  # task index -> its unit's delegation id (the last unit wins)
    for unit in payload["units"] if isinstance(payload.get("units"), list) else []:
        if isinstance(unit, dict) and isinstance(unit.get("task_indexes"), list):
            for i in unit["task_indexes"]:
                if count(i) is not None:
                    units[i] = _ident(unit.get("delegation_id"))
    sids = payload["subagent_ids"] if isinstance(payload.get("subagent_ids"), list) else []
    for i in range(len(call.goals)):
        task = call.task(i)
        task.delegation_id = units.get(i) or top
        task.subagent_id = _ident(sids[i]) if i < len(sids) else None
        task.update(TaskStatus.running)


class _Recovery:
    def __init__(self) -> None:
        self.calls: dict[str, _Call] = {}
        self.order: list[_Call] = []
        # delegation id -> task index -> its tasks, each once (never compared: issue 29), in order
        self.delegated: dict[str, dict[int, list[_Task]]] = {}
        self.sessions: dict[str, set[str]] = {}

    def add_call(self, msg: WireMessage, call: dict[str, Any]) -> None:
        fn = call.get("function")
        name, arguments = (fn.get("name"), fn.get("arguments")) if isinstance(fn, dict) else (None, None)
        call_id = _text(call.get("id"))
        if name != "delegate_task":
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

    def add_result(self, call: _Call, payload: Any) -> None:
        if call.answered or call.failed or not isinstance(payload, dict):
            return
        action = payload.get("action")
        if (
            (action is not None and action != "spawn")
            or "subagents" in payload
            or payload.get("status") in ("queued", "interrupt_requested")
        ):
            return  # a control acknowledgement
        results = payload.get("results")
        if not isinstance(results, list) and payload.get("status") != "dispatched":
            call.failed = "error" in payload
            return
        call.answered = True
        top = _ident(payload.get("delegation_id"))
        if isinstance(results, list):
            _finished(call, results, top)
        else:
            _dispatched(call, payload, top)
        for task in call.tasks.values():  # under its own delegation and the result's: each once
            for key in filter(None, {task.delegation_id, top}):
                self.delegated.setdefault(key, {}).setdefault(task.index, []).append(task)

    def goal_of(self, delegation_id: str, index: int) -> str | None:
        return next((t.goal for t in self.delegated.get(delegation_id, {}).get(index, [])), None)

    def add_completion(self, msg: WireMessage) -> None:
        """Statuses from a completion row, for a delegation known from a spawn result."""
        done = parse_completion(msg, self.goal_of)
        table = self.delegated.get(done.delegation_id, {}) if done else {}
        tasks = [task for same in table.values() for task in same]
        if done is None or not tasks:
            return
        if done.kind == "single":  # it names no index: only a one-task delegation's task
            table = {0: tasks} if len(tasks) == 1 else {}
        updates = [(i, "error", EMPTY) for i in table] if done.kind == "batch_error" else done.updates
        for index, status, result in updates:
            for task in table.get(index, []):
                task.update(status_of(status), result)

    def entries(self) -> list[TaskEntry]:
        return [
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
                **{name: getattr(task.result, name) for name in RESULT_FIELDS},
            )
            for call in self.order
            if not call.failed
            for task in map(call.task, sorted(set(range(len(call.goals))) | set(call.tasks)))
        ]


def _walk(messages: Sequence[WireMessage], *, whole: bool = True) -> _Recovery:
    rec = _Recovery()
    for msg in messages:  # every pass is linear in rows
        calls = json_value(msg.tool_calls) if msg.role != "tool" else None
        for call in calls if isinstance(calls, list) else []:
            if isinstance(call, dict):
                rec.add_call(msg, call)
    if whole:
        for msg in messages:
            if msg.role == "tool" and msg.tool_call_id in rec.calls:
                rec.add_result(rec.calls[msg.tool_call_id], json_value(msg.content))
        for msg in messages:
            rec.add_completion(msg)
    return rec


def recover(messages: Sequence[WireMessage]) -> list[TaskEntry]:
    """The delegated tasks of a transcript, in call order then task index (rules above)."""
    return _walk(messages).entries()


def call_sessions(messages: Sequence[WireMessage]) -> dict[str, frozenset[str]]:
    """For each delegate_task call id, the segments carrying it (a child's possible parents)."""
    return {k: frozenset(v) for k, v in _walk(messages, whole=False).sessions.items()}


class LedgerRecord(Struct, frozen=True):
    """The columns of one `async_delegations` row that a proposal reads (JSON kept raw)."""

    delegation_id: str
    parent_session_id: str | None
    state: str | None
    event_json: str | None
    result_json: str | None
    delivery_state: str | None


class Proposal(Struct, frozen=True):
    """A task's outcome as the record gives it: a terminal status and the result fields."""

    status: TaskStatus
    result: TaskResult
    delivery_state: str | None


def _entry(doc: dict[str, Any], index: int) -> dict[str, Any] | None:
    """The task's own outcome in one record document (by `task_index`, else position), or None."""
    found = doc.get("results")
    if not isinstance(found, list):
        return doc if index == 0 and "status" in doc else None
    items = [item for item in found if isinstance(item, dict)]
    indexed = [item for item in items if item.get("task_index") == index]
    if indexed:
        return indexed[0]
    if not any("task_index" in item for item in items) and index < len(items):
        return items[index]
    if not found and status_of(doc.get("status")) in TERMINAL_STATUSES - {"completed"} and doc.get("error"):
        return {"status": doc.get("status"), "error": doc.get("error")}  # the whole unit crashed
    return None


def _goal_agrees(doc: dict[str, Any], index: int, goal: str | None) -> bool:
    """Does a goal the document names for this task equal the task's (when both are known)?"""
    goals = doc.get("goals")
    named = goals[index] if isinstance(goals, list) and index < len(goals) else None
    if named is None and not isinstance(goals, list):
        named = doc.get("goal")
    wanted, given = normalise_goal(goal), normalise_goal(named)
    return wanted is None or given is None or wanted == given


def propose(
    record: LedgerRecord, *, delegation_id: str, task_index: int, goal: str | None, segments: frozenset[str]
) -> Proposal | None:
    """The record's outcome for the task `task_index` of `delegation_id` (rules above)."""
    if record.delegation_id != delegation_id or record.parent_session_id not in {None, *segments}:
        return None
    for raw in (record.event_json, record.result_json):
        doc = json_value(raw)  # a str or None: None, or its JSON value
        entry = _entry(doc, task_index) if isinstance(doc, dict) else None
        if entry is None:
            continue
        status = status_of(entry.get("status"))
        if status not in TERMINAL_STATUSES:
            continue
        if not (_goal_agrees(doc, task_index, goal) and _goal_agrees(entry, 0, goal)):
            return None
        delivery = record.delivery_state
        word = delivery if isinstance(delivery, str) and re.fullmatch(r"[a-z_]{1,32}", delivery) else None
        return Proposal(status=status, result=from_entry(entry), delivery_state=word)
    return None
