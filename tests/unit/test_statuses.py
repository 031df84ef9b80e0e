"""dashboard/client.py: one mapping from an HTTP answer, or none, to a failure that says
what happened (which id, which route, which origin, which cause)."""

from __future__ import annotations

import socket
import ssl
from typing import Any

import httpx
import pytest

from hermes_task.core.sanitize import looks_like_prefix
from hermes_task.dashboard.client import DashboardClient, failure_for, origin, transport_failure
from hermes_task.failures import Code, ExitStatus, HermesError
from tests.support.dashboard import Dashboard, refused

SID = "20261130_170935_fc44ff"
ROUTE = f"GET /api/sessions/{SID}"


def answer(status: int, **kwargs: Any) -> httpx.Response:
    return httpx.Response(status, **kwargs)


def test_session_not_found_names_the_id_and_the_route_without_doubled_text() -> None:
    err = failure_for(
        answer(404, json={"detail": "Session not found"}), credentials=None, ident=SID, route=ROUTE
    )
    assert err.code is Code.NOT_FOUND
    assert err.retryable is True
    assert err.message == f"session not found: {SID} ({ROUTE})"
    assert "Session not found" not in err.message


def test_an_id_prefix_gets_the_prefix_hint() -> None:
    err = failure_for(
        answer(404, json={"detail": "Session not found"}), credentials=None, ident="20261130_17", route=ROUTE
    )
    assert err.hint == "pass the full id; prefixes are not resolved"
    full = failure_for(
        answer(404, json={"detail": "Session not found"}), credentials=None, ident=SID, route=ROUTE
    )
    assert full.hint != err.hint


@pytest.mark.parametrize(
    ("value", "prefix"),
    [
        ("2026", True),
        ("20261130_", True),
        ("20261130_170935_fc4", True),
        (SID, False),
        ("my-task", False),
        ("", False),
    ],
)
def test_looks_like_prefix(value: str, prefix: bool) -> None:
    assert looks_like_prefix(value) is prefix


def test_profile_not_found_is_final_exit_4() -> None:
    body = {"detail": "Profile 'typo' does not exist."}
    err = failure_for(answer(404, json=body), credentials=None, ident=SID, route=ROUTE)
    assert err.code is Code.PROFILE_NOT_FOUND
    assert err.exit_status is ExitStatus.NOT_FOUND
    assert err.retryable is False
    assert err.message == "the dashboard has no such profile: 'typo'"


@pytest.mark.parametrize(
    "response",
    [
        answer(404, text="<!doctype html><title>404</title>", headers={"content-type": "text/html"}),
        answer(404, json={"message": "no such thing", "status": 404}),
        answer(404, json={"detail": "No such API endpoint: /prefix/api/sessions/x"}),
        answer(404, json={"detail": "Not Found"}),
        answer(404, json={"error": "Headless backend: the web UI is not served here"}),
        answer(404, json={"error": "Frontend not built"}),
        answer(404, text="oops"),
    ],
    ids=[
        "html",
        "foreign-json",
        "0.19-missing-route",
        "fastapi",
        "axisrow-headless",
        "axisrow-frontend",
        "text",
    ],
)
def test_anything_else_on_404_does_not_look_like_a_hermes_dashboard(response: httpx.Response) -> None:
    err = failure_for(response, credentials=None, ident=SID, route=ROUTE)
    assert err.code is Code.INCOMPATIBLE
    assert err.exit_status is ExitStatus.INCOMPATIBLE
    assert err.message.startswith("does not look like a Hermes dashboard: ")
    assert ROUTE in err.message
    assert err.hint is not None
    assert "--url" in err.hint


def test_a_rejected_token_names_its_source_and_a_missing_one_asks_for_one() -> None:
    rejected = failure_for(answer(401, json={"detail": "Unauthorized"}), credentials="flag --token-file")
    assert rejected.code is Code.AUTH_REJECTED
    assert rejected.hint == "check the token from flag --token-file"
    missing = failure_for(answer(401, json={"detail": "Unauthorized"}), credentials=None)
    assert missing.code is Code.AUTH_MISSING


