"""Facts over a recovered task list (pure): counts, the CI verdict and status filters. The verdict is
the parent's word, never a child's ending (every child closes with `agent_close` whatever its
outcome): docs/commands.md, `recover --watch` (`result.state`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import Literal

from msgspec.structs import replace

from hermes_task.core.delegations import TERMINAL_STATUSES
from hermes_task.core.documents import TaskEntry, TasksSummary, combine
from hermes_task.core.ui_strings import TaskStatus
from hermes_task.failures import ExitStatus

FAILED = TERMINAL_STATUSES - {TaskStatus.completed}

Verdict = Literal["completed", "failed", "unreported", "running"]


def flatten(tasks: Iterable[TaskEntry]) -> list[TaskEntry]:
    """Every task of a tree, depth first, parents before their children."""
    return [t for task in tasks for t in (task, *flatten(task.children))]


def summarize(tasks: Sequence[TaskEntry]) -> TasksSummary:
    """Counts and every task's own usage, over the whole tree."""
    every = flatten(tasks)
    terminal = sum(1 for t in every if t.terminal)
    return TasksSummary(
        total=len(every),
        terminal=terminal,
        state="finished" if terminal == len(every) else "running",
        usage=combine([t.usage for t in every]),
    )


def all_terminal(tasks: Sequence[TaskEntry]) -> bool:
    every = flatten(tasks)
    return bool(every) and all(t.terminal for t in every)


def verdict(tasks: Sequence[TaskEntry]) -> Verdict:
    """The parent's verdict over its tasks: a failed one wins even while siblings run."""
    every = flatten(tasks)
    if any(t.status in FAILED for t in every):
        return "failed"
    if every and all(t.status == "completed" for t in every):
        return "completed"
    if every and all(t.terminal for t in every) and TaskStatus.ended_unreported in {t.status for t in every}:
        return "unreported"
    return "running"


def exit_status(tasks: Sequence[TaskEntry]) -> ExitStatus:
    """The verdict's exit status: 0 completed, 8 failed or unreported, 9 running."""
    return {"completed": ExitStatus.OK, "running": ExitStatus.STILL_RUNNING}.get(
        verdict(tasks), ExitStatus.TASK_FAILED
    )


def unreported(tasks: Sequence[TaskEntry]) -> list[str]:
    return [t.number or "?" for t in flatten(tasks) if t.status == TaskStatus.ended_unreported]


def only(tasks: Sequence[TaskEntry], statuses: Collection[str]) -> list[TaskEntry]:
    """The tasks with one of `statuses` (all when empty), a match's ancestors kept (docs/commands.md)."""
    if not statuses:
        return list(tasks)
    out: list[TaskEntry] = []
    for task in tasks:
        kids = only(task.children, statuses)
        if task.status in statuses or kids:
            out.append(task if kids == task.children else replace(task, children=kids))
    return out
