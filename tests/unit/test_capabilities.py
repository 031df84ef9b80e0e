"""Capabilities learned from answers (core/capabilities.py): the pre-pagination envelope,
the source-rewrite exception keyed on ancestor merging, missing routes and the auth hint."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from hermes_task.core.capabilities import Capabilities
from hermes_task.core.wire import MessagesPage
from hermes_task.dashboard.client import DashboardClient
from hermes_task.failures import TABLE, Code, ExitStatus, HermesError
from hermes_task.reading.reader import TaskReader, read_around
from tests.support.dashboard import Dashboard
from tests.support.wirebody import decoded
from tests.unit.test_paging import CHILD, TIP, Transcripts

UNPAGINATED = (
    "legacy backend (hermes-agent 0.18.x or older): no paging, `order` or archived rows over "
    "HTTP; every active row is read in one answer"
)


def test_the_pre_pagination_envelope_is_one_page_at_the_start() -> None:
    fake = Transcripts(legacy=True, paginated=False).add(CHILD, 241)
    reader = TaskReader(fake.client(), CHILD)
    snap = reader.refresh()
    assert [k[1] for k in reader.window.keys] == fake.ids()
    assert reader.window.at_start
    assert [(w.code, w.message) for w in snap.warnings] == [("legacy_backend", UNPAGINATED)]
    assert reader.read_older() is None  # nothing older
    fake.append(CHILD, 7)
    again = reader.refresh()
    assert len(again.new_keys) == 7  # diffed by row identity
    assert "gap" not in [w.code for w in again.warnings]
    assert [k[1] for k in reader.window.keys] == fake.ids()
    doc = reader.document(again.warnings)
    assert doc.backend.contract == "legacy"
    assert (doc.backend.capabilities.pagination, doc.backend.capabilities.order) == (False, False)
    assert doc.coverage.at_start
    assert not doc.coverage.has_older
    assert doc.rows[0].text == "the goal"


def test_the_paginated_envelopes_are_learned_apart() -> None:
    caps = Capabilities()
    assert caps.info().capabilities.pagination is None
    legacy: dict[str, Any] = {
        "session_id": CHILD,
        "messages": [],
        "pagination": {"limit": 1, "offset": 0, "returned": 0},
    }
    caps.learn(decoded(legacy, MessagesPage))
    assert (caps.pagination, caps.order, caps.info().contract) == (True, False, "legacy")
    ordered: dict[str, Any] = {**legacy, "pagination": {**legacy["pagination"], "order": "latest"}}
    caps.learn(decoded(ordered, MessagesPage))
    assert (caps.pagination, caps.order, caps.info().contract) == (True, True, "current")
    assert caps.ancestors_merged is None
    assert caps.source_rewrite is None
    row: dict[str, Any] = {"id": 1, "session_id": TIP, "role": "user", "content": "x"}
    caps.learn(decoded({**ordered, "messages": [row]}, MessagesPage))
    assert caps.ancestors_merged is True
    assert caps.source_rewrite is False


def _tool_chain(*, merged: bool) -> Transcripts:
    fake = Transcripts(legacy=False)
    fake.add(CHILD, 4, source="tool", end_reason="compression", ended_at=2.0)
    fake.add(TIP, 3, parent=CHILD, started_at=2.0, end_reason="agent_close", ended_at=3.0)
    if merged:  # the tip's pages start with its ancestor's rows (the iot fork)
        fake.rows[TIP] = fake.rows[CHILD][:1] + fake.rows[TIP]
    return fake


@pytest.mark.parametrize("merged", [False, True])
def test_tool_to_subagent_is_accepted_only_where_rotation_rewrites_the_source(merged: bool) -> None:
    """No answer showed yet how this backend rotates: the hop is proven under the rewrite
    rule without reading a row of the unproven TIP (the old code read one, oldest first,
    mid-proof), and the adopted TIP's first page decides it before any row is merged."""
    fake = _tool_chain(merged=merged)
    fake.details[TIP]["source"] = "subagent"
    reader = TaskReader(fake.client(), CHILD, tips=[TIP])
    snap = reader.refresh()
    assert [(sid, p) for kind, sid, p in fake.log if kind == "messages" and p.get("order") == "oldest"] == []
    first_tip_read = next(i for i, (kind, sid, _) in enumerate(fake.log) if sid == TIP and kind == "messages")
    assert all(kind == "detail" for kind, _, _ in fake.log[:first_tip_read] if kind != "latest-descendant")
    if merged:  # a page carrying its ancestor's rows: this backend copies the source
        assert snap.failure is not None
        assert snap.failure.code is Code.LINEAGE_REJECTED
        assert "source_changed" in str(snap.failure.detail)
        assert reader.path == (CHILD,)
        assert reader.candidate.status == "rejected"
        assert {r.session_id for r in reader.rows()} == {CHILD}
        doc = reader.document(snap.warnings)
        assert doc.task.notes == []
        assert doc.backend.capabilities.source_rewrite is False
    else:
        assert snap.failure is None
        assert reader.path == (CHILD, TIP)
        doc = reader.document(snap.warnings)
        assert doc.task.notes == ["legacy_source_rewrite"]
        assert doc.backend.capabilities.source_rewrite is True
        assert doc.backend.capabilities.ancestors_merged is False


