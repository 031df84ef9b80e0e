"""DashboardClient: typed, read-only GETs against the Hermes dashboard API (implements
reading.api.DashboardAPI), and the one mapping from its answers to typed failures.

The injected `httpx.Client` never follows redirects. With a profile selected, every response
that names a profile must name that one. A transient failure is retried once (docs/exit-codes.md).
Backend prose reaches a failure only through `clean_line`; debug lines and failures never carry
content or a secret.
"""

from __future__ import annotations

import re
import ssl
import time
from collections.abc import Callable
from typing import Any, TypeVar

import httpx
from msgspec import UNSET

from hermes_task.core.sanitize import SessionId, clean_line, is_valid_id, looks_like_prefix, path_segment
from hermes_task.core.wire import PAGE_LIMIT, LatestDescendant, MessagesPage, SessionDetail, WireError, decode
from hermes_task.failures import Code, HermesError

# The password login's failures by status; any other is `password login: HTTP N`.
_LOGIN = {
    401: (Code.AUTH_REJECTED, "invalid username or password"),
    429: (Code.RATE_LIMITED, "too many login attempts"),
    404: (Code.UNSUPPORTED, "this dashboard has no password login"),
}
# A read's failure by status, and whether the body's `detail` follows `HTTP N` (None: no
# message at all); any other status is `HTTP N`, a server error from 500 on.
_STATUS: dict[int, tuple[Code, bool | None]] = {
    403: (Code.AUTH_REJECTED, True),
    405: (Code.UNSUPPORTED, False),
    429: (Code.RATE_LIMITED, None),
    400: (Code.BAD_REQUEST, True),  # FastAPI's request validation (a bad query parameter)
    422: (Code.BAD_REQUEST, True),
}


def failure_for(
    response: httpx.Response,
    *,
    credentials: str | None,
    login: bool = False,
    ident: str = "",
    route: str = "",
    kind: str = "",
) -> HermesError:
    """A non-2xx response's failure; `login` for the password-login POST. `credentials`: where
    the credentials in force came from (None: none were sent); `route`: "GET /api/…"."""
    status = response.status_code
    fallback = Code.SERVER_ERROR if status >= 500 else Code.AUTH_REJECTED if login else Code.INCOMPATIBLE
    if login:
        code, what = _LOGIN.get(status, (fallback, f"password login: HTTP {status}"))
        return HermesError(code, what, status=status)
    try:
        body = response.json()
    except (ValueError, RecursionError):  # RecursionError: nesting deeper than the parser's limit
        body = None
    body = body if isinstance(body, dict) else {}
    if 300 <= status < 400:  # to a login page: a login is required
        if "/login" in response.headers.get("location", ""):
            return HermesError(Code.AUTH_MISSING, "password login required", status=status)
        return HermesError(Code.INCOMPATIBLE, f"unexpected redirect (HTTP {status})", status=status)
    if status == 401:
        return _unauthorized(body.get("error"), credentials, status)
    if status == 404:
        return not_found(response, body, ident=ident, route=route, kind=kind)
    code, with_detail = _STATUS.get(status, (fallback, False))
    detail = body.get("detail")
    text = clean_line(detail)[:200] if with_detail and isinstance(detail, str) else ""
    return HermesError(code, "" if with_detail is None else f"HTTP {status} {text}".strip(), status=status)


def _unauthorized(error: object, credentials: str | None, status: int) -> HermesError:
    """The body's `error` (an expired or missing password login) first, then whether
    credentials were sent at all."""
    if error == "session_expired":
        return HermesError(Code.AUTH_EXPIRED, status=status)
    if error == "unauthenticated":
        return HermesError(Code.AUTH_MISSING, "password login required", status=status)
    if credentials is None:
        return HermesError(Code.AUTH_MISSING, status=status)
    return HermesError(Code.AUTH_REJECTED, status=status, hint=f"check the token from {credentials}")