def test_an_expired_session_is_auth_expired() -> None:
    err = failure_for(answer(401, json={"error": "session_expired"}), credentials="password login")
    assert err.code is Code.AUTH_EXPIRED
    assert (
        failure_for(answer(401, json={"error": "unauthenticated"}), credentials="x").code is Code.AUTH_MISSING
    )


@pytest.mark.parametrize(
    ("status", "code"),
    [(401, Code.AUTH_REJECTED), (404, Code.UNSUPPORTED), (429, Code.RATE_LIMITED), (502, Code.SERVER_ERROR),
     (400, Code.AUTH_REJECTED)],
)  # fmt: skip
def test_the_login_answers(status: int, code: Code) -> None:
    assert failure_for(answer(status), credentials=None, login=True).code is code


def _chained(outer: Exception, inner: BaseException) -> Exception:
    outer.__cause__ = inner
    return outer


URL = httpx.URL("https://dash.example:8443/prefix")


@pytest.mark.parametrize(
    ("exc", "code", "cause"),
    [
        (_chained(httpx.ConnectError("[Errno 111]"), ConnectionRefusedError(111, "x")), Code.NETWORK, "connection refused"),
        (httpx.ConnectError("[Errno 111] Connection refused"), Code.NETWORK, "connection refused"),
        (_chained(httpx.ConnectError("x"), socket.gaierror(-2, "Name or service not known")), Code.NETWORK,
         "DNS lookup failed"),
        (httpx.ConnectError("[Errno -3] Temporary failure in name resolution"), Code.NETWORK, "DNS lookup failed"),
        (_chained(httpx.ConnectError("x"), ssl.SSLCertVerificationError("verify failed")), Code.NETWORK,
         "TLS handshake failed"),
        (httpx.ConnectError("[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed"), Code.NETWORK,
         "TLS handshake failed"),
        (httpx.ConnectTimeout("timed out"), Code.TIMEOUT, "connect timeout"),
        (httpx.ReadTimeout("timed out"), Code.TIMEOUT, "timeout"),
        (httpx.RemoteProtocolError("Server disconnected"), Code.NETWORK, "connection closed by the server"),
    ],
)  # fmt: skip
def test_a_network_failure_names_the_origin_and_the_cause(
    exc: httpx.HTTPError, code: Code, cause: str
) -> None:
    err = transport_failure(exc, URL, ROUTE)
    assert err.code is code
    assert err.detail == f"https://dash.example:8443 ({ROUTE}): {cause}"


def test_the_origin_never_carries_credentials_and_fills_the_default_port() -> None:
    assert origin(httpx.URL("http://user:secret@host/x?token=1")) == "http://host:80"
    assert origin(httpx.URL("https://[::1]/")) == "https://[::1]:443"


def test_the_exception_text_never_reaches_the_message() -> None:
    err = transport_failure(httpx.ConnectError("refused: token=sekrit"), URL, ROUTE)
    assert "sekrit" not in err.message


def test_the_client_maps_transport_errors_with_the_route() -> None:
    dash = Dashboard()
    dash.faults += [refused(), refused()]  # the client retries a transient failure once
    client = DashboardClient(dash.http("http://127.0.0.1:9"), credentials=None, retry_pause=0.0)
    with pytest.raises(HermesError) as info:
        client.detail(SID)
    assert str(info.value) == f"network: http://127.0.0.1:9 (GET /api/sessions/{SID}): connection refused"


def one_session(fault: httpx.Response | Exception) -> Dashboard:
    """A dashboard holding SID whose next answer is `fault`."""
    dash = Dashboard()
    dash.put(SID, source="subagent", parent_session_id=None, started_at=1.5, ended_at=None, end_reason=None)
    dash.faults.append(fault)
    return dash


@pytest.mark.parametrize(
    "fault",
    [refused(), httpx.ReadTimeout("slow"), httpx.Response(503, json={"detail": "busy"}), httpx.Response(429)],
    ids=["reset", "timeout", "503", "429"],
)
def test_one_transient_failure_costs_a_retry_and_nothing_else(fault: httpx.Response | Exception) -> None:
    dash = one_session(fault)
    pauses: list[float] = []
    client = DashboardClient(dash.http("http://127.0.0.1:9"), credentials=None, sleep=pauses.append)
    assert client.detail(SID).id == SID
    assert pauses == [0.25]


