"""Typed failures: every failure is a `HermesError` carrying a `Code`, and `TABLE` decides its
exit status, whether a retry may help, its message and its hint (one `Failure` row per code).
"""

from __future__ import annotations

import enum

from msgspec import Struct


class ExitStatus(enum.IntEnum):
    """docs/exit-codes.md."""

    OK = 0
    INTERNAL = 1
    USAGE = 2
    AUTH = 3
    NOT_FOUND = 4
    IDENTITY = 5
    INCOMPATIBLE = 6
    NETWORK = 7
    TASK_FAILED = 8
    STILL_RUNNING = 9
    NO_MATCH = 10
    NO_MATCH_INCOMPLETE = 11
    NO_STORE = 12
    HANGUP = 129
    INTERRUPTED = 130
    TERMINATED = 143


class Code(enum.StrEnum):
    """Stable failure codes, as they appear in JSON `error.code`."""

    INTERNAL = "internal"
    USAGE = "usage"
    INVALID_ID = "invalid_id"
    CONFIG = "config_invalid"
    UNKNOWN_GATEWAY = "unknown_gateway"
    AUTH_MISSING = "auth_missing"
    AUTH_REJECTED = "auth_rejected"
    AUTH_EXPIRED = "auth_expired"
    NOT_FOUND = "not_found"
    PROFILE_NOT_FOUND = "profile_not_found"
    IDENTITY_MISMATCH = "identity_mismatch"
    PROFILE_MISMATCH = "profile_mismatch"
    LINEAGE_REJECTED = "lineage_rejected"
    FORK_AMBIGUOUS = "fork_ambiguous"
    INCOMPATIBLE = "incompatible_response"
    UNSUPPORTED = "unsupported"
    BAD_REQUEST = "bad_request"
    NETWORK = "network"
    TIMEOUT = "timeout"
    SERVER_ERROR = "server_error"
    RATE_LIMITED = "rate_limited"
    CLIENT_CLOSED = "client_closed"
    FINAL_READ_FAILED = "final_read_failed"
    INTERRUPTED = "interrupted"
    STORE_UNAVAILABLE = "store_unavailable"


class Failure(Struct, frozen=True):
    exit: ExitStatus
    retryable: bool
    message: str
    hint: str | None = None


_E = ExitStatus
# Each code's exit status and message; then the codes a retry may help, and the hints.
_ROWS: dict[Code, tuple[ExitStatus, str]] = {
    Code.INTERNAL: (_E.INTERNAL, "internal error (a bug in hermes-task)"),
    Code.CLIENT_CLOSED: (_E.INTERNAL, "the HTTP client was already closed"),
    Code.USAGE: (_E.USAGE, "invalid usage"),
    Code.INVALID_ID: (_E.USAGE, "invalid id"),
    Code.CONFIG: (_E.USAGE, "the config file is not valid"),
    Code.UNKNOWN_GATEWAY: (_E.USAGE, "no such gateway in the config file"),
    Code.AUTH_MISSING: (_E.AUTH, "the dashboard needs authentication and none was given"),
    Code.AUTH_REJECTED: (_E.AUTH, "the dashboard rejected the credentials"),
    Code.AUTH_EXPIRED: (_E.AUTH, "the dashboard session expired"),
    Code.NOT_FOUND: (_E.NOT_FOUND, "session not found"),
    Code.PROFILE_NOT_FOUND: (_E.NOT_FOUND, "the dashboard has no such profile"),
    Code.IDENTITY_MISMATCH: (
        _E.IDENTITY,
        "the dashboard answered for a different session than the one asked for",
    ),
    Code.PROFILE_MISMATCH: (_E.IDENTITY, "the dashboard answered for a different profile"),
    Code.LINEAGE_REJECTED: (_E.IDENTITY, "the candidate segment could not be proven to belong to this task"),
    Code.FORK_AMBIGUOUS: (_E.IDENTITY, "two candidate segments are proven on different branches of the task"),
    Code.INCOMPATIBLE: (_E.INCOMPATIBLE, "the dashboard sent a response this version does not understand"),
    Code.UNSUPPORTED: (_E.INCOMPATIBLE, "the dashboard does not support this request"),
    Code.BAD_REQUEST: (_E.INCOMPATIBLE, "the dashboard refused the request"),
    Code.NETWORK: (_E.NETWORK, "could not reach the dashboard"),
    Code.TIMEOUT: (_E.NETWORK, "the dashboard did not answer in time"),
    Code.SERVER_ERROR: (_E.NETWORK, "the dashboard failed with a server error"),
    Code.RATE_LIMITED: (_E.NETWORK, "the dashboard asks to slow down"),
    Code.FINAL_READ_FAILED: (_E.NETWORK, "the task ended, but its final transcript read failed"),
    Code.INTERRUPTED: (_E.INTERRUPTED, "interrupted"),
    Code.STORE_UNAVAILABLE: (_E.NO_STORE, "the local Hermes store is needed and could not be read"),
}
RETRYABLE = frozenset({Code.NOT_FOUND, Code.NETWORK, Code.TIMEOUT, Code.SERVER_ERROR, Code.RATE_LIMITED})
_HINTS = {
    Code.INVALID_ID: "ids are passed exactly as the dashboard shows them",
    Code.AUTH_MISSING: (
        "set HERMES_DASHBOARD_TOKEN or --token-file (loopback dashboards that publish their "
        "token are discovered automatically); a dashboard that serves no page and writes no "
        "host record (upstream 0.20, `hermes serve`) takes its token from "
        "HERMES_DASHBOARD_SESSION_TOKEN when it starts: pass that value; a password-gated "
        "dashboard needs --username and --password-file"
    ),
    Code.AUTH_REJECTED: "check the token file or the password file",
    Code.AUTH_EXPIRED: "log in again (run the command again with --password-file)",
    Code.NOT_FOUND: "check the full id; a just-started child may need a moment to be flushed",
    Code.PROFILE_NOT_FOUND: "check --profile (or the gateway's profile) against the dashboard's profiles",
    Code.PROFILE_MISMATCH: "check --profile against the dashboard's profiles",
    Code.LINEAGE_REJECTED: "only verified rows are shown; check the --tip id",
    Code.FORK_AMBIGUOUS: "pass only one --tip of the branch you want",
    Code.INCOMPATIBLE: "run with --debug and report the backend version",
    Code.NETWORK: "is the dashboard running? check --url",
    Code.TIMEOUT: "raise --request-timeout, or check the dashboard",
    Code.SERVER_ERROR: "try again; see the dashboard's log",
    Code.STORE_UNAVAILABLE: (
        "run hermes-task on the dashboard's host, or pass --store PATH to the dashboard's state.db"
    ),
}
TABLE = {
    code: Failure(status, code in RETRYABLE, text, _HINTS.get(code)) for code, (status, text) in _ROWS.items()
}

