"""Async delegation completion rows of a parent transcript (pure, best-effort text parsing).

When a background delegation unit finishes, both backends write a user row whose text starts
`[ASYNC DELEGATION BATCH COMPLETE — deleg_…]` with one `--- ✓ TASK i/n: <goal>  (status=…, …) ---`
block per task (or `--- ERROR ---` when the whole unit crashed), or, for the single-task form,
`[ASYNC DELEGATION COMPLETE — deleg_…]` with a `Status: … ` line. The iot fork also writes an
early `[ASYNC DELEGATION TASK FAILED — deleg_…, task i/n]` notice, and marks completion rows
`display_kind: "async_delegation_complete"` with `display_metadata.delegation_id`.

The text is model-facing prose, so parsing is defensive: a row whose metadata names another
delegation than its header is ignored; each task's known goal is skipped before its status is
read, so a goal cannot forge a status; the first block of a task index wins. Statuses are
returned raw; the caller decides what they mean.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Literal

from msgspec import Struct

from hermes_task.core import results as results
from hermes_task.core.projection import content_text
from hermes_task.core.wire import WireMessage

_HEADER = re.compile(
    r"\s*\[ASYNC DELEGATION (BATCH COMPLETE|COMPLETE|TASK FAILED) — ([^\]\s,]+)(?:, task (\d+)/\d+)?\]"
)
_BLOCK = re.compile(r"(?m)^--- \S+ TASK (\d+)/\d+")
_LINE_STATUS = re.compile(r"(?m)^Status: ([A-Za-z_]+) ")

GoalOf = Callable[[str, int], "str | None"]


class Completion(Struct, frozen=True):
    """What one completion row says: per task index (0-based, call-wide) a raw status (None
    when the row names the task but no status could be read) and the reported outcome."""

    delegation_id: str
    kind: Literal["batch", "batch_error", "single", "task_failed"]
    updates: tuple[tuple[int, str | None, results.TaskResult], ...] = ()


def _after(text: str, label: str, goal: str | None, *, anywhere: bool) -> str:
    """`text` after `label + goal` when the known goal is there (only at the very start
    unless `anywhere`), so that a goal's own words are never read as a status."""
    if goal:
        at = text.find(label + goal) if anywhere else (0 if text.startswith(label + goal) else -1)
        if at >= 0:
            return text[at + len(label) + len(goal) :]
    return text


def parse(msg: WireMessage, goal_of: GoalOf) -> Completion | None:
    """The completion a user row reports, or None when it is not one (or is inconsistent).
    `goal_of(delegation_id, index)` gives a task's known goal, to skip it."""
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
    if kind == "COMPLETE":
        return _single(delegation_id, body, meta, goal_of)
    return _batch(delegation_id, body, meta, goal_of)


def _task_failed(delegation_id: str, index: int, body: str, goal_of: GoalOf) -> Completion | None:
    """The iot fork's early notice that task `index` (0-based) failed; None for an index < 0."""
    if index < 0:
        return None
    rest = _after(body, "Task: ", goal_of(delegation_id, index), anywhere=True)
    notice = _LINE_STATUS.search(rest)
    found = notice.group(1) if notice else None
    return Completion(delegation_id, "task_failed", ((index, found, results.notice_result(rest)),))


def _single(delegation_id: str, body: str, meta: object, goal_of: GoalOf) -> Completion:
    """The single-task form: the status said in the text, else its `Status:` line."""
    rest = _after(body, "Original goal: ", goal_of(delegation_id, 0), anywhere=True)
    said, result = results.single_result(rest, None)
    line = _LINE_STATUS.search(rest)
    if said is None and line is not None:
        said = line.group(1)
    model = results.unit_model(rest[: line.start()] if line else rest)
    result = results.TaskResult(model=model).merged(result)
    return Completion(delegation_id, "single", ((0, said, _timed(result, meta)),))


def _timed(result: results.TaskResult, meta: object) -> results.TaskResult:
    """`result` with the row metadata's duration when the text gave none."""
    if result.duration_seconds is not None:
        return result
    return result.merged(results.TaskResult(duration_seconds=results.metadata_seconds(meta)))


def _batch(delegation_id: str, body: str, meta: object, goal_of: GoalOf) -> Completion | None:
    """The batch form: one update per task block (the first block of an index wins), or the
    whole unit's `--- ERROR ---`; None when the body has neither."""
    blocks = list(_BLOCK.finditer(body))
    if not blocks:
        return Completion(delegation_id, "batch_error") if "\n--- ERROR ---\n" in body else None
    model = results.unit_model(body[: blocks[0].start()])
    updates: list[tuple[int, str | None, results.TaskResult]] = []
    seen: set[int] = set()
    for n, block in enumerate(blocks):
        index = int(block.group(1)) - 1
        if index < 0 or index in seen:
            continue
        seen.add(index)
        end = blocks[n + 1].start() if n + 1 < len(blocks) else len(body)
        rest = _block_status_text(body[block.end() : end], goal_of(delegation_id, index))
        status, result = results.block_result(rest, model)
        updates.append((index, status, result))
    if len(updates) == 1:
        index, status, result = updates[0]
        updates[0] = (index, status, _timed(result, meta))
    return Completion(delegation_id, "batch", tuple(updates))


def _block_status_text(block: str, goal: str | None) -> str:
    """A task block from its header's `  (status=` on: after the known goal, or (an unknown
    goal) at the first `  (status=`; the block as it is when there is none."""
    rest = _after(block, ": ", goal, anywhere=False)
    if not rest.startswith("  (status="):  # an unknown goal: skip to its header's status
        at = rest.find("  (status=")
        rest = rest[at:] if at >= 0 else rest
    return rest
