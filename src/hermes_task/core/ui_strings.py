"""Human-facing strings, keyed by stable codes; JSON carries the codes. Failure messages and hints
live in `hermes_task.failures.TABLE`; tools/regen.py generates the docs' tables from these enums."""

from __future__ import annotations

from enum import StrEnum

from hermes_task.failures import ExitStatus


class TaskStatus(StrEnum):
    """A task's status: its value is the contract's word (JSON, piped output, `--status`), its
    `label` and `style` (a rich style) what a terminal shows; `ends` says whether it ends the
    task, `note` how (docs/commands.md's table is generated from these). The members' order
    is the order statuses are counted and cycled in. A member's name is its value, so
    `TaskStatus[word]` looks a word up (mypy reads `TaskStatus(word)` as `__new__`)."""

    label: str
    style: str
    ends: bool
    note: str

    def __new__(cls, value: str, label: str, style: str, ends: bool, note: str = "") -> TaskStatus:
        member = str.__new__(cls, value)
        member._value_ = value
        member.label, member.style, member.ends, member.note = label, style, ends, note
        return member

    running = "running", "running", "cyan", False
    completed = "completed", "✓ completed", "green", True
    failed = "failed", "✗ failed", "red", True
    error = "error", "✗ error", "red", True
    interrupted = "interrupted", "⏸ interrupted", "yellow", True
    cancelled = "cancelled", "⊘ cancelled", "yellow", True
    timeout = "timeout", "⧗ timed out", "red", True
    unknown = "unknown", "? unknown", "dim", False
    ended_unreported = (
        "ended_unreported",
        "◌ ended, unreported",
        "magenta",
        True,
        "the child is proven ended, no result reached the parent",
    )


class WarningCode(StrEnum):
    """A warning's code (JSON), its `text` (what stderr says, before any detail) and `when` it
    is raised (docs/identity.md's table is generated from these). `setup`: the warning is
    about the setup rather than the task, so the same backend or machine says it on every run
    and for every task (`--quiet` keeps it off stderr; `follow --parent` says it once per run,
    not once per task); every other warning is about one task's history."""

    text: str
    when: str
    setup: bool

    def __new__(cls, value: str, text: str, when: str, setup: bool = False) -> WarningCode:
        member = str.__new__(cls, value)
        member._value_ = value
        member.text, member.when, member.setup = text, when, setup
        return member

    partial_history = (
        "partial_history",
        "partial history: the newest verified segment ended by compression and no newer "
        "segment is proven; final output may be missing",
        "the newest verified segment ended by compression and no newer segment is proven: "
        "final output may be missing (`follow` pauses)",
    )
    partial_ancestors = (
        "partial_ancestors",
        "earlier task segments are not included",
        "earlier segments exist that this window cannot include: a cold open of a later "
        "segment (one parent metadata read proves it continues one; ancestors' messages are "
        "not read; the detail says where to look), an earlier segment whose pages answer for "
        "another session, or a read bound that stopped that check (the detail says not known)",
    )
    legacy_backend = (
        "legacy_backend",
        "legacy backend (hermes-agent 0.19.x): archived rows are not visible over HTTP",
        "the backend ignores `order`/`include_compacted` (hermes-agent 0.19.x): archived rows are not "
        "visible; or it sends no pagination at all (0.18.x and older): every active row comes in one answer",
        True,
    )
    gap = (
        "gap",
        "rows between the newest page and the rows already known are not loaded",
        "a refreshed newest page shares no row with what was known: rows in between are not "
        "loaded (`older` fills them)",
    )
    bound_reached = (
        "bound_reached",
        "a proof or paging bound stopped the work early",
        "a proof or paging bound stopped the work early (32 nodes per proof walk, 100 detail "
        "reads per read, paging bounds): what was proven is shown, and the partial state it "
        "interrupted is said beside it",
    )
    foreign_rows = (
        "foreign_rows",
        "rows naming a session outside the proven lineage were dropped",
        "a page carried rows whose `session_id` is not a segment of the proven lineage: they "
        "are dropped, never shown (the detail gives the count)",
    )
    store_unavailable = (
        "store_unavailable",
        "the local Hermes store was not used; child and newer-segment ids and held completions "
        "were not looked up",
        "a lookup in the local store was needed (a task's child, a newer segment, a completion "
        "held for the parent) but the store was off, unreadable, or its ids unknown to the "
        "dashboard: today's HTTP-only result",
        True,
    )


