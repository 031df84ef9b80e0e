"""Prove the backend harness against both real Hermes backends with plain HTTP (httpx).

These tests check the seeded scenarios and the harness's own promises (token and gated auth,
mutation helpers, clean shutdown), and pin the contract differences that shared/backend.md
documents, so that a change in either backend package shows up here first.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.support import harness
from tests.support.backends import BACKEND_NAMES
from tests.support.harness import server as harness_server

pytestmark = pytest.mark.integration

PAGE = {"limit": 50, "offset": 0, "order": "latest", "inline_images": "false", "include_compacted": "true"}


def _client(server: harness.Backend) -> httpx.Client:
    return httpx.Client(base_url=server.url, timeout=10.0, trust_env=False)


def _get(
    server: harness.Backend, path: str, *, token: str | None = "default", **params: Any
) -> httpx.Response:
    headers: dict[str, str] = {}
    if token == "default":
        token = server.token
    if token is not None:
        headers["X-Hermes-Session-Token"] = token
    with _client(server) as client:
        return client.get(path, params=params or None, headers=headers)


def _detail(server: harness.Backend, sid: str) -> dict[str, Any]:
    resp = _get(server, f"/api/sessions/{sid}")
    assert resp.status_code == 200, resp.text
    body: dict[str, Any] = resp.json()
    return body


def _messages(server: harness.Backend, sid: str, **params: Any) -> dict[str, Any]:
    resp = _get(server, f"/api/sessions/{sid}/messages", **{**PAGE, **params})
    assert resp.status_code == 200, resp.text
    body: dict[str, Any] = resp.json()
    return body


# --------------------------------------------------------------------------- token mode


def test_status_is_public_and_reports_the_version(backend: Any) -> None:
    resp = _get(backend, "/api/status", token=None)
    assert resp.status_code == 200
    body = resp.json()
    assert body["version"] == backend.features.status_version  # axisrow reports upstream's 0.20.1
    assert body["auth_required"] is False
    assert backend.url.startswith("http://127.0.0.1:")


def test_detail_needs_the_session_token(backend: Any) -> None:
    tip = backend.manifest["c1"]["tip"]
    assert _get(backend, f"/api/sessions/{tip}").status_code == 200
    for token in (None, "wrong-" + secrets.token_hex(4)):
        resp = _get(backend, f"/api/sessions/{tip}", token=token)
        assert resp.status_code == 401
        assert resp.json() == {"detail": "Unauthorized"}


def test_token_file_is_private(backend: Any) -> None:
    assert backend.token_file.read_text().strip() == backend.token
    assert (backend.token_file.stat().st_mode & 0o777) == 0o600


def test_c1_rotation_lineage_and_delegation_marker(backend: Any) -> None:
    m = backend.manifest
    root, mid, tip = (_detail(backend, m["c1"][k]) for k in ("root", "mid", "tip"))
    assert tip["parent_session_id"] == m["c1"]["mid"]
    assert mid["parent_session_id"] == m["c1"]["root"]
    assert root["parent_session_id"] == m["parent"]
    assert mid["end_reason"] == "compression"
    assert root["end_reason"] == "compression"
    assert tip["end_reason"] == "agent_close"
    for seg in (root, mid, tip):
        assert isinstance(seg["model_config"], str)  # a JSON string in both versions
        assert json.loads(seg["model_config"])["_delegate_from"] == m["parent"]
        assert seg["source"] == "subagent"


def test_tool_source_child_and_rotation_source(backend: Any) -> None:
    m = backend.manifest
    root, tip = _detail(backend, m["c2"]["root"]), _detail(backend, m["c2"]["tip"])
    assert root["source"] == "tool"
    assert tip["parent_session_id"] == m["c2"]["root"]
    assert json.loads(tip["model_config"])["_delegate_from"] == m["parent"]
    # backend.md sections 4 and 8: official and upstream rotate with agent.platform, iot
    # copies the parent's source.
    assert tip["source"] == ("subagent" if backend.features.rewrites_source else "tool")


def test_messages_envelope_differs_per_backend(backend: Any) -> None:
    body = _messages(backend, backend.manifest["c1"]["tip"])
    f = backend.features
    if not f.pagination:
        assert set(body) == {"session_id", "messages"}
    elif not f.order:
        assert set(body) == {"session_id", "messages", "pagination"}
        assert set(body["pagination"]) == {"limit", "offset", "returned"}
    else:
        assert set(body) == {"session_id", "messages", "pagination"} | (
            {"profile"} if f.profile_in_envelope else set()
        )
        assert set(body["pagination"]) == {"limit", "offset", "order", "returned"}
        assert body["pagination"]["order"] == "latest"
    assert body["session_id"] == backend.manifest["c1"]["tip"]


def test_archived_rows_visible_only_where_include_compacted_is_honoured(backend: Any) -> None:
    c2 = backend.manifest["c2"]
    assert c2["archived_rows"] > 0
    with_archived = _messages(backend, c2["root"], include_compacted="true")["messages"]
    without = _messages(backend, c2["root"], include_compacted="false")["messages"]
    archived = [r for r in with_archived if r["active"] == 0 and r["compacted"] == 1]
    assert not [r for r in without if r["active"] == 0]
    if backend.features.order:  # order and include_compacted come together (backend.md section 8)
        assert 0 < len(archived) <= c2["archived_rows"]
        assert len(with_archived) > len(without)
    else:
        assert archived == []
        assert [r["id"] for r in with_archived] == [r["id"] for r in without]


def test_long_child_has_241_rows_and_paging_differs(backend: Any) -> None:
    long = backend.manifest["long"]
    assert long["rows"] == 241
    assert _detail(backend, long["id"])["message_count"] == 241
    everything = _messages(backend, long["id"], limit=500, order="oldest")["messages"]
    assert len(everything) == 241
    assert everything[0]["content"] == long["goal"]
    first_page = _messages(backend, long["id"])["messages"]
    if not backend.features.pagination:  # every parameter ignored: the whole transcript
        assert first_page == everything
        return
    assert len(first_page) == 50
    if not backend.features.order:  # order=latest is ignored: offset 0 is the oldest page
        assert first_page[0]["id"] == everything[0]["id"]
    else:  # the newest page, chronological inside the page
        assert first_page[-1]["id"] == everything[-1]["id"]


def test_unknown_id_is_404(backend: Any) -> None:
    resp = _get(backend, "/api/sessions/20000101_000000_000000")
    assert resp.status_code == 404
    assert resp.json() == {"detail": "Session not found"}


def test_parent_transcript_matches_expected_tasks(backend: Any) -> None:
    m = backend.manifest
    rows = _messages(backend, m["parent"], limit=500, order="oldest")["messages"]
    calls = {}
    for row in rows:
        for call in row.get("tool_calls") or []:
            calls[call["id"]] = json.loads(call["function"]["arguments"])
    results = {row["tool_call_id"]: row["content"] for row in rows if row["role"] == "tool"}
    assert len(m["expected_tasks"]) >= 5  # the seeded parent's tasks: the loop checks something
    for task in m["expected_tasks"]:
        args = calls[task["call_id"]]
        goals = [t["goal"] for t in args.get("tasks", [])] or [args.get("goal")]
        assert goals[task["task_index"]] == task["goal"]
        result = json.loads(results[task["call_id"]])
        if task["delegation_id"]:
            assert result["delegation_id"] == task["delegation_id"]
            assert result.get("subagent_ids", [None] * 2)[task["task_index"]] == task["subagent_id"]
        else:
            assert result["results"][task["task_index"]]["status"] == task["status"]
    completion = [
        r for r in rows if r["role"] == "user" and "ASYNC DELEGATION BATCH COMPLETE" in str(r["content"])
    ]
    assert len(completion) == 1
    if backend.features.stored_display_kind:
        assert completion[0]["display_kind"] == "async_delegation_complete"
        assert completion[0]["display_metadata"]["task_count"] == 2


def test_rich_rows_keep_hostile_text_and_projections(backend: Any) -> None:
    rich = backend.manifest["rich"]
    rows = {r["id"]: r for r in _messages(backend, rich["id"], limit=500, order="oldest")["messages"]}
    ids = rich["row_ids"]
    assert rows[ids["hostile"]]["content"] == rich["hostile_text"]  # the server does not sanitise
    assert isinstance(rows[ids["reasoning"]]["reasoning_details"], str)  # a JSON string
    image = _messages(backend, rich["id"], limit=500, order="oldest", inline_images="false")["messages"]
    image_row = next(r for r in image if r["id"] == ids["image"])
    commentary = rows[ids["commentary"]]
    if backend.features.inline_images:
        assert image_row["content"] == "what is in this picture?\n[image]"
    else:
        assert isinstance(image_row["content"], list)
    if backend.features.projections:
        assert commentary["display_commentary"] == ["Opening the image now."]
        assert rows[ids["hidden"]]["display_kind"] == "hidden"
        assert rows[ids["steer"]]["display_kind"] == "steer"
    else:
        assert "display_commentary" not in commentary


# --------------------------------------------------------------------------- mutation + shutdown


@pytest.mark.parametrize("name", BACKEND_NAMES)
def test_append_rows_end_session_and_clean_stop(
    name: str, seeded_home: Callable[[str, Path], Path], tmp_path: Path
) -> None:
    home = seeded_home(name, tmp_path / "home")
    with harness.start(name, home, secrets.token_urlsafe(16)) as server:
        assert server.manifest is not None
        running = server.manifest["running"]
        before = _detail(server, running["id"])
        assert before["end_reason"] is None
        assert server.append_rows(running["id"], 3) == running["rows"] + 3
        rows = _messages(server, running["id"], limit=500, order="oldest")["messages"]
        assert len(rows) == running["rows"] + 3
        assert [r["role"] for r in rows[-3:]] == ["assistant", "tool", "assistant"]
        assert server.end_session(running["id"])["end_reason"] == "agent_close"
        after = _detail(server, running["id"])
        assert after["end_reason"] == "agent_close"
        assert after["message_count"] == running["rows"] + 3
        pid, url = server.pid, server.url
    assert not server.alive()
    with pytest.raises(ProcessLookupError):
        os.killpg(pid, 0)  # the whole process group is gone
    with pytest.raises(httpx.TransportError):
        httpx.get(url + "/api/status", timeout=2.0, trust_env=False)
    assert pid not in harness.live_pids()


def test_startup_timeout_stops_the_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No ready line before the deadline: HarnessError naming the log, and the group is stopped."""
    monkeypatch.setattr(harness_server, "READY_RE", re.compile(rb"NEVER_PRINTED port=(\\d+)"))
    monkeypatch.setattr(harness_server, "START_TIMEOUT", 2.5)
    with pytest.raises(harness.HarnessError) as err:
        harness.start(BACKEND_NAMES[0], tmp_path / "home", "tok")
    assert "no ready line" in str(err.value)
    assert str(tmp_path / "home" / "server.log") in str(err.value)
    # Session servers may be starting in the background meanwhile: look for this one only.
    assert [pid for pid in harness.live_pids() if _cwd(pid) == (tmp_path / "home").resolve()] == []