_PROFILE_NOT_FOUND = re.compile(r"Profile '(.{0,200})' does not exist\.?", re.S)
# Hermes servers' own answers for a route they do not have (0.19's API catch-all, FastAPI's
# default, axisrow's headless web root): the server is Hermes, the path prefix is wrong.
_MISSING_ROUTE_DETAILS = ("No such API endpoint", "Not Found")
_MISSING_ROUTE_ERRORS = ("Headless backend", "Frontend not built")
NOT_A_DASHBOARD = "does not look like a Hermes dashboard"
# The oldest official release whose dashboard serves `/api/sessions/{id}/messages` (the
# oldest hermes-agent on the package index, 0.13.0, already has the route).
MIN_HERMES_AGENT = "0.13.0"
OPTIONAL_ROUTES = frozenset({"around", "timeline", "latest-descendant"})
URL_HINT = "check --url: scheme, host, port and path prefix of the dashboard"


def not_found(
    response: httpx.Response, body: dict[str, Any], *, ident: str, route: str, kind: str = ""
) -> HermesError:
    """A 404, told apart by its body: only Hermes's own "Session not found" and "Profile '…'
    does not exist." are `not_found`/`profile_not_found`; anything else is a missing route."""
    detail, error = body.get("detail"), body.get("error")
    where = f" ({route})" if route else ""
    if detail == "Session not found":
        hint = "pass the full id; prefixes are not resolved" if looks_like_prefix(ident) else None
        return HermesError(Code.NOT_FOUND, f"{clean_line(ident)}{where}".strip(), status=404, hint=hint)
    match = _PROFILE_NOT_FOUND.fullmatch(detail) if isinstance(detail, str) else None
    if match:
        return HermesError(Code.PROFILE_NOT_FOUND, repr(clean_line(match.group(1))), status=404)
    if kind in OPTIONAL_ROUTES:
        return HermesError(Code.UNSUPPORTED, f"this dashboard has no {kind} route{where}", status=404)
    missing_route = (isinstance(detail, str) and detail.startswith(_MISSING_ROUTE_DETAILS)) or (
        isinstance(error, str) and error.startswith(_MISSING_ROUTE_ERRORS)
    )
    if kind == "messages" and missing_route:
        return HermesError(
            Code.INCOMPATIBLE,
            f"backend too old (needs hermes-agent ≥ {MIN_HERMES_AGENT}): it has no route{where}",
            status=404,
            hint="upgrade the Hermes dashboard",
        )
    if missing_route:
        what = f"it has no route {route} (HTTP 404)" if route else "it has no such route (HTTP 404)"
    else:
        page = "an HTML page" if "html" in response.headers.get("content-type", "") else "a foreign answer"
        what = f"HTTP 404 with {page}{where}"
    return HermesError(Code.INCOMPATIBLE, what, status=404, summary=NOT_A_DASHBOARD, hint=URL_HINT)


def origin(url: httpx.URL) -> str:
    """`scheme://host:port`: never the userinfo, path or query."""
    host = f"[{url.host}]" if ":" in url.host else url.host
    port = url.port or {"http": 80, "https": 443}.get(url.scheme, 0)
    return f"{url.scheme}://{host}:{port}"


_DNS = re.compile(
    r"Name or service not known|nodename nor servname|name resolution|No address associated|getaddrinfo",
    re.I,
)


def cause_of(exc: httpx.HTTPError) -> str:
    """Why a request got no answer, in a few words: refused, DNS, TLS, timeout or reset."""
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain and len(chain) < 8:
        chain.append(current)
        current = current.__cause__ or current.__context__
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
    where = f"{origin(url)} ({route})" if route else origin(url)
    code = Code.TIMEOUT if isinstance(exc, httpx.TimeoutException) else Code.NETWORK
    return HermesError(code, f"{where}: {cause_of(exc)}")


DebugWriter = Callable[[str], None]
# The failures a second try of the same GET may not meet (docs/reliability.md).
TRANSIENT = frozenset({Code.NETWORK, Code.TIMEOUT, Code.SERVER_ERROR, Code.RATE_LIMITED})
RETRY_PAUSE = 0.25
M = TypeVar("M", SessionDetail, MessagesPage, LatestDescendant)