# Why the store was not used (the detail of `store_unavailable`).
STORE_REASONS: dict[str, str] = {
    "no_file": "no store file",
    "permission": "the store cannot be opened (permission)",
    "locked": "the store stayed locked past the busy timeout",
    "unknown_columns": "the store lacks a needed column or index",
    "corrupt": "the store is not a readable SQLite database",
    "needs_write": "SQLite would need to write next to the store to read it",
    "disabled": "--no-store",
    "not_loopback": "the dashboard URL is not loopback: its store is not looked for here",
    "foreign": "the dashboard knows none of the store's ids; is it another dashboard's store?",
}

# What to do about it (after the reason).
STORE_ADVICE: dict[str, str] = {
    "no_file": (
        "run hermes-task on the dashboard's host (as the user that runs it), or pass --store PATH "
        "to the dashboard's state.db"
    ),
    "permission": "run hermes-task as the user that runs the dashboard, or pass --store PATH to a readable copy",
    "locked": "try again",
    "unknown_columns": "pass --store PATH to the dashboard's own state.db",
    "corrupt": "pass --store PATH to the dashboard's own state.db",
    "needs_write": "try again while the dashboard runs, or pass --store PATH to a copy",
    "disabled": "drop --no-store (or the config file's no_store = true)",
    "not_loopback": (
        "run hermes-task on the dashboard's host, where its store is found by itself, or pass "
        "--store PATH to the dashboard's state.db (a copy works)"
    ),
    "foreign": "pass --store PATH to the store of the dashboard at this URL (its $HERMES_HOME/state.db)",
}


SETUP_WARNINGS = frozenset(code for code in WarningCode if code.setup)


def store_reason(reason: str, path: str | None = None) -> str:
    """Why the store was not used: the reason, and the store file where the file is the problem."""
    why = STORE_REASONS.get(reason, reason)
    if path and reason in ("no_file", "permission", "unknown_columns", "corrupt", "needs_write"):
        why += f" at {path}"
    return why


def store_warning(reason: str, path: str | None = None) -> str:
    """The `store_unavailable` text: why the store was not used, then what to do."""
    text = f"{WarningCode.store_unavailable.text} ({store_reason(reason, path)})"
    advice = STORE_ADVICE.get(reason)
    return f"{text}: {advice}" if advice else text


UNAVAILABLE: dict[str, str] = {
    "no_durable_child_reference": (
        "the backend persisted no child session id for this task and the local store "
        "proposed none that the dashboard confirmed"
    ),
    "ambiguous_match": (
        "more than one task or child fits (same goal and order): not guessed; see the store with --debug"
    ),
    "store_unavailable": (
        "the backend persisted no child session id for this task, and the local store that could "
        "propose one could not be read"
    ),
    # A proposal whose proof failed for now (the task carries the failure's code): asked again.
    "server_error": "proving its child failed for now (a server error); it is asked again",
    "network": "proving its child failed for now (the dashboard did not answer); it is asked again",
    "timeout": "proving its child failed for now (the dashboard did not answer in time); it is asked again",
    "rate_limited": "proving its child failed for now (the dashboard asked to slow down); it is asked again",
}
# The `unavailable_reason`s that are a failure of this read, not a fact about the task.
RETRYING = frozenset({"server_error", "network", "timeout", "rate_limited"})

