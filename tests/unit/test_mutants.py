"""Tests that fail when a safeguard is mutated (issue 16 item 11; tools/mutate.py runs them).

Each test pins one check that a reviewer once broke without any test failing: loopback-only
token discovery, the profile check on detail and messages answers, the pagination echo,
the fresh-detail compression re-check, the per-hop direct-parent marker rejection, the read
budget, the `auth_expired` mapping and `--around`'s positive path.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from hermes_task.core.lineage import BoundReached, LineageRejected, check_hop, continues_parent
from hermes_task.core.wire import SessionDetail
from hermes_task.dashboard.auth import TOKEN_HEADER, apply_credentials
from hermes_task.dashboard.client import DashboardClient
from hermes_task.failures import Code, HermesError
from hermes_task.reading.api import DetailReader
from hermes_task.reading.reader import TaskReader, read_around
from hermes_task.settings import resolve
from tests.support.dashboard import Dashboard
from tests.support.wirebody import decoded

SID = "20261130_170935_fc44ff"
NEW = "20261130_171000_0a0a0a"
PARENT = "20261130_160000_ffffff"
PAGE_TOKEN = "discovered-page-token-0123"
RECORD_TOKEN = "host-record-token-4567"


# -- token discovery --------------------------------------------------------------------------


def _record(tmp_path: Path, host: str, port: int) -> dict[str, str]:
    locks = tmp_path / "hermes" / "gateway-locks"
    locks.mkdir(parents=True)
    (locks / "host-serve.json").write_text(json.dumps({"role": "serve", "host": host, "port": port}))
    (locks / "host-serve.token").write_text(RECORD_TOKEN + "\n")
    return {"XDG_STATE_HOME": str(tmp_path), "HOME": str(tmp_path), "XDG_CONFIG_HOME": "/nonexistent"}


def _discover(url: str, env: dict[str, str]) -> tuple[str | None, str | None, list[str]]:
    dash = Dashboard()
    html = f'<script>window.__HERMES_SESSION_TOKEN__ = "{PAGE_TOKEN}";</script>'
    dash.answer(httpx.Response(200, text=html, headers={"content-type": "text/html"}))
    http = dash.http(url)
    source = apply_credentials(http, resolve(env=env, url=url), env)
    return source, http.headers.get(TOKEN_HEADER), dash.paths_asked()


def test_discovery_never_happens_for_a_remote_url(tmp_path: Path) -> None:
    env = _record(tmp_path, "dash.example", 9129)
    source, token, asked = _discover("http://dash.example:9129", env)
    assert (source, token, asked) == (None, None, [])


def test_the_host_record_is_used_for_its_own_loopback_host_and_port(tmp_path: Path) -> None:
    env = _record(tmp_path, "127.0.0.1", 9129)
    source, token, asked = _discover("http://localhost:9129", env)
    assert (source, token, asked) == ("discovery (host record)", RECORD_TOKEN, [])


def test_a_host_record_of_another_port_or_host_falls_back_to_the_page(tmp_path: Path) -> None:
    env = _record(tmp_path, "127.0.0.1", 9129)
    assert _discover("http://127.0.0.1:9130", env)[1] == PAGE_TOKEN
    other = tmp_path / "other"
    env = _record(other, "192.0.2.7", 443)
    assert _discover("https://localhost", env)[:2] == ("discovery (dashboard page)", PAGE_TOKEN)


def test_https_defaults_to_port_443_for_the_host_record(tmp_path: Path) -> None:
    env = _record(tmp_path, "127.0.0.1", 443)
    assert _discover("https://127.0.0.1", env)[1] == RECORD_TOKEN
    assert _discover("http://127.0.0.1", env)[1] == PAGE_TOKEN  # http is port 80, not 443


def test_a_configured_token_beats_discovery(tmp_path: Path) -> None:
    env = {**_record(tmp_path, "127.0.0.1", 9129), "HERMES_DASHBOARD_TOKEN": "configured-token-89"}
    source, token, asked = _discover("http://127.0.0.1:9129", env)
    assert (source, token, asked) == ("env HERMES_DASHBOARD_TOKEN", "configured-token-89", [])


# -- the client's checks ----------------------------------------------------------------------


def _client(body: Any, *, profile: str | None = "work", status: int = 200) -> DashboardClient:
    dash = Dashboard()
    dash.answer(httpx.Response(status, json=body))
    return dash.client(profile=profile, base_url="http://127.0.0.1:9")


def _detail_body(**over: Any) -> dict[str, Any]:
    body = {
        "id": SID,
        "source": "subagent",
        "parent_session_id": PARENT,
        "model_config": json.dumps({"_delegate_from": PARENT}),
        "started_at": 1.0,
        "ended_at": None,
        "end_reason": None,
        "is_default_profile": False,
        "profile": "work",
    }
    body.update(over)
    return body


def _page_body(**pagination: Any) -> dict[str, Any]:
    pag = {"limit": 50, "offset": 0, "order": "latest", "returned": 0, **pagination}
    return {"session_id": SID, "messages": [], "pagination": pag, "profile": "work"}


def test_the_detail_profile_check() -> None:
    assert _client(_detail_body()).detail(SID).profile == "work"
    for body in (_detail_body(profile="other"), {k: v for k, v in _detail_body().items() if k != "profile"}):
        with pytest.raises(HermesError) as info:
            _client(body).detail(SID)
        assert info.value.code is Code.PROFILE_MISMATCH
    assert _client(_detail_body(profile="other"), profile=None).detail(SID).id == SID


def test_the_messages_profile_check_where_the_envelope_names_one() -> None:
    assert _client(_page_body()).messages(SID).session_id == SID
    for profile in ("other", None, 7):
        with pytest.raises(HermesError) as info:
            _client({**_page_body(), "profile": profile}).messages(SID)
        assert info.value.code is (Code.INCOMPATIBLE if profile == 7 else Code.PROFILE_MISMATCH)
    # Envelopes that name no profile (0.18.x, 0.19.x, upstream 0.20: backend.md section 8) are
    # held to it by the checked detail read of the same session, which always comes first.
    missing = {k: v for k, v in _page_body().items() if k != "profile"}
    assert _client(missing).messages(SID).ordered
    legacy = {"session_id": SID, "messages": [], "pagination": {"limit": 50, "offset": 0, "returned": 0}}
    assert not _client(legacy).messages(SID).ordered
    unpaginated = _client({"session_id": SID, "messages": []}).messages(SID)
    assert not unpaginated.paginated


@pytest.mark.parametrize(
    "echo",
    [{"offset": 50}, {"offset": None}, {"limit": 10}, {"limit": None}, {"limit": -1}, {"order": "oldest"}],
)
def test_the_pagination_echo_must_be_the_request(echo: dict[str, Any]) -> None:
    with pytest.raises(HermesError) as info:
        _client(_page_body(**echo)).messages(SID)
    assert info.value.code is Code.INCOMPATIBLE
    assert "pagination" in info.value.detail


def test_returned_must_count_the_rows() -> None:
    with pytest.raises(HermesError) as info:
        _client(_page_body(returned=1)).messages(SID)
    assert info.value.code is Code.INCOMPATIBLE


def test_an_expired_session_is_auth_expired_through_the_client() -> None:
    with pytest.raises(HermesError) as info:
        _client({"error": "session_expired"}, status=401).detail(SID)
    assert info.value.code is Code.AUTH_EXPIRED


def test_a_prefix_answer_is_an_identity_mismatch() -> None:
    with pytest.raises(HermesError) as info:
        _client(_detail_body(id=SID + "0"), profile=None).detail(SID)
    assert info.value.code is Code.IDENTITY_MISMATCH


# -- the lineage's per-hop marker rule --------------------------------------------------------


def _seg(sid: str, parent: str | None, marker: dict[str, str], **over: Any) -> SessionDetail:
    body: dict[str, Any] = {
        "id": sid,
        "source": "subagent",
        "parent_session_id": parent,
        "model_config": json.dumps(marker),
        "started_at": 10.0,
        "ended_at": 20.0,
        "end_reason": "compression",
    }
    body.update(over)
    return decoded(body, SessionDetail)


@pytest.mark.parametrize("marker", ["_delegate_from", "_branched_from", "_reset_from"])
def test_a_marker_naming_the_direct_parent_rejects_the_hop(marker: str) -> None:
    parent = _seg(SID, PARENT, {marker: SID})
    child = _seg(NEW, SID, {marker: SID}, started_at=15.0, ended_at=None, end_reason=None)
    with pytest.raises(LineageRejected) as info:
        check_hop(child, parent, rewrites_source=False)
    assert info.value.reason == "direct_parent_marker"
    assert continues_parent(child, parent, rewrites_source=False) is False
    same = _seg(NEW, SID, {marker: PARENT}, started_at=15.0, ended_at=None, end_reason=None)
    assert check_hop(same, _seg(SID, PARENT, {marker: PARENT}), rewrites_source=False) is None


# -- the reader: read budget and the fresh-detail re-check ------------------------------------


class Store(Dashboard):
    """The in-memory dashboard with this suite's vocabulary: current-backend subagent
    segments of PARENT, each with one goal row whose id is ten times its start."""

    def add(self, sid: str, parent: str, started: float) -> None:
        self.put(
            sid,
            source="subagent",
            parent_session_id=parent,
            model_config=json.dumps({"_delegate_from": PARENT}),
            started_at=started,
            ended_at=None,
            end_reason=None,
            is_default_profile=True,
        )
        self.rows[sid] = [{"id": int(started * 10), "session_id": sid, "role": "user", "content": "go"}]

    @property
    def detail_reads(self) -> int:
        """Detail requests so far."""
        return [kind for kind, _ in self.calls()].count("detail")


def test_the_detail_budget_stops_at_its_bound() -> None:
    store = Store()
    store.add(SID, PARENT, 1.0)
    reader = DetailReader(store.client(), budget=3)
    for _ in range(3):
        reader.fresh(SID)
    with pytest.raises(BoundReached):
        reader.fresh(SID)
    assert store.detail_reads == 3


def test_a_compression_finished_during_the_read_moves_to_the_newer_segment_at_once() -> None:
    store = Store()
    store.add(SID, PARENT, 1.0)

    def rotate() -> None:  # while the newest page is read, the segment is compressed
        store.details[SID].update(end_reason="compression", ended_at=2.0)
        store.add(NEW, SID, 1.5)
        store.descendants[SID] = NEW

    store.after[("messages", SID)] = rotate
    reader = TaskReader(store.client(), SID)
    snap = reader.refresh()
    assert snap.failure is None
    assert reader.path == (SID, NEW)
    assert reader.tip is not None
    assert reader.tip.id == NEW
    assert [w.code for w in snap.warnings] == []


def test_around_returns_the_window_that_starts_at_the_row() -> None:
    store = Store()
    store.add(SID, PARENT, 1.0)
    store.rows[SID] += [
        {"id": 11 + i, "session_id": SID, "role": "assistant", "content": f"r{i}"} for i in range(3)
    ]
    reader = TaskReader(store.client(), SID)
    snap = reader.refresh()
    out = read_around(reader, [12], snap)
    assert [key[1] for key in reader.window.keys] == [12, 13]
    assert out.new_keys == ((SID, 12), (SID, 13))
    with pytest.raises(HermesError) as info:
        read_around(reader, [99], snap)
    assert info.value.code is Code.NOT_FOUND


# -- ids --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "rule"),
    [
        ("", "is empty"),
        (".", "may not be"),
        ("..", "may not be"),
        (" x", "whitespace"),
        ("x\t", "whitespace"),
        ("a\x1bb", "control"),
        ("a\u202eb", "control"),
        ("x" * 513, "longer than 512"),
        ("\U0001f600" * 257, "longer than 512"),
    ],
)
def test_every_id_rule_refuses_its_case(value: str, rule: str) -> None:
    from hermes_task.core.sanitize import check_id, is_valid_id

    with pytest.raises(HermesError) as info:
        check_id(value, what="CHILD_ID")
    assert info.value.code is Code.INVALID_ID
    assert rule in info.value.detail
    assert info.value.detail.startswith("CHILD_ID ")
    assert is_valid_id(value) is False


@pytest.mark.parametrize("value", [SID, "x" * 512, "\U0001f600" * 256, "a.b", "...", "ü"])
def test_ids_at_the_edges_are_accepted_unchanged(value: str) -> None:
    from hermes_task.core.sanitize import check_id, is_valid_id, path_segment

    assert check_id(value) == value
    assert is_valid_id(value) is True
    assert path_segment(check_id("a/b?c")) == "a%2Fb%3Fc"
    assert is_valid_id(3) is False


def test_a_read_budget_spent_inside_a_refresh_is_bound_reached_not_a_crash() -> None:
    store = Store()
    store.add(SID, PARENT, 1.0)
    reader = TaskReader(store.client(), SID)
    reader.detail_budget = 1  # the anchor's read spends it: the fresh re-read cannot happen
    snap = reader.refresh()
    assert snap.failure is None
    assert [w.code for w in snap.warnings] == ["bound_reached"]
    assert reader.tip is not None
    assert reader.tip.id == SID
    assert [key[1] for key in reader.window.keys] == [10]


# -- killers of tools/mutate.py survivors in dashboard/auth.py ---------------------------------


def test_an_unreadable_or_empty_token_file_is_auth_missing(tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": "/nonexistent", "HOME": str(tmp_path)}
    dash = Dashboard()
    dash.answer(httpx.Response(500))
    http = dash.http("http://127.0.0.1:9")
    empty = tmp_path / "empty.token"
    empty.write_text("  \n")
    for path, words in (
        (tmp_path / "missing.token", "cannot read the token file"),
        (empty, "the token file is empty"),
    ):
        settings = resolve(env=env, url="http://127.0.0.1:9", token_file=str(path))
        with pytest.raises(HermesError) as info:
            apply_credentials(http, settings, env)
        assert info.value.code is Code.AUTH_MISSING
        assert words in info.value.detail
    good = tmp_path / "good.token"
    good.write_text(" a-token-from-file \n")
    assert apply_credentials(http, resolve(env=env, url="http://127.0.0.1:9", token_file=str(good)), env) == (
        "flag --token-file"
    )
    assert http.headers[TOKEN_HEADER] == "a-token-from-file"


def test_the_host_record_lives_under_xdg_state_home_before_home(tmp_path: Path) -> None:
    env = _record(tmp_path / "state", "127.0.0.1", 9129)
    env["HOME"] = str(tmp_path / "home")  # no record there
    env["XDG_STATE_HOME"] = str(tmp_path / "state")
    assert _discover("http://127.0.0.1:9129", env)[1] == RECORD_TOKEN


def test_a_host_record_without_a_host_or_naming_another_name_is_not_used(tmp_path: Path) -> None:
    env = _record(tmp_path, "127.0.0.1", 9129)
    record = tmp_path / "hermes" / "gateway-locks" / "host-serve.json"
    record.write_text(json.dumps({"role": "serve", "port": 9129}))
    assert _discover("http://127.0.0.1:9129", env)[1] == PAGE_TOKEN
    record.write_text(json.dumps({"role": "serve", "host": "otherhost", "port": 9129}))
    assert _discover("http://localhost:9129", env)[1] == PAGE_TOKEN


def test_a_token_on_a_page_that_is_not_200_is_never_used(tmp_path: Path) -> None:
    env = {"XDG_STATE_HOME": str(tmp_path), "HOME": str(tmp_path), "XDG_CONFIG_HOME": "/nonexistent"}

    dash = Dashboard()
    html = f'<script>window.__HERMES_SESSION_TOKEN__ = "{PAGE_TOKEN}";</script>'
    dash.answer(httpx.Response(404, text=html, headers={"content-type": "text/html"}))
    http = dash.http("http://127.0.0.1:9129")
    assert apply_credentials(http, resolve(env=env, url="http://127.0.0.1:9129"), env) is None
    assert TOKEN_HEADER not in http.headers


def _login_client() -> tuple[httpx.Client, list[dict[str, Any]]]:
    dash = Dashboard(serves=frozenset({"login"}))
    return dash.http("http://127.0.0.1:9"), dash.logins


def test_a_username_logs_in_with_the_password_file_or_the_env_password(tmp_path: Path) -> None:
    base = {"XDG_CONFIG_HOME": "/nonexistent", "HOME": str(tmp_path), "HERMES_DASHBOARD_TOKEN": "ignored-tok"}
    secret = tmp_path / "pw"
    secret.write_text("pw-from-file\n")
    http, posts = _login_client()
    settings = resolve(env=base, url="http://127.0.0.1:9", username="admin", password_file=str(secret))
    assert apply_credentials(http, settings, base) == "password login (flag --password-file)"
    assert [(p["username"], p["password"]) for p in posts] == [("admin", "pw-from-file")]
    assert TOKEN_HEADER not in http.headers  # a gated dashboard refuses the session token
    env = {**base, "HERMES_DASHBOARD_PASSWORD": "pw-from-env"}
    http, posts = _login_client()
    settings = resolve(env=env, url="http://127.0.0.1:9", username="admin")
    assert apply_credentials(http, settings, env) == "password login (env HERMES_DASHBOARD_PASSWORD)"
    assert [p["password"] for p in posts] == ["pw-from-env"]
    http, posts = _login_client()
    with pytest.raises(HermesError) as info:
        apply_credentials(http, resolve(env=base, url="http://127.0.0.1:9", username="admin"), base)
    assert info.value.code is Code.AUTH_MISSING
    assert "--username needs" in info.value.detail
    assert posts == []


def test_without_xdg_state_home_the_host_record_is_under_home(tmp_path: Path) -> None:
    env = _record(tmp_path / "home" / ".local" / "state", "127.0.0.1", 9129)
    env.pop("XDG_STATE_HOME")
    env["HOME"] = str(tmp_path / "home")
    assert _discover("http://127.0.0.1:9129", env)[1] == RECORD_TOKEN


@pytest.mark.parametrize("bad", ["", "..", "a\x1bb", "x" * 600])
def test_an_invalid_id_named_by_the_dashboard_is_never_requested(bad: str) -> None:
    dash = Dashboard()
    dash.answer(httpx.Response(200, json=_detail_body()))
    client = dash.client(base_url="http://127.0.0.1:9")
    for call in (client.detail, client.latest_descendant, client.messages):
        with pytest.raises(HermesError) as info:
            call(bad)
        assert info.value.code is Code.INCOMPATIBLE
    assert dash.paths_asked() == []


@pytest.mark.parametrize("body", [{"id": SID}, {**_detail_body(), "started_at": "yesterday"}, [], "x"])
def test_a_malformed_detail_is_incompatible(body: Any) -> None:
    with pytest.raises(HermesError) as info:
        _client(body, profile=None).detail(SID)
    assert info.value.code is Code.INCOMPATIBLE
    assert info.value.detail == "detail: missing or mistyped fields"


@pytest.mark.parametrize(
    ("route", "body"),
    [
        ("messages", {"session_id": SID, "pagination": {"limit": 50, "offset": 0, "returned": 0}}),
        ("messages", {"session_id": SID, "messages": "rows", "pagination": {}}),
        ("latest-descendant", {"changed": True}),
        ("around", {"session_id": SID, "messages": None}),
    ],
)
def test_a_malformed_body_of_any_route_is_incompatible(route: str, body: dict[str, Any]) -> None:
    client = _client(body, profile=None)
    call: Callable[[], object] = {
        "messages": lambda: client.messages(SID),
        "latest-descendant": lambda: client.latest_descendant(SID),
        "around": lambda: client.around(SID, 1),
    }[route]
    with pytest.raises(HermesError) as info:
        call()
    assert info.value.code is Code.INCOMPATIBLE
    assert info.value.detail == f"{route}: missing or mistyped fields"


def test_the_messages_query_is_exactly_the_contracts() -> None:
    dash = Dashboard()
    dash.answer(httpx.Response(200, json=_page_body()))
    dash.client(profile="work", base_url="http://127.0.0.1:9").messages(SID)
    assert [str(r.url.query, "ascii") for r in dash.requests] == [
        "limit=50&offset=0&order=latest&inline_images=false&include_compacted=true&profile=work"
    ]


def _around_body(**pagination: Any) -> dict[str, Any]:
    row = {"id": 7, "session_id": SID, "role": "user", "content": "go"}
    pag = {"limit": 120, "offset": 3, "returned": 1, **pagination}
    return {"session_id": SID, "messages": [row], "pagination": pag, "profile": "work"}


@pytest.mark.parametrize("pagination", [{"offset": None}, {"returned": 2}, {"returned": 0}])
def test_an_around_page_must_say_where_it_starts_and_count_its_rows(pagination: dict[str, Any]) -> None:
    assert _client(_around_body()).around(SID, 7).pagination.offset == 3
    with pytest.raises(HermesError) as info:
        _client(_around_body(**pagination)).around(SID, 7)
    assert info.value.code is Code.INCOMPATIBLE
    assert info.value.detail == "around: pagination does not match the rows"


def test_the_around_profile_check() -> None:
    other = {**_around_body(), "profile": "other"}
    with pytest.raises(HermesError) as info:
        _client(other).around(SID, 7)
    assert info.value.code is Code.PROFILE_MISMATCH
    assert _client(other, profile=None).around(SID, 7).session_id == SID  # no --profile: no check
    unstamped = {k: v for k, v in _around_body().items() if k != "profile"}
    assert _client(unstamped).around(SID, 7).session_id == SID


@pytest.mark.parametrize(
    ("status", "body", "code"),
    [
        (405, {"detail": "Method Not Allowed"}, Code.UNSUPPORTED),
        (404, {"detail": "Not Found"}, Code.UNSUPPORTED),  # a Hermes server without the route
        (404, {"detail": "Session not found"}, Code.NOT_FOUND),
        (500, {}, Code.SERVER_ERROR),
        (403, {}, Code.AUTH_REJECTED),
    ],
)
def test_only_a_missing_around_route_is_unsupported(status: int, body: dict[str, Any], code: Code) -> None:
    with pytest.raises(HermesError) as info:
        _client(body, status=status).around(SID, 7)
    assert info.value.code is code
