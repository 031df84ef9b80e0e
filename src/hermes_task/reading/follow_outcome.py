"""What a follow tells: the `Reporter` it reports to and how a task's ending maps to an exit
status (pure; the loop is reading/polling.py, its follow cycle reading/follower.py).

Invariant: `ending_exit_code` is 0 for a task that closed itself (`agent_close`), or for any
ending without `--exit-status`; 8 otherwise. Only the follow loop decides 4, 7 and 9.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from hermes_task.core.documents import Row, TaskInfo, WarningItem
from hermes_task.failures import ExitStatus, HermesError
from hermes_task.reading.polling import Outcome

MAX_FILL_PAGES = 20
COMPRESSION = "compression"
# A delegated child's row is ended by its own agent's close(): `agent_close` on both
# backends, whatever the run's outcome (completed, failed, interrupted and timed-out runs
# all close the same way; the outcome lives in the parent's delegate_task result). Every
# other ending is a reaper or an interactive close (`startup_orphan_reap`,
# `orphaned_compression`, `cli_close`, ...): the child did not close itself.
SUCCESS_END_REASONS = frozenset({"agent_close"})


class Reporter(Protocol):
    """Where the loop reports; each method is called only for news."""

    def state(self, task: TaskInfo) -> None: ...
    def warning(self, item: WarningItem) -> None: ...
    def rows(self, rows: Sequence[Row]) -> None: ...
    def error(self, error: HermesError, *, retrying: bool, delay: float | None) -> None: ...
    def result(self, outcome: Outcome) -> None: ...


def ending_exit_code(end_reason: str | None, *, exit_status: bool) -> int:
    """Exit status of a task that ended: 0, or with `exit_status` 8 unless it closed itself."""
    if not exit_status or end_reason in SUCCESS_END_REASONS:
        return int(ExitStatus.OK)
    return int(ExitStatus.TASK_FAILED)