RECOVER: dict[str, str] = {
    "pages_bound": (
        "--pages stopped after {pages} page(s) of {sid}; older rows were not read, so the "
        "task list may be incomplete"
    ),
    "pages_stalled": (
        "older pages of {sid} stopped returning new rows after {pages} page(s); the task list "
        "may be incomplete"
    ),
    "depth_bound": (
        "tasks nested deeper than {depth} levels were not read: the children of {left} task(s) at "
        "that depth were not read, so the tasks they delegated are not listed"
    ),
    "visit_bound": (
        "only {n} child conversations were read: the children of {left} more task(s) were not read, "
        "so the tasks they delegated are not listed"
    ),
    "usage_bound": (
        "usage: the children of at most {n} ended tasks are proven in one run; no usage for task(s) {tasks}"
    ),
    "store_bound": (
        "the store proposes the newest {n} children of a session; older ones were not proposed, "
        "so task(s) {tasks} may have a child that is not named"
    ),
    "no_tasks": "no delegated tasks in {sid}",
    "no_match": "no task matches --status {statuses} ({tasks} in all)",
    "summary": "{tasks} · {terminal} terminal · {state}",  # tasks: "1 task", "2 tasks"
    "gap": "↳ child not read: {reason}",
    "gap_identity_mismatch": "it names another session as its parent",
    "gap_not_found": "session not found (it may not be flushed yet)",
    "unavailable": 'child session "-": {reason}',
    "open": "open a task with a child session: hermes-task show CHILD_SESSION (or follow)",
    "unreported": "ended unreported: {numbers}",
    "unreported_result": "the child ended; the parent has received no result",
    "report_bound": "at most {n} children are read for one report",
    "told": "{told}: the tokens the task's result told the parent (the usage above is the proven sum)",
    "store_note": (
        "(store): the outcome Hermes holds for the parent in its local store (async_delegations), "
        "used because the child is proven ended"
    ),
}

SEARCH: dict[str, str] = {
    "not_searched": "task {number} not searched: {reason}",
    "in_part": "task {number} searched in part: {reason}",
    "task_warning": "task {number}: {message}",
    "task_bound": "at most {n} children are read in one search",
    "no_child": "no child session is known for it",
    # the summary on a terminal (stderr): "3 matching lines in 2 tasks · 5 of 5 tasks searched whole"
    "found": "{lines} in {tasks} · {searched} of {total} searched whole",
    "none": "no match · {searched} of {total} searched whole",
    "unproven": "the absence is not proven: not every transcript was searched whole",
}

EXIT_MEANINGS: dict[ExitStatus, str] = {
    ExitStatus.OK: "success (`follow`: the task ended; with `--exit-status`: ended successfully)",
    ExitStatus.INTERNAL: "internal error (a bug; `--debug` shows the traceback)",
    ExitStatus.USAGE: "usage error, invalid id, bad config file or unknown gateway",
    ExitStatus.AUTH: "authentication missing, rejected or expired",
    ExitStatus.NOT_FOUND: (
        "not found (may be an unflushed child: retryable; `follow`, `follow --parent` and "
        "`recover --watch` wait `--start-timeout`)"
    ),
    ExitStatus.IDENTITY: "identity not provable: exact-id, profile or lineage check failed, or a fork",
    ExitStatus.INCOMPATIBLE: "incompatible or unsupported backend response",
    ExitStatus.NETWORK: "network failure, timeout, server error, or a final read that kept failing",
    ExitStatus.TASK_FAILED: (
        "`--exit-status`: the task ended unsuccessfully (`recover`: a task failed, or ended with no "
        "outcome reported to the parent)"
    ),
    ExitStatus.STILL_RUNNING: (
        "known to be still running when `--timeout` ran out (the last read succeeded and showed it "
        "running); `follow` stopped on partial history"
    ),
    ExitStatus.NO_MATCH: "`search`: no line matched, and every task's transcript was searched whole",
    ExitStatus.NO_MATCH_INCOMPLETE: (
        "`search`: no line matched, but not every transcript could be searched whole (a task without "
        "a known child, a child that could not be read, a bound, partial history, archived rows the "
        "backend does not serve): the absence is not proven"
    ),
    ExitStatus.NO_STORE: (
        "`parents`: the local Hermes store, its only source of proposals, could not be read "
        "(`store_unavailable`: no store file, `--no-store`, a non-loopback URL without `--store`, ...)"
    ),
    ExitStatus.HANGUP: "interrupted (SIGHUP)",
    ExitStatus.INTERRUPTED: "interrupted (Ctrl-C)",
    ExitStatus.TERMINATED: "interrupted (SIGTERM)",
}


def legacy_warning(*, paginated: bool) -> str:
    """The `legacy_backend` text: what the backend's messages route cannot do."""
    if paginated:
        return WarningCode.legacy_backend.text
    return (
        "legacy backend (hermes-agent 0.18.x or older): no paging, `order` or archived rows over "
        "HTTP; every active row is read in one answer"
    )