# A latest-descendant hint naming a session the dashboard cannot show (404, a malformed or
# mismatched detail) is only a hint that did not pan out (reading/reader.py).
HINT_IGNORABLE = frozenset({Code.NOT_FOUND, Code.INCOMPATIBLE, Code.IDENTITY_MISMATCH})
# `/latest-descendant` itself failing this way means "no hint" (an old backend, no route).
DESCENDANT_IGNORABLE = frozenset({Code.NOT_FOUND, Code.UNSUPPORTED, Code.BAD_REQUEST, Code.INCOMPATIBLE})


def exit_status_for(code: Code) -> ExitStatus:
    return TABLE[code].exit


def error_message(code: Code, detail: str = "", summary: str | None = None) -> str:
    """The one-line message of `code` (or `summary`), with `detail` (already safe) after a colon."""
    base = summary or TABLE[code].message
    return f"{base}: {detail}" if detail else base


class HermesError(Exception):
    """A failure with a stable code. `detail`: already-safe context the message includes
    (never unsanitised backend prose, nor a secret); `hint` and `summary` replace the table's
    hint and message when the failure knows better."""

    def __init__(
        self,
        code: Code,
        detail: str = "",
        *,
        retryable: bool | None = None,
        status: int | None = None,
        hint: str | None = None,
        summary: str | None = None,
    ) -> None:
        super().__init__(f"{code.value}: {detail}" if detail else code.value)
        self.code = code
        self.detail = detail
        self.retryable = TABLE[code].retryable if retryable is None else retryable
        self.status = status
        self.hint = hint if hint is not None else TABLE[code].hint
        self.summary = summary

    @property
    def exit_status(self) -> ExitStatus:
        return exit_status_for(self.code)

    @property
    def message(self) -> str:
        return error_message(self.code, self.detail, self.summary)


class Interrupted(KeyboardInterrupt):
    """Ctrl-C, SIGTERM or SIGHUP: unwinds every loop as KeyboardInterrupt does, carrying the
    exit status the process ends with (130, 143 or 129)."""

    def __init__(self, status: ExitStatus = ExitStatus.INTERRUPTED, what: str = "Ctrl-C") -> None:
        super().__init__(what)
        self.status = status
        self.what = what


def interrupt_status(exc: KeyboardInterrupt) -> int:
    """The exit status of an interruption: its own, or 130 for a plain Ctrl-C."""
    return int(exc.status) if isinstance(exc, Interrupted) else int(ExitStatus.INTERRUPTED)
