"""Human-facing strings other than failures, keyed by stable codes (English is the default).

JSON always carries the codes; these texts are only for people. Failure messages and hints
live in the one failure table (`hermes_task.failures.TABLE`); here are warnings, task status
labels, recover's lines and the meaning of each exit status. `tests/unit/test_catalogue.py`
checks that every code has its text.
"""

from __future__ import annotations

from hermes_task.failures import ExitStatus

WARNINGS: dict[str, str] = {
    "partial_history": (
        "partial history: the newest verified segment ended by compression and no newer "
        "segment is proven; final output may be missing"
    ),
    "partial_ancestors": ("earlier task segments may be missing: this segment's page does not include them"),
    "legacy_backend": ("legacy backend (hermes-agent 0.19.x): archived rows are not visible over HTTP"),
    "gap": "rows between the newest page and the rows already known are not loaded",
    "bound_reached": "a proof or paging bound stopped the work early",
}

STATUS_LABELS: dict[str, str] = {
    "running": "running",
    "completed": "✓ completed",
    "failed": "✗ failed",
    "error": "✗ error",
    "interrupted": "⏸ interrupted",
    "cancelled": "⊘ cancelled",
    "timeout": "⧗ timed out",
    "unknown": "? unknown",
}

UNAVAILABLE: dict[str, str] = {
    "no_durable_child_reference": (
        "the backend persisted no child session id for this task; the id appears only in "
        "live subagent events (child_session_id) and lifecycle hooks"
    ),
}

RECOVER: dict[str, str] = {
    "pages_bound": (
        "--pages stopped after {pages} page(s) of {sid}; older rows were not read, so the "
        "task list may be incomplete"
    ),
    "pages_stalled": (
        "older pages of {sid} stopped returning new rows after {pages} page(s); the task list "
        "may be incomplete"
    ),
    "depth_bound": "tasks nested deeper than {depth} levels were not read",
    "visit_bound": "only {n} child conversations were read; the task list may be incomplete",
    "no_tasks": "no delegated tasks in {sid}",
    "summary": "{total} tasks · {terminal} terminal · {state}",
    "gap": "↳ child not read: {reason}",
    "gap_identity_mismatch": "it names another session as its parent",
    "gap_not_found": "session not found (it may not be flushed yet)",
    "unavailable": 'child session "-": {reason}',
    "open": "open a task with a child session: hermes-task show CHILD_SESSION (or follow)",
}


EXIT_MEANINGS: dict[ExitStatus, str] = {
    ExitStatus.OK: "success (`follow`: the task ended; with `--exit-status`: ended successfully)",
    ExitStatus.INTERNAL: "internal error (a bug; `--debug` shows the traceback)",
    ExitStatus.USAGE: "usage error, invalid id, bad config file or unknown gateway",
    ExitStatus.AUTH: "authentication missing, rejected or expired",
    ExitStatus.NOT_FOUND: "not found (may be an unflushed child: retryable; `follow` waits `--start-timeout`)",
    ExitStatus.IDENTITY: "identity not provable: exact-id, profile or lineage check failed, or a fork",
    ExitStatus.INCOMPATIBLE: "incompatible or unsupported backend response",
    ExitStatus.NETWORK: "network failure, timeout, server error, or a final read that kept failing",
    ExitStatus.TASK_FAILED: "`follow --exit-status`: the task ended unsuccessfully",
    ExitStatus.STILL_RUNNING: (
        "known to be still running when `--timeout` ran out; `follow` stopped on partial history"
    ),
    ExitStatus.HANGUP: "interrupted (SIGHUP)",
    ExitStatus.INTERRUPTED: "interrupted (Ctrl-C)",
    ExitStatus.TERMINATED: "interrupted (SIGTERM)",
}

# When each warning is raised (README "Warnings"; the stderr text is WARNINGS).
WARNING_WHEN: dict[str, str] = {
    "partial_history": (
        "the newest verified segment ended by compression and no newer segment is proven: "
        "final output may be missing (`follow` pauses)"
    ),
    "partial_ancestors": (
        "a verified later segment whose pages do not include the earlier segments "
        "(hermes-agent 0.19.x; `tool`-source children; a cold-opened tip): earlier task "
        "segments may be missing"
    ),
    "legacy_backend": (
        "the backend ignores `order`/`include_compacted` (hermes-agent 0.19.x): archived rows are not visible"
    ),
    "gap": (
        "a refreshed newest page shares no row with what was known: rows in between are not "
        "loaded (`older` fills them)"
    ),
    "bound_reached": "a proof or paging bound stopped the work early",
}


def warning_message(code: str, detail: str = "") -> str:
    base = WARNINGS[code]
    return f"{base} ({detail})" if detail else base
