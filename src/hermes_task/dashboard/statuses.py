"""The one mapping from an HTTP answer of the dashboard to a typed failure.

Both the read-only API client (dashboard/client.py) and the password login
(dashboard/auth.py) turn a non-2xx response into a `HermesError` here, so a status means the
same everywhere. Backend prose reaches the failure only through `clean_line`, cut to 200
characters, and never a header value other than a redirect's `/login` target.

Invariant: every non-2xx status maps to exactly one code; 2xx is never passed in.
"""

from __future__ import annotations

from typing import Any

import httpx

from hermes_task.core.sanitize import clean_line
from hermes_task.failures import Code, HermesError

# FastAPI's request-validation answers (a bad query parameter).
VALIDATION_STATUSES = frozenset({400, 422})


def body_of(response: httpx.Response) -> dict[str, Any]:
    """The response's JSON object, or {} when it is not one."""
    try:
        body = response.json()
    except (ValueError, RecursionError):  # RecursionError: nesting deeper than the parser's limit
        return {}
    return body if isinstance(body, dict) else {}


def _login_failure(status: int) -> HermesError:
    """`POST /auth/password-login` answers: 401 is a wrong password, 404 no login route."""
    if status == 401:
        return HermesError(Code.AUTH_REJECTED, "invalid username or password", status=status)
    if status == 429:
        return HermesError(Code.RATE_LIMITED, "too many login attempts", status=status)
    if status == 404:
        return HermesError(Code.UNSUPPORTED, "this dashboard has no password login", status=status)
    if status >= 500:
        return HermesError(Code.SERVER_ERROR, f"password login: HTTP {status}", status=status)
    return HermesError(Code.AUTH_REJECTED, f"password login: HTTP {status}", status=status)


def failure_for(response: httpx.Response, *, have_credentials: bool, login: bool = False) -> HermesError:
    """Map a non-2xx response to a typed failure; `login` for the password-login POST."""
    status = response.status_code
    if login:
        return _login_failure(status)
    body = body_of(response)
    detail = body.get("detail")
    text = clean_line(detail)[:200] if isinstance(detail, str) else ""
    if 300 <= status < 400:
        location = response.headers.get("location", "")
        if "/login" in location:
            return HermesError(Code.AUTH_MISSING, "password login required", status=status)
        return HermesError(Code.INCOMPATIBLE, f"unexpected redirect (HTTP {status})", status=status)
    if status == 401:
        error = body.get("error")
        if error == "session_expired":
            return HermesError(Code.AUTH_EXPIRED, status=status)
        if error == "unauthenticated":
            return HermesError(Code.AUTH_MISSING, "password login required", status=status)
        code = Code.AUTH_REJECTED if have_credentials else Code.AUTH_MISSING
        return HermesError(code, status=status)
    if status == 403:
        return HermesError(Code.AUTH_REJECTED, f"HTTP 403 {text}".strip(), status=status)
    if status == 404:
        return HermesError(Code.NOT_FOUND, text, status=status)
    if status == 405:
        return HermesError(Code.UNSUPPORTED, "HTTP 405", status=status)
    if status == 429:
        return HermesError(Code.RATE_LIMITED, status=status)
    if status in VALIDATION_STATUSES:
        return HermesError(Code.BAD_REQUEST, f"HTTP {status} {text}".strip(), status=status)
    if status >= 500:
        return HermesError(Code.SERVER_ERROR, f"HTTP {status}", status=status)
    return HermesError(Code.INCOMPATIBLE, f"HTTP {status}", status=status)
