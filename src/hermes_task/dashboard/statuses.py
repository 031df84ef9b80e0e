"""The one mapping from an HTTP answer (or no answer) of the dashboard to a typed failure.

Both the read-only API client (dashboard/client.py) and the password login
(dashboard/auth.py) turn a non-2xx response into a `HermesError` here, so a status means the
same everywhere; `transport_failure` names what could not be reached (scheme, host and port,
never credentials) and why (refused, DNS, TLS, timeout). A 404 is told apart by its body:
only the two answers every Hermes backend gives ("Session not found", "Profile '…' does not
exist.") are `not_found`/`profile_not_found`; a missing route, an HTML page or anyone else's
JSON is a missing route, never a session that is not flushed yet: for an optional route
(`OPTIONAL_ROUTES`: around, timeline, latest-descendant) it is `unsupported`; for `/messages`
answered with a Hermes server's own missing-route body, the backend is too old
(`incompatible_response`, naming `MIN_HERMES_AGENT`); otherwise the URL is not a Hermes
dashboard (`incompatible_response`). Backend prose reaches a failure only through
`clean_line`, cut to 200 characters.

Invariant: every non-2xx status maps to exactly one code; 2xx is never passed in.
"""

from __future__ import annotations

import re
import ssl
from typing import Any

import httpx

from hermes_task.core.sanitize import clean_line, looks_like_prefix
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


def failure_for(
    response: httpx.Response,
    *,
    credentials: str | None,
    login: bool = False,
    ident: str = "",
    route: str = "",
    kind: str = "",
) -> HermesError:
    """Map a non-2xx response to a typed failure; `login` for the password-login POST.
    `credentials` names where the credentials in force came from (None: none were sent);
    `ident` and `route` ("GET /api/…") name what was asked, `kind` which route it is
    ("detail", "messages", "around", ...)."""
    status = response.status_code
    if login:
        return _login_failure(status)
    body = body_of(response)
    if 300 <= status < 400:
        return _redirect_failure(response, status)
    if status == 401:
        return _unauthorized(body, credentials, status)
    if status == 404:
        return not_found(response, body, ident=ident, route=route, kind=kind)
    return _status_failure(status, body)


def _redirect_failure(response: httpx.Response, status: int) -> HermesError:
    """A 3xx: to a login page, a login is required; anywhere else, not what a dashboard says."""
    location = response.headers.get("location", "")
    if "/login" in location:
        return HermesError(Code.AUTH_MISSING, "password login required", status=status)
    return HermesError(Code.INCOMPATIBLE, f"unexpected redirect (HTTP {status})", status=status)


def _unauthorized(body: dict[str, Any], credentials: str | None, status: int) -> HermesError:
    """A 401: the body's `error` (an expired or missing password login) first, then whether
    credentials were sent at all."""
    error = body.get("error")
    if error == "session_expired":
        return HermesError(Code.AUTH_EXPIRED, status=status)
    if error == "unauthenticated":
        return HermesError(Code.AUTH_MISSING, "password login required", status=status)
    if credentials is None:
        return HermesError(Code.AUTH_MISSING, status=status)
    return HermesError(Code.AUTH_REJECTED, status=status, hint=f"check the token from {credentials}")


def _status_failure(status: int, body: dict[str, Any]) -> HermesError:
    """Any other non-2xx status; the body's `detail` (cleaned, cut) only where it helps."""
    detail = body.get("detail")
    text = clean_line(detail)[:200] if isinstance(detail, str) else ""
    if status == 403:
        return HermesError(Code.AUTH_REJECTED, f"HTTP 403 {text}".strip(), status=status)
    if status == 405:
        return HermesError(Code.UNSUPPORTED, "HTTP 405", status=status)
    if status == 429:
        return HermesError(Code.RATE_LIMITED, status=status)
    if status in VALIDATION_STATUSES:
        return HermesError(Code.BAD_REQUEST, f"HTTP {status} {text}".strip(), status=status)
    if status >= 500:
        return HermesError(Code.SERVER_ERROR, f"HTTP {status}", status=status)
    return HermesError(Code.INCOMPATIBLE, f"HTTP {status}", status=status)


_SESSION_NOT_FOUND = "Session not found"
_PROFILE_NOT_FOUND = re.compile(r"Profile '(.{0,200})' does not exist\.?", re.S)
# Hermes servers' own answers for a route they do not have (0.19's API catch-all, FastAPI's
# default, axisrow's headless web root): the server is Hermes, the path prefix is wrong.
_MISSING_ROUTE_DETAILS = ("No such API endpoint", "Not Found")
_MISSING_ROUTE_ERRORS = ("Headless backend", "Frontend not built")
NOT_A_DASHBOARD = "does not look like a Hermes dashboard"
# The oldest official release whose dashboard serves `/api/sessions/{id}/messages` (the
# oldest hermes-agent on the package index, 0.13.0, already has the route).
MIN_HERMES_AGENT = "0.13.0"
# Routes a dashboard may lack and still be read (their 404 is `unsupported`).
OPTIONAL_ROUTES = frozenset({"around", "timeline", "latest-descendant"})
PREFIX_HINT = "pass the full id; prefixes are not resolved"
URL_HINT = "check --url: scheme, host, port and path prefix of the dashboard"