def _cwd(pid: int) -> Path | None:
    try:
        return Path(os.readlink(f"/proc/{pid}/cwd"))
    except OSError:
        return None


def test_early_exit_is_reported_with_the_log_tail(tmp_path: Path) -> None:
    """A server process that dies before its ready line: exit code and log tail in the error."""
    log = tmp_path / "server.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-c", "print('Application startup failed. Exiting.'); exit(3)"],
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    with pytest.raises(harness.HarnessError) as err:
        harness_server._wait_ready(proc, log, time.monotonic() + 10)
    assert "exited with code 3" in str(err.value)
    assert "Application startup failed. Exiting." in str(err.value)


# --------------------------------------------------------------------------- gated mode


def test_gated_status_and_no_cookie(gated_backend: Any) -> None:
    status = _get(gated_backend, "/api/status", token=None).json()
    assert status["auth_required"] is True
    assert "basic" in status["auth_providers"]
    tip = gated_backend.manifest["c1"]["tip"]
    for token in (None, gated_backend.token):  # the legacy token is refused in gated mode
        resp = _get(gated_backend, f"/api/sessions/{tip}", token=token)
        assert resp.status_code == 401
        assert resp.json()["reason"] == "no_cookie"
    assert (gated_backend.password_file.stat().st_mode & 0o777) == 0o600
    assert gated_backend.password_file.read_text().strip() == gated_backend.password


def test_gated_password_login(gated_backend: Any) -> None:
    tip = gated_backend.manifest["c1"]["tip"]
    with _client(gated_backend) as client:
        bad = client.post(
            "/auth/password-login",
            json={
                "provider": "basic",
                "username": gated_backend.username,
                "password": "not-the-password",
                "next": "",
            },
        )
        assert bad.status_code == 401
        ok = client.post(
            "/auth/password-login",
            json={
                "provider": "basic",
                "username": gated_backend.username,
                "password": gated_backend.password,
                "next": "",
            },
        )
        assert ok.status_code == 200, ok.text
        assert ok.json()["ok"] is True
        assert "hermes_session_at" in client.cookies
        detail = client.get(f"/api/sessions/{tip}")
        assert detail.status_code == 200
        assert detail.json()["parent_session_id"] == gated_backend.manifest["c1"]["mid"]
    # The harness helper logs in with urllib and a cookie jar.
    status, body = gated_backend.get(f"/api/sessions/{tip}", opener=gated_backend.login())
    assert status == 200
    assert body["id"] == tip