@pytest.mark.parametrize("merged", [False, True])
def test_where_the_newest_page_cannot_show_the_rule_one_row_of_the_adopted_segment_does(merged: bool) -> None:
    """A long tip's newest page starts after its first row, so it cannot show whether the
    backend merges: one oldest-first row of TIP decides, read only after TIP was adopted
    (every detail of the proof read before it) and before any of its rows is merged."""
    fake = _tool_chain(merged=merged)
    fake.details[TIP]["source"] = "subagent"
    fake.append(TIP, 80)
    reader = TaskReader(fake.client(), CHILD, tips=[TIP])
    snap = reader.refresh()
    log = [(kind, sid, p.get("order"), p.get("limit")) for kind, sid, p in fake.log]
    probe = log.index(("messages", TIP, "oldest", "1"))
    assert probe > log.index(("messages", TIP, "latest", "50"))
    assert all(kind != "messages" for kind, *_ in log[: log.index(("messages", TIP, "latest", "50"))])
    doc = reader.document(snap.warnings)
    if merged:
        assert snap.failure is not None
        assert "source_changed" in str(snap.failure.detail)
        assert reader.path == (CHILD,)
        assert {r.session_id for r in doc.rows} == {CHILD}
    else:
        assert (snap.failure, reader.path) == (None, (CHILD, TIP))
        assert doc.task.notes == ["legacy_source_rewrite"]
        assert doc.backend.capabilities.source_rewrite is True


def test_an_unchanged_source_needs_no_probe() -> None:
    fake = _tool_chain(merged=False)
    fake.details[TIP]["source"] = "tool"
    reader = TaskReader(fake.client(), CHILD, tips=[TIP])
    assert reader.refresh().failure is None
    assert reader.path == (CHILD, TIP)
    assert [sid for kind, sid, p in fake.log if kind == "messages" and p.get("limit") == "1"] == []


def test_any_other_source_change_is_still_rejected() -> None:
    fake = _tool_chain(merged=False)
    fake.details[TIP]["source"] = "tui"
    snap = TaskReader(fake.client(), CHILD, tips=[TIP]).refresh()
    assert snap.failure is not None
    assert snap.failure.code is Code.LINEAGE_REJECTED
    assert "source_changed" in snap.failure.detail


def _client(code: int, body: object) -> DashboardClient:
    dash = Dashboard()
    dash.answer(httpx.Response(code, json=body))
    return dash.client(base_url="http://127.0.0.1:9")


HERMES_MISSING_ROUTE = [
    {"detail": "No such API endpoint: /api/sessions/x/messages"},
    {"error": "Frontend not built. Run: cd web && npm run build"},
    {"error": "Headless backend (hermes serve): web UI disabled"},
    {"detail": "Not Found"},
]
OPTIONAL: list[Callable[[DashboardClient], object]] = [
    lambda c: c.around(CHILD, 5),
    lambda c: c.latest_descendant(CHILD),
]


@pytest.mark.parametrize("body", [*HERMES_MISSING_ROUTE, {}, {"message": "nope"}])
def test_a_404_that_is_not_hermes_not_found_on_an_optional_route_is_unsupported(body: object) -> None:
    for call in OPTIONAL:
        with pytest.raises(HermesError) as info:
            call(_client(404, body))
        assert info.value.code is Code.UNSUPPORTED
        assert info.value.exit_status is ExitStatus.INCOMPATIBLE
        assert "route" in info.value.message


@pytest.mark.parametrize("body", HERMES_MISSING_ROUTE)
def test_a_missing_messages_route_is_a_backend_too_old(body: object) -> None:
    with pytest.raises(HermesError) as info:
        _client(404, body).messages(CHILD)
    assert info.value.code is Code.INCOMPATIBLE
    assert info.value.detail.startswith("backend too old (needs hermes-agent ≥ 0.13.0): it has no route")
    assert f"/api/sessions/{CHILD}/messages" in info.value.detail
    with pytest.raises(HermesError) as info:  # a missing detail route: not a Hermes dashboard
        _client(404, body).detail(CHILD)
    assert info.value.code is Code.INCOMPATIBLE
    assert info.value.message.startswith("does not look like a Hermes dashboard")


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"detail": "Session not found"}, Code.NOT_FOUND),
        ({"detail": "Profile 'nosuch' does not exist."}, Code.PROFILE_NOT_FOUND),
    ],
)
def test_hermes_own_not_found_answers_stay_not_found(body: object, code: Code) -> None:
    calls: list[Callable[[DashboardClient], object]] = [
        lambda c: c.detail(CHILD),
        lambda c: c.messages(CHILD),
        *OPTIONAL,
    ]
    for call in calls:
        with pytest.raises(HermesError) as info:
            call(_client(404, body))
        assert info.value.code is code


@pytest.mark.parametrize("present", [False, True])
def test_around_learns_whether_the_route_exists(present: bool) -> None:
    fake = Transcripts(legacy=False).add(CHILD, 5)

    fake.around = present  # absent: Hermes's missing-route 404
    reader = TaskReader(fake.client(), CHILD)
    snap = reader.refresh()
    assert reader.caps.around is None
    if present:
        around = read_around(reader, [fake.ids()[0]], snap)
        assert len(around.new_keys) == 5
        assert reader.caps.around is True
        return
    with pytest.raises(HermesError) as info:
        read_around(reader, [fake.ids()[0]], snap)
    assert info.value.code is Code.UNSUPPORTED  # never "session not found"
    assert info.value.message.endswith("this dashboard has no /messages/around route")
    assert reader.caps.around is False
    assert reader.document(snap.warnings).backend.capabilities.around is False


def test_auth_missing_hint_names_every_way_to_give_a_token() -> None:
    hint = TABLE[Code.AUTH_MISSING].hint
    assert hint is not None
    for name in ("HERMES_DASHBOARD_TOKEN", "--token-file", "HERMES_DASHBOARD_SESSION_TOKEN"):
        assert name in hint