def missing_route(body: dict[str, Any]) -> bool:
    """A Hermes server's answer for a route it does not serve."""
    detail, error = body.get("detail"), body.get("error")
    if isinstance(detail, str) and detail.startswith(_MISSING_ROUTE_DETAILS):
        return True
    return isinstance(error, str) and error.startswith(_MISSING_ROUTE_ERRORS)


def not_found(
    response: httpx.Response, body: dict[str, Any], *, ident: str, route: str, kind: str = ""
) -> HermesError:
    """A 404: a session or profile the dashboard does not have, a route it does not have,
    or not a dashboard at all."""
    detail = body.get("detail")
    where = f" ({route})" if route else ""
    if detail == _SESSION_NOT_FOUND:
        hint = PREFIX_HINT if looks_like_prefix(ident) else None
        return HermesError(Code.NOT_FOUND, f"{clean_line(ident)}{where}".strip(), status=404, hint=hint)
    match = _PROFILE_NOT_FOUND.fullmatch(detail) if isinstance(detail, str) else None
    if match:
        return HermesError(Code.PROFILE_NOT_FOUND, repr(clean_line(match.group(1))), status=404)
    if kind in OPTIONAL_ROUTES:
        return HermesError(Code.UNSUPPORTED, f"this dashboard has no {kind} route{where}", status=404)
    if kind == "messages" and missing_route(body):
        return HermesError(
            Code.INCOMPATIBLE,
            f"backend too old (needs hermes-agent ≥ {MIN_HERMES_AGENT}): it has no route{where}",
            status=404,
            hint="upgrade the Hermes dashboard",
        )
    if missing_route(body):
        why = f"it has no route {route}" if route else "it has no such route"
        return HermesError(
            Code.INCOMPATIBLE, f"{why} (HTTP 404)", status=404, summary=NOT_A_DASHBOARD, hint=URL_HINT
        )
    kind = "an HTML page" if "html" in response.headers.get("content-type", "") else "a foreign answer"
    return HermesError(
        Code.INCOMPATIBLE,
        f"HTTP 404 with {kind}{where}",
        status=404,
        summary=NOT_A_DASHBOARD,
        hint=URL_HINT,
    )


def origin(url: httpx.URL) -> str:
    """`scheme://host:port` of `url`: never its userinfo, path or query."""
    host = url.host
    if ":" in host:
        host = f"[{host}]"
    port = url.port or {"http": 80, "https": 443}.get(url.scheme, 0)
    return f"{url.scheme}://{host}:{port}"


def _chain(exc: BaseException) -> list[BaseException]:
    out: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in out and len(out) < 8:
        out.append(current)
        current = current.__cause__ or current.__context__
    return out


_DNS = re.compile(
    r"Name or service not known|nodename nor servname|name resolution|No address associated|getaddrinfo",
    re.I,
)


def cause_of(exc: httpx.HTTPError) -> str:
    """Why a request got no answer, in a few words: refused, DNS, TLS, timeout or reset."""
    chain = _chain(exc)
    text = " ".join(str(e) for e in chain)
    if isinstance(exc, httpx.TimeoutException):
        return "connect timeout" if isinstance(exc, httpx.ConnectTimeout) else "timeout"
    if any(isinstance(e, ConnectionRefusedError) for e in chain) or "refused" in text.lower():
        return "connection refused"
    if _DNS.search(text):
        return "DNS lookup failed"
    if any(isinstance(e, ssl.SSLError) for e in chain) or re.search(r"\bSSL\b|TLS|certificate", text):
        return "TLS handshake failed"
    if "reset" in text.lower() or isinstance(exc, httpx.RemoteProtocolError):
        return "connection closed by the server"
    return type(exc).__name__


def transport_failure(exc: httpx.HTTPError, url: httpx.URL, route: str) -> HermesError:
    """A request that got no answer: `timeout` or `network`, naming the origin and cause."""
    where = f"{origin(url)} ({route})" if route else origin(url)
    cause = cause_of(exc)
    if isinstance(exc, httpx.TimeoutException):
        return HermesError(Code.TIMEOUT, f"{where}: {cause}")
    return HermesError(Code.NETWORK, f"{where}: {cause}")
