"""What a follow is told and what it tells: its timing and exit policy, its outcome, and the
`Reporter` it reports to (pure data and one pure function; the loop is reading/follower.py).

Invariant: `ending_exit_code` is 0 for a task that closed itself (`agent_close`), or for any
ending without `--exit-status`; 8 otherwise. Only the follow loop decides 4, 7 and 9.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol

from msgspec import Struct, field

from hermes_task.core.documents import Row, TaskInfo, TaskState, WarningItem
from hermes_task.core.rowfilter import RowFilter
from hermes_task.failures import ExitStatus, HermesError

FINAL_RETRIES = 3
START_TIMEOUT = 60.0
BACKOFF_BASE = 2.0
BACKOFF_CAP = 30.0
MAX_FILL_PAGES = 20
COMPRESSION = "compression"
# A delegated child's row is ended by its own agent's close(): `agent_close` on both
# backends, whatever the run's outcome (completed, failed, interrupted and timed-out runs
# all close the same way; the outcome lives in the parent's delegate_task result). Every
# other ending is a reaper or an interactive close (`startup_orphan_reap`,
# `orphaned_compression`, `cli_close`, ...): the child did not close itself.
SUCCESS_END_REASONS = frozenset({"agent_close"})

Ending = Literal["ended", "partial_history", "timeout", "failed", "interrupted"]


class FollowConfig(Struct, frozen=True):
    """Timing and exit policy of one follow."""

    interval: float = 2.0
    timeout: float | None = None
    start_timeout: float = START_TIMEOUT
    exit_status: bool = False
    final_retries: int = FINAL_RETRIES
    backoff_base: float = BACKOFF_BASE
    backoff_cap: float = BACKOFF_CAP
    rows: RowFilter = field(default_factory=RowFilter)  # --role; --tail: of the rows at the first read


class FollowOutcome(Struct, frozen=True):
    """How a follow ended: the `result` event's fields plus the failure, if any."""

    ending: Ending
    state: TaskState
    end_reason: str | None
    exit_code: int
    failure: HermesError | None = None
    last_read_age: float | None = None  # seconds since the last successful read, on a failure


class Reporter(Protocol):
    """Where the loop reports; each method is called only for news."""

    def state(self, task: TaskInfo) -> None: ...
    def warning(self, item: WarningItem) -> None: ...
    def rows(self, rows: Sequence[Row]) -> None: ...
    def error(self, error: HermesError, *, retrying: bool, delay: float | None) -> None: ...
    def result(self, outcome: FollowOutcome) -> None: ...


def ending_exit_code(end_reason: str | None, *, exit_status: bool) -> int:
    """Exit status of a task that ended: 0, or with `exit_status` 8 unless it closed itself."""
    if not exit_status or end_reason in SUCCESS_END_REASONS:
        return int(ExitStatus.OK)
    return int(ExitStatus.TASK_FAILED)
