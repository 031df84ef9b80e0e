"""Hostile dashboard responses: typed failures only, never a traceback, never a wrong row.

Bodies derived from the real captures of both backends (tests/support/hostile.py) are served to
`DashboardClient`, to `TaskReader.refresh()` and through the CLI (`show --json` and the
terminal output). Every outcome must be a result or a `HermesError`; the CLI must exit 0 or
with a documented failure status 3-7 (exit 1 is a bug), print one JSON document with
`--json`, print no control character to the terminal, and never show rows from a response
that named another session.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from hermes_task.cli.app import app
from hermes_task.dashboard.client import DashboardClient
from hermes_task.failures import Code, HermesError
from hermes_task.reading.reader import TaskReader
from tests.support import tally
from tests.support.dashboard import Dashboard, serving
from tests.support.hostile import CATEGORIES, FOREIGN_ID, hostile_response
from tests.support.replay import BASE_URL, TOKEN
from tests.support.scripted import Scripted, capture, scenarios

ENV = {"HERMES_DASHBOARD_TOKEN": TOKEN, "NO_COLOR": "1", "COLUMNS": "100", "XDG_CONFIG_HOME": "/nonexistent"}
# Each category is its own test case, so every one gets its share of examples.
CLIENT = settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
)
READER = settings(CLIENT, max_examples=8)
CLI = settings(CLIENT, max_examples=8)
CAPTURES = {name: capture(name) for name in ("official", "iot")}
UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ud800-\udfff]"
)


def _exchange(backend: str, name: str) -> dict[str, Any]:
    return next(e for e in CAPTURES[backend]["exchanges"] if e["name"] == name)


def _client(response: httpx.Response) -> DashboardClient:
    dash = Dashboard()
    dash.answer(response)
    return dash.client()


Endpoint = Callable[[DashboardClient, str, dict[str, Any]], Any]
ENDPOINTS: dict[str, tuple[str, Endpoint]] = {
    "detail": ("detail:c1.tip", lambda c, sid, q: c.detail(sid)),
    "messages": (
        "messages:c1.tip",
        lambda c, sid, q: c.messages(sid, offset=int(q.get("offset", 0)), limit=int(q.get("limit", 50))),
    ),
    "latest_descendant": ("latest-descendant:c1.root", lambda c, sid, q: c.latest_descendant(sid)),
    "around": ("messages-around:rich", lambda c, sid, q: c.around(sid, int(q["row_id"]))),
}


@pytest.mark.parametrize("category", CATEGORIES)
@pytest.mark.parametrize("endpoint", sorted(ENDPOINTS))
@CLIENT
@given(data=st.data())
def test_client_returns_a_model_or_a_typed_failure(endpoint: str, category: str, data: st.DataObject) -> None:
    name, call = ENDPOINTS[endpoint]
    backend = "iot" if endpoint == "around" else data.draw(st.sampled_from(["official", "iot"]))
    exchange = _exchange(backend, name)
    sid = exchange["path"].split("/")[3]
    category, response = hostile_response(data, exchange["body"], category)
    tally.count(f"client.{category}")
    failure: HermesError | None = None
    try:
        result = call(_client(response), sid, exchange.get("query") or {})
    except HermesError as exc:
        failure = exc
    if failure is not None:
        assert failure.exit_status in range(3, 8), failure
        if category == "foreign_identity" and endpoint == "detail":
            assert failure.code is Code.IDENTITY_MISMATCH
        return
    if endpoint == "detail":
        assert result.id == sid
    if endpoint in ("messages", "around"):
        assert result.pagination.returned == len(result.messages)
        assert all(isinstance(m.id, int) and isinstance(m.session_id, str) for m in result.messages)


def _flow_length(backend: str, args: list[str]) -> int:
    probe = Scripted(backend, data=None, corrupt=-1)
    _invoke(probe, [*args, "--json"])
    assert probe.unmatched == 0, probe.served
    return len(probe.served)


def _invoke(script: Scripted, args: list[str]) -> Any:
    with serving(script):
        return CliRunner().invoke(app, [*args, "--url", BASE_URL], env=ENV)


FLOWS = {
    (backend, name): (args, _flow_length(backend, args))
    for backend in ("official", "iot")
    for name, args in scenarios(CAPTURES[backend]["manifest"]).items()
}


@pytest.mark.parametrize("category", CATEGORIES)
@READER
@given(data=st.data())
def test_task_reader_refresh_raises_only_typed_failures(category: str, data: st.DataObject) -> None:
    backend, name = data.draw(
        st.sampled_from(sorted(k for k in FLOWS if FLOWS[k][0][0] == "show" and k[1] != "around"))
    )
    args, length = FLOWS[(backend, name)]
    script = Scripted(backend, data, corrupt=data.draw(st.integers(0, length - 1)), category=category)
    args = args[1:]
    tips = args[2:3] if "--tip" in args else []
    with serving(script):
        reader = TaskReader(DashboardClient(httpx.Client(base_url=BASE_URL)), args[0], tips=tips)
        failure: HermesError | None = None
        try:
            reader.refresh()
            document = reader.document([])
        except HermesError as exc:
            failure = exc
    tally.count(f"reader.{script.used}")
    if failure is not None:
        assert failure.exit_status in range(3, 8), failure
        return
    shown = {(r.session_id, r.id) for r in document.rows}
    assert not shown & (script.tainted - script.legit)
    assert document.task.lineage[0] == args[0]


@pytest.mark.parametrize("category", CATEGORIES)
@pytest.mark.parametrize("json_out", [True, False], ids=["json", "terminal"])
@CLI
@given(data=st.data())
def test_show_exits_with_a_documented_status_and_clean_output(
    json_out: bool, category: str, data: st.DataObject
) -> None:
    backend, name = data.draw(st.sampled_from(sorted(FLOWS)))
    args, length = FLOWS[(backend, name)]
    script = Scripted(backend, data, corrupt=data.draw(st.integers(0, length - 1)), category=category)
    result = _invoke(script, [*args, "--json"] if json_out else args)
    tally.count(f"cli.{script.used}")
    assert result.exit_code in (0, 3, 4, 5, 6, 7), (result.exit_code, result.stderr, script.used)
    assert "Traceback" not in result.stdout + result.stderr
    assert not UNSAFE.search(result.stderr)
    lines = result.stderr.splitlines()
    if result.exit_code != 0:
        assert lines[-2 if lines[-1].startswith("hint: ") else -1].startswith("error: ")
    if json_out:
        assert result.stdout.isascii()
        doc = json.loads(result.stdout)  # exactly one document: trailing data would not parse
        assert doc["kind"] == (
            {"recover": "tasks"}.get(args[0], "transcript") if result.exit_code == 0 else "error"
        )
        shown = {(r["session_id"], r["id"]) for r in doc.get("rows", [])}
        assert not shown & (script.tainted - script.legit), script.used
    else:
        assert not UNSAFE.search(result.stdout.replace("\n", ""))


@pytest.mark.parametrize("foreign", ["other_task", "unknown"])
@pytest.mark.parametrize("kind", ["detail", "messages"])
@pytest.mark.parametrize("backend", ["official", "iot"])
def test_a_response_naming_another_session_never_yields_rows(kind: str, backend: str, foreign: str) -> None:
    args, _length = FLOWS[(backend, "rich")]
    served = Scripted(backend, None, corrupt=-1)
    _invoke(served, [*args, "--json"])
    index = next(
        i
        for i, s in enumerate(served.served)
        if s.split("?")[0].endswith("/messages") == (kind == "messages")
    )
    other = CAPTURES[backend]["manifest"]["other"]["tip"] if foreign == "other_task" else FOREIGN_ID
    script = Scripted(backend, _FixedDraw(other), corrupt=index, category="foreign_identity")
    result = _invoke(script, [*args, "--json"])
    tally.count("cli.foreign_identity")
    doc = json.loads(result.stdout)
    assert doc["rows"] == []
    if kind == "messages" and foreign == "unknown":
        # the page names a session that does not exist: its proof fails at the first read
        assert (result.exit_code, doc["error"]["code"]) == (4, "not_found")
    else:
        assert (result.exit_code, doc["error"]["code"]) == (5, "identity_mismatch")
    assert result.stderr.startswith("error: ")


class _FixedDraw:
    """A stand-in for hypothesis data: every draw is `value` (the foreign session id)."""

    def __init__(self, value: str) -> None:
        self.value = value

    def draw(self, strategy: Any, label: str | None = None) -> Any:
        return self.value


def _messages_index(backend: str, args: list[str]) -> int:
    served = Scripted(backend, None, corrupt=-1)
    _invoke(served, [*args, "--json"])
    return max(i for i, s in enumerate(served.served) if s.split("?")[0].endswith("/messages"))


ROW_FLOWS = {
    (backend, name): (FLOWS[(backend, name)][0], _messages_index(backend, FLOWS[(backend, name)][0]))
    for backend in ("official", "iot")
    for name in ("rich", "running")
}


@pytest.mark.parametrize("json_out", [True, False], ids=["json", "terminal"])
@settings(CLIENT, max_examples=30)
@given(data=st.data())
def test_show_renders_rows_with_hostile_fields_cleanly(json_out: bool, data: st.DataObject) -> None:
    backend, name = data.draw(st.sampled_from(sorted(ROW_FLOWS)))
    args, index = ROW_FLOWS[(backend, name)]
    script = Scripted(backend, data, corrupt=index, category="hostile_rows")
    result = _invoke(script, [*args, "--json", "--reasoning"] if json_out else [*args, "--reasoning"])
    tally.count(f"cli.{script.used}")
    assert result.exit_code in (0, 6), (result.exit_code, result.stderr)
    assert "Traceback" not in result.stdout + result.stderr
    if json_out:
        assert result.stdout.isascii()
        json.loads(result.stdout)
    else:
        assert not UNSAFE.search(result.stdout.replace("\n", ""))


# -- regressions: each of these once ended in exit 1 (an uncaught exception) -----------------


def test_a_body_nested_past_the_parser_limit_is_incompatible() -> None:
    response = httpx.Response(
        200, content=b"[" * 10_000 + b"]" * 10_000, headers={"content-type": "application/json"}
    )
    with pytest.raises(HermesError) as caught:
        _client(response).detail("20261130_170432_fd057c")
    assert caught.value.code is Code.INCOMPATIBLE


def _override(backend: str, name: str, edit: Any) -> Scripted:
    return Scripted(backend, None, corrupt=-1).replace(name, edit)


@pytest.mark.parametrize("backend", ["official", "iot"])
def test_an_int_timestamp_beyond_float_range_is_incompatible_not_a_crash(backend: str) -> None:
    args = FLOWS[(backend, "c1_tip")][0]
    script = _override(backend, "detail:c1.mid", lambda body: body.update(started_at=10**400))
    result = _invoke(script, [*args, "--json"])
    assert result.exit_code == 6, result.stderr
    assert json.loads(result.stdout)["error"]["code"] == "incompatible_response"


@pytest.mark.parametrize("backend", ["official", "iot"])
def test_a_lone_surrogate_is_shown_visibly_on_a_terminal(backend: str) -> None:
    def edit(body: dict[str, Any]) -> None:
        body["messages"][0]["content"] = "before \ud800 after"

    script = _override(backend, "messages:rich", edit)
    result = _invoke(script, FLOWS[(backend, "rich")][0])
    assert result.exit_code == 0, result.stderr
    assert "before <U+D800> after" in result.stdout


@pytest.mark.parametrize("backend", ["official", "iot"])
def test_reasoning_nested_past_the_parser_limit_is_ignored(backend: str) -> None:
    def edit(body: dict[str, Any]) -> None:
        body["messages"][1]["reasoning_details"] = "[" * 10_000 + "]" * 10_000

    script = _override(backend, "messages:rich", edit)
    result = _invoke(script, [*FLOWS[(backend, "rich")][0], "--json"])
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["rows"][1]["reasoning"] is not None  # the other sources remain


@pytest.mark.parametrize("backend", ["official", "iot"])
@pytest.mark.parametrize("bad_id", ["x" * 70_000, "20261130_170432_\ud800"], ids=["huge", "lone_surrogate"])
def test_an_invalid_parent_link_is_incompatible_not_a_crash(backend: str, bad_id: str) -> None:
    args = FLOWS[(backend, "c1_tip")][0]
    script = _override(backend, "detail:c1.tip", lambda body: body.update(parent_session_id=bad_id))
    result = _invoke(script, [*args, "--json"])
    assert result.exit_code == 6, result.stderr
    assert json.loads(result.stdout)["error"]["code"] == "incompatible_response"


@pytest.mark.parametrize("backend", ["official", "iot"])
def test_a_hint_naming_an_invalid_id_is_ignored(backend: str) -> None:
    args = FLOWS[(backend, "c1_hint")][0]
    script = _override(
        backend, "latest-descendant:c1.root", lambda body: body.update(session_id="20261130_170432_\ud800")
    )
    result = _invoke(script, [*args, "--json"])
    assert result.exit_code in (0, 6), result.stderr
    doc = json.loads(result.stdout)
    assert doc["kind"] == "transcript" or doc["error"]["code"] == "incompatible_response"
    if doc["kind"] == "transcript":
        assert doc["task"]["lineage"] == [args[1]]


def test_an_undecodable_command_line_id_is_an_invalid_id() -> None:
    result = CliRunner().invoke(app, ["show", "\udcff", "--json", "--url", BASE_URL], env=ENV)
    assert result.exit_code == 2
    assert json.loads(result.stdout)["error"]["code"] == "invalid_id"