def _segment(sid: str) -> str:
    """The URL path segment of `sid`: an invalid id the dashboard named (parent links, hints)
    is an incompatible response, never a request."""
    if not is_valid_id(sid):
        raise HermesError(Code.INCOMPATIBLE, "the dashboard named an invalid session id")
    return path_segment(SessionId(sid))


class DashboardClient:
    """Every method validates the response it returns."""

    def __init__(
        self,
        http: httpx.Client,
        *,
        profile: str | None = None,
        credentials: str | None = "the configured credentials",
        debug: DebugWriter | None = None,
        retry_pause: float = RETRY_PAUSE,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._http = http
        self._retry_pause = retry_pause
        self._sleep = sleep
        self.profile = profile
        self.credentials = credentials  # where they came from, for a rejection's hint; never a secret
        self._debug: DebugWriter = debug or (lambda _line: None)
        self._closed = False

    def use_credentials(self, source: str | None) -> None:
        self.credentials = source
        self._debug(f"credentials: {source or 'none'}")

    def close(self) -> None:
        self._closed = True
        self._http.close()

    def _params(self, extra: dict[str, str | int | bool] | None = None) -> dict[str, str]:
        params = {k: (str(v).lower() if isinstance(v, bool) else str(v)) for k, v in (extra or {}).items()}
        if self.profile is not None:
            params["profile"] = self.profile
        return params

    def get(self, kind: str, path: str, params: dict[str, str], ident: str, model: type[M]) -> M:
        """GET `path` and decode a 2xx JSON body as `model` (core/wire.py)."""
        route = f"GET {self._http.base_url.path.rstrip('/')}{path}"  # with the URL's path prefix
        retried = False
        while True:
            if self._closed:
                raise HermesError(Code.CLIENT_CLOSED)
            shown = " ".join(
                f"{k}={v}" for k, v in params.items() if k in ("offset", "limit", "order", "row_id")
            )
            self._debug(f"start {kind} {route} id={clean_line(ident)} {shown}".rstrip())
            started = time.monotonic()
            try:
                try:
                    response = self._http.get(path, params=params)
                except httpx.HTTPError as exc:
                    failure = transport_failure(exc, self._http.base_url, route)
                    self._settle(kind, ident, started, failure.code.value)
                    raise failure from None
                return self._decode(kind, route, ident, started, response, model)
            except HermesError as exc:
                if retried or exc.code not in TRANSIENT or self._closed:
                    raise
                retried = True
                self._debug(f"retry {kind} id={clean_line(ident)} after {exc.code.value}")
                self._sleep(self._retry_pause)

    def _decode(
        self, kind: str, route: str, ident: str, started: float, response: httpx.Response, model: type[M]
    ) -> M:
        """Decoded in one pass from the bytes; the path of a shape's first mismatch goes to --debug."""
        if not 200 <= response.status_code < 300:
            self._settle(kind, ident, started, f"HTTP {response.status_code}")
            raise failure_for(response, credentials=self.credentials, ident=ident, route=route, kind=kind)
        content_type = response.headers.get("content-type", "")
        try:
            if "json" not in content_type:
                raise ValueError(content_type)
            body = decode(response.content, model)
        except WireError as exc:
            self._settle(kind, ident, started, f"HTTP {response.status_code}")
            self._debug(f"incompatible {kind}: {clean_line(str(exc))}")
            raise HermesError(Code.INCOMPATIBLE, f"{kind}: missing or mistyped fields") from None
        except (ValueError, RecursionError):  # RecursionError: nesting deeper than the parser's limit
            self._settle(kind, ident, started, "not JSON")
            what = clean_line(content_type.split(";")[0])[:60] or "no content type"
            raise HermesError(
                Code.INCOMPATIBLE,
                f"{route} answered {what}, not JSON",
                summary=NOT_A_DASHBOARD,
                hint=URL_HINT,
            ) from None
        count = f" returned={len(body.messages)}" if isinstance(body, MessagesPage) else ""
        self._settle(kind, ident, started, f"HTTP {response.status_code}{count}")
        return body

    def _settle(self, kind: str, ident: str, started: float, outcome: str) -> None:
        ms = (time.monotonic() - started) * 1000
        self._debug(f"settle {kind} id={clean_line(ident)} {outcome} {ms:.0f}ms")

    def _check_profile(self, kind: str, value: object, *, named_only: bool = True) -> None:
        """A profile selected must be the one `value` names; `named_only`: an answer that names
        none (`UNSET`) passes."""
        if self.profile is not None and value != self.profile and not (named_only and value is UNSET):
            shown = clean_line(value) if isinstance(value, str) else "none"
            raise HermesError(Code.PROFILE_MISMATCH, f"{kind} answered for profile {shown}")

    def detail(self, sid: SessionId | str) -> SessionDetail:
        """The session row; its bare `id` must equal `sid` exactly (a prefix answer is an
        `identity_mismatch`)."""
        detail = self.get("detail", f"/api/sessions/{_segment(sid)}", self._params(), sid, SessionDetail)
        if detail.id != sid:
            raise HermesError(
                Code.IDENTITY_MISMATCH, f"asked for {clean_line(sid)}, got {clean_line(detail.id)}"
            )
        self._check_profile("detail", detail.profile, named_only=False)
        return detail

    def messages(
        self, sid: SessionId | str, *, offset: int = 0, limit: int = PAGE_LIMIT, order: str = "latest"
    ) -> MessagesPage:
        """One page; its pagination must echo the query (0.18.x and older send none: every
        active row, the query ignored)."""
        query: dict[str, str | int | bool] = {"limit": limit, "offset": offset, "order": order}
        params = self._params({**query, "inline_images": False, "include_compacted": True})
        page = self.get("messages", f"/api/sessions/{_segment(sid)}/messages", params, sid, MessagesPage)
        pag = page.pagination
        # The echo must be exactly the request: a null, a -1 or another offset is a page of
        # something else; 0.19.x pagination carries no `order`.
        if page.paginated and (
            pag.offset != offset or pag.limit != limit or (page.ordered and pag.order != order)
        ):
            raise HermesError(Code.INCOMPATIBLE, "messages: pagination does not match the request")
        if pag.returned != len(page.messages):
            raise HermesError(Code.INCOMPATIBLE, "messages: returned count does not match the rows")
        # An envelope that names no profile (0.18.x, 0.19.x, upstream 0.20) is held to it by
        # the detail read of the same session, which always comes first.
        self._check_profile("messages", page.profile)
        return page

    def latest_descendant(self, sid: str) -> LatestDescendant:
        path = f"/api/sessions/{_segment(sid)}/latest-descendant"
        return self.get("latest-descendant", path, self._params(), sid, LatestDescendant)

    def around(self, sid: str, row_id: int, *, limit: int = 120) -> MessagesPage:
        """iot `/messages/around?row_id=`: a page starting at a user prompt of exactly `sid`;
        its pagination `offset` counts from the oldest row."""
        params = self._params({"row_id": row_id, "limit": limit})
        path = f"/api/sessions/{_segment(sid)}/messages/around"
        try:
            page = self.get("around", path, params, sid, MessagesPage)
        except HermesError as exc:
            # A server without the route answers 405, or a 404 that is not Hermes's session
            # or profile answer (already `unsupported`: OPTIONAL_ROUTES).
            if exc.status == 405 or (exc.status == 404 and exc.code is Code.UNSUPPORTED):
                raise HermesError(
                    Code.UNSUPPORTED, "this dashboard has no /messages/around route", status=exc.status
                ) from None
            raise
        if page.pagination.offset is None or page.pagination.returned != len(page.messages):
            raise HermesError(Code.INCOMPATIBLE, "around: pagination does not match the rows")
        self._check_profile("around", page.profile)
        return page