@pytest.mark.parametrize(
    "fault", [httpx.Response(401, json={"detail": "Unauthorized"}), httpx.Response(404)], ids=["401", "404"]
)
def test_a_failure_a_retry_cannot_mend_is_not_retried(fault: httpx.Response) -> None:
    dash = one_session(fault)
    client = DashboardClient(
        dash.http("http://127.0.0.1:9"), credentials=None, sleep=lambda _: pytest.fail("retried")
    )
    with pytest.raises(HermesError):
        client.detail(SID)


def test_around_on_a_dashboard_without_the_route_is_unsupported() -> None:
    dash = Dashboard(around=False)  # Hermes's missing-route answer
    dash.put(SID)
    with pytest.raises(HermesError) as info:
        dash.client(base_url="http://127.0.0.1:9").around(SID, 3)
    assert info.value.code is Code.UNSUPPORTED


@pytest.mark.parametrize(
    ("status", "kwargs", "code", "detail"),
    [
        (302, {"headers": {"location": "/login?next=/"}}, Code.AUTH_MISSING, "password login required"),
        (307, {"headers": {"location": "/elsewhere"}}, Code.INCOMPATIBLE, "unexpected redirect (HTTP 307)"),
        (403, {"json": {"detail": "Forbidden"}}, Code.AUTH_REJECTED, "HTTP 403 Forbidden"),
        (403, {}, Code.AUTH_REJECTED, "HTTP 403"),
        (405, {}, Code.UNSUPPORTED, "HTTP 405"),
        (429, {}, Code.RATE_LIMITED, ""),
        (400, {"json": {"detail": "limit must be positive"}}, Code.BAD_REQUEST, "HTTP 400 limit must be positive"),
        (422, {"json": {"detail": [{"loc": ["query"]}]}}, Code.BAD_REQUEST, "HTTP 422"),
        (500, {}, Code.SERVER_ERROR, "HTTP 500"),
        (503, {"json": {"detail": "busy"}}, Code.SERVER_ERROR, "HTTP 503"),
        (418, {}, Code.INCOMPATIBLE, "HTTP 418"),
        (499, {}, Code.INCOMPATIBLE, "HTTP 499"),
    ],
)  # fmt: skip
def test_every_status_has_its_own_failure(
    status: int, kwargs: dict[str, object], code: Code, detail: str | None
) -> None:
    """One answer per branch of the mapping (each `if` of `failure_for` decides one row)."""
    err = failure_for(answer(status, **kwargs), credentials="env", ident=SID, route=ROUTE)
    assert err.code is code
    assert err.detail == detail
    assert err.status == status


@pytest.mark.parametrize(
    ("status", "detail"),
    [(401, "invalid username or password"), (429, "too many login attempts"),
     (404, "this dashboard has no password login"), (500, "password login: HTTP 500"),
     (503, "password login: HTTP 503"), (400, "password login: HTTP 400"), (403, "password login: HTTP 403")],
)  # fmt: skip
def test_every_login_answer_says_what_happened(status: int, detail: str) -> None:
    err = failure_for(answer(status, json={"detail": "x"}), credentials=None, login=True)
    assert err.detail == detail
    assert err.status == status


@pytest.mark.parametrize(
    ("response", "detail"),
    [
        (answer(404, text="<html>no</html>", headers={"content-type": "text/html; charset=utf-8"}),
         f"HTTP 404 with an HTML page ({ROUTE})"),
        (answer(404, json={"message": "no such thing"}), f"HTTP 404 with a foreign answer ({ROUTE})"),
        (answer(404, json={"detail": "Not Found"}), f"it has no route {ROUTE} (HTTP 404)"),
        (answer(404, json={"error": "Frontend not built"}), f"it has no route {ROUTE} (HTTP 404)"),
    ],
)  # fmt: skip
def test_a_404_says_which_kind_of_stranger_answered(response: httpx.Response, detail: str) -> None:
    """A Hermes server without the route is told apart from an HTML page and foreign JSON."""
    err = failure_for(response, credentials=None, ident=SID, route=ROUTE)
    assert err.code is Code.INCOMPATIBLE
    assert err.detail == detail
