"""Typed failures, their stable codes and the one mapping from failure to exit status.

Every failure the tool can report is a `HermesError` carrying a `Code`. The code decides the
exit status (`exit_status_for`) and whether a retry may help; the human wording lives in
`catalogue.py`, keyed by the same code, so JSON carries codes and never only English.
"""

from __future__ import annotations

import enum


class ExitStatus(enum.IntEnum):
    """Documented exit statuses (README "Exit codes"; contract.md)."""

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


_EXIT: dict[Code, ExitStatus] = {
    Code.INTERNAL: ExitStatus.INTERNAL,
    Code.CLIENT_CLOSED: ExitStatus.INTERNAL,
    Code.USAGE: ExitStatus.USAGE,
    Code.INVALID_ID: ExitStatus.USAGE,
    Code.CONFIG: ExitStatus.USAGE,
    Code.UNKNOWN_GATEWAY: ExitStatus.USAGE,
    Code.AUTH_MISSING: ExitStatus.AUTH,
    Code.AUTH_REJECTED: ExitStatus.AUTH,
    Code.AUTH_EXPIRED: ExitStatus.AUTH,
    Code.NOT_FOUND: ExitStatus.NOT_FOUND,
    Code.IDENTITY_MISMATCH: ExitStatus.IDENTITY,
    Code.PROFILE_MISMATCH: ExitStatus.IDENTITY,
    Code.LINEAGE_REJECTED: ExitStatus.IDENTITY,
    Code.FORK_AMBIGUOUS: ExitStatus.IDENTITY,
    Code.INCOMPATIBLE: ExitStatus.INCOMPATIBLE,
    Code.UNSUPPORTED: ExitStatus.INCOMPATIBLE,
    Code.BAD_REQUEST: ExitStatus.INCOMPATIBLE,
    Code.NETWORK: ExitStatus.NETWORK,
    Code.TIMEOUT: ExitStatus.NETWORK,
    Code.SERVER_ERROR: ExitStatus.NETWORK,
    Code.RATE_LIMITED: ExitStatus.NETWORK,
    Code.FINAL_READ_FAILED: ExitStatus.NETWORK,
    Code.INTERRUPTED: ExitStatus.INTERRUPTED,
}

_RETRYABLE = frozenset({Code.NOT_FOUND, Code.NETWORK, Code.TIMEOUT, Code.SERVER_ERROR, Code.RATE_LIMITED})


def exit_status_for(code: Code) -> ExitStatus:
    """The exit status of a failure code; every code has exactly one."""
    return _EXIT[code]


class HermesError(Exception):
    """A failure with a stable code.

    `detail` is extra, already-safe context (an id, a status, a reason) that the catalogue
    message may include; it never carries backend prose unsanitised, nor a secret.
    """

    def __init__(
        self,
        code: Code,
        detail: str = "",
        *,
        retryable: bool | None = None,
        status: int | None = None,
    ) -> None:
        super().__init__(f"{code.value}: {detail}" if detail else code.value)
        self.code = code
        self.detail = detail
        self.retryable = code in _RETRYABLE if retryable is None else retryable
        self.status = status

    @property
    def exit_status(self) -> ExitStatus:
        return exit_status_for(self.code)


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
