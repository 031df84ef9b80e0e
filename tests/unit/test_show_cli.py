"""`hermes-task show` through the CLI, replaying the real captures of both backends."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from hermes_task.cli.app import app
from tests.support.cli_runner import invoke
from tests.support.dashboard import serving
from tests.support.replay import BASE_URL, TOKEN, Replay

ENV = {"HERMES_DASHBOARD_TOKEN": TOKEN, "NO_COLOR": "1", "COLUMNS": "100", "XDG_CONFIG_HOME": "/nonexistent"}


@pytest.fixture(params=["official", "iot"])
def replay(request: pytest.FixtureRequest) -> Iterator[Replay]:
    rep = Replay(request.param)
    with serving(rep):
        yield rep


def run(*args: str, env: dict[str, str] | None = None) -> Result:
    return invoke("show", *args, env=env)


def doc(result: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def test_root_with_proven_tip_shows_the_whole_lineage(replay: Replay) -> None:
    c1 = replay.manifest["c1"]
    result = run(c1["root"], "--tip", c1["tip"], "--json")
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""
    data = doc(result)
    task = data["task"]
    assert task["lineage"] == [c1["root"], c1["mid"], c1["tip"]]
    assert task["tip_id"] == c1["tip"]
    assert task["candidate"] == {"id": c1["tip"], "status": "proven", "reason": None, "source": "tip_option"}
    assert task["state"] == "ended"
    assert task["end_reason"] == "agent_close"
    codes = [w["code"] for w in data["warnings"]]
    tip_ids = {r["session_id"] for r in data["rows"]}
    # 0.19.0's tip page holds the tip's rows only, iot's merged view some of mid's and root's:
    # the newest page is filled from mid and root (fewer than 50 rows in all), each read once.
    legacy = replay.manifest["backend"]["contract"] == "legacy"
    # The iot tip page carries mid's and root's rows: merging is learned from it (and with it,
    # that rotation keeps the source); nothing asked about `--around`.
    learned = {
        "pagination": True,
        "order": not legacy,
        "ancestors_merged": None if legacy else True,
        "around": None,
        "source_rewrite": None if legacy else False,
    }
    assert data["backend"] == {"contract": "legacy" if legacy else "current", "capabilities": learned}
    assert codes == (["legacy_backend"] if legacy else [])
    pages = [seen for seen in replay.seen if "/messages?" in seen]
    assert len(pages) == len(set(pages))
    assert [s for s in pages if "order=oldest" in s] == []  # the goal was in the window
    assert tip_ids == {c1["root"], c1["mid"], c1["tip"]}
    assert data["rows"][0]["text"] == c1["goal"] == task["goal"]
    assert [s["id"] for s in task["segments"]] == [c1["root"], c1["mid"], c1["tip"]]
    assert sum(s["rows_shown"] for s in task["segments"]) == len(data["rows"])
    assert data["coverage"]["at_start"] is True
    keys = [(r["session_id"], r["id"]) for r in data["rows"]]
    assert len(keys) == len(set(keys))


def test_root_alone_uses_the_hint_where_it_proves_and_is_partial_where_not(replay: Replay) -> None:
    c1 = replay.manifest["c1"]
    data = doc(result := run(c1["root"], "--json"))
    assert result.exit_code == 0
    if replay.manifest["backend"]["contract"] == "legacy":
        # 0.19.0's latest-descendant walks to the tip; every hop passed the proof.
        assert data["task"]["lineage"] == [c1["root"], c1["mid"], c1["tip"]]
        assert data["task"]["candidate"]["reason"] == "latest_descendant"
    else:
        # iot never moves for delegated chains: the root alone is partial history.
        assert data["task"]["lineage"] == [c1["root"]]
        assert data["task"]["state"] == "unknown"
        assert [w["code"] for w in data["warnings"]] == ["partial_history"]


def test_no_hint_root_alone_is_partial_history_on_both(replay: Replay) -> None:
    c1 = replay.manifest["c1"]
    result = run(c1["root"], "--no-hint", "--json")
    assert result.exit_code == 0
    data = doc(result)
    assert data["task"]["lineage"] == [c1["root"]]
    assert "partial_history" in [w["code"] for w in data["warnings"]]
    assert data["task"]["end_reason"] == "compression"


def test_another_tasks_tip_is_rejected_with_only_verified_rows(replay: Replay) -> None:
    c1, other = replay.manifest["c1"], replay.manifest["other"]
    result = run(c1["root"], "--no-hint", "--tip", other["tip"], "--json")
    assert result.exit_code == 5
    data = doc(result)
    assert data["kind"] == "error"
    assert data["error"]["code"] == "lineage_rejected"
    assert {r["session_id"] for r in data["rows"]} == {c1["root"]}
    assert result.stderr.startswith("error: the candidate segment could not be proven")


def test_terminal_output_shows_rows_then_refuses_the_candidate(replay: Replay) -> None:
    c1, other = replay.manifest["c1"], replay.manifest["other"]
    result = run(c1["root"], "--no-hint", "--tip", other["tip"])
    assert result.exit_code == 5
    assert c1["goal"] in result.stdout
    assert other["tip"] not in result.stdout.replace(f"--tip {other['tip']}", "")
    assert "lineage_rejected" not in result.stdout


def test_unknown_id_is_not_found_and_retryable(replay: Replay) -> None:
    unknown = replay.by_name["detail:unknown"]["path"].rsplit("/", 1)[-1]
    result = run(unknown, "--json")
    assert result.exit_code == 4
    assert doc(result)["error"]["code"] == "not_found"
    assert doc(result)["error"]["retryable"] is True


def test_an_unreadable_tip_hides_nothing_verified(replay: Replay) -> None:
    c1 = replay.manifest["c1"]
    unknown = replay.by_name["detail:unknown"]["path"].rsplit("/", 1)[-1]
    result = run(c1["root"], "--no-hint", "--tip", unknown, "--json")
    assert result.exit_code == 4
    data = doc(result)
    assert data["error"]["code"] == "not_found"
    assert {r["session_id"] for r in data["rows"]} == {c1["root"]}
    assert data["task"]["root_id"] == c1["root"]
    assert data["task"]["candidate"] == {
        "id": unknown,
        "status": "unavailable",
        "reason": "not_found",
        "source": "tip_option",
    }
    text = run(c1["root"], "--no-hint", "--tip", unknown)
    assert text.exit_code == 4
    assert c1["goal"] in text.stdout
    assert "\nerror: session not found" in text.stderr


def test_a_prefix_answer_is_an_identity_mismatch(replay: Replay) -> None:
    prefix = replay.by_name["detail:prefix-unique"]["path"].rsplit("/", 1)[-1]
    result = run(prefix, "--json")
    assert result.exit_code == 5
    assert doc(result)["error"]["code"] == "identity_mismatch"


def test_unknown_profile_is_profile_not_found_and_final(replay: Replay) -> None:
    result = run(replay.manifest["c1"]["tip"], "--profile", "nosuchprofile", "--json")
    assert result.exit_code == 4
    error = doc(result)["error"]
    assert error["code"] == "profile_not_found"
    assert error["retryable"] is False
    assert error["message"] == "the dashboard has no such profile: 'nosuchprofile'"


def test_not_found_names_the_id_and_the_route_once(replay: Replay) -> None:
    unknown = replay.by_name["detail:unknown"]["path"].rsplit("/", 1)[-1]
    result = run(unknown)
    assert result.exit_code == 4
    assert result.stderr.splitlines()[0] == (
        f"error: session not found: {unknown} (GET /api/sessions/{unknown})"
    )
    assert "Session not found" not in result.stderr


def test_missing_and_wrong_tokens(replay: Replay, tmp_path: Any) -> None:
    import httpx

    tip = replay.manifest["c1"]["tip"]
    # Nothing configured: loopback discovery asks "/" (no token there), then the API says 401.
    replay.overrides[("/", "")] = httpx.Response(404, json={"detail": "Not Found"})
    result = run(
        tip,
        "--json",
        env={"HERMES_DASHBOARD_TOKEN": "", "HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path)},
    )
    assert result.exit_code == 3
    assert doc(result)["error"]["code"] == "auth_missing"
    assert "hint: set HERMES_DASHBOARD_TOKEN" in result.stderr
    wrong = tmp_path / "token"
    wrong.write_text("not-the-token\n")
    result = run(tip, "--json", "--token-file", str(wrong), env={"HERMES_DASHBOARD_TOKEN": ""})
    assert result.exit_code == 3
    assert doc(result)["error"]["code"] == "auth_rejected"
    assert "not-the-token" not in result.stdout + result.stderr


def test_invalid_ids_fail_before_any_request(replay: Replay) -> None:
    for bad in ["", "..", " x", "a\x1bb"]:
        result = run(bad, "--json")
        assert result.exit_code == 2, bad
        assert doc(result)["error"]["code"] == "invalid_id"
    assert replay.seen == []


def test_hostile_text_never_reaches_the_terminal_raw(replay: Replay) -> None:
    rich = replay.manifest["rich"]
    result = run(rich["id"], "--reasoning", env={"FORCE_COLOR": "1"})
    assert result.exit_code == 0, result.stderr
    for raw in ("\x1b]52", "\x1b[2J", "\x9b", "\u202e", "\x07"):
        assert raw not in result.stdout
    assert "^[]52;c;" in result.stdout
    data = doc(run(rich["id"], "--json"))
    texts = "".join(r["text"] or "" for r in data["rows"])
    assert "\x1b]52;c;" in texts  # JSON keeps the data; ensure_ascii escapes it on the wire
    assert "\\u001b" in run(rich["id"], "--json").stdout


def test_a_hint_naming_a_missing_session_is_ignored(replay: Replay) -> None:
    import httpx

    c1 = replay.manifest["c1"]
    ghost = "20000101_000000_dead00"
    path = f"/api/sessions/{c1['root']}/latest-descendant"
    body = {
        "requested_session_id": c1["root"],
        "session_id": ghost,
        "path": [c1["root"], ghost],
        "changed": True,
    }
    replay.overrides[(path, "")] = httpx.Response(200, json=body)
    replay.overrides[(f"/api/sessions/{ghost}", "")] = httpx.Response(
        404, json={"detail": "Session not found"}
    )
    result = run(c1["root"], "--json")
    assert result.exit_code == 0, result.stderr
    data = doc(result)
    assert data["task"]["lineage"] == [c1["root"]]
    assert "partial_history" in [w["code"] for w in data["warnings"]]
    assert f"GET /api/sessions/{ghost}?" in replay.seen


def test_two_tips_on_different_branches_are_a_fork_and_neither_is_shown(replay: Replay) -> None:
    import httpx

    c1 = replay.manifest["c1"]
    # A sibling of the real mid segment: same parent, markers and source, so it proves too.
    sibling = {**replay.by_name["detail:c1.mid"]["body"], "id": "20261130_235959_f0f0f0"}
    sibling.update({"end_reason": "agent_close"})
    replay.overrides[(f"/api/sessions/{sibling['id']}", "")] = httpx.Response(200, json=sibling)
    result = run(c1["root"], "--no-hint", "--tip", c1["tip"], "--tip", sibling["id"], "--json")
    assert result.exit_code == 5, result.stderr
    data = doc(result)
    assert data["error"]["code"] == "fork_ambiguous"
    assert {r["session_id"] for r in data["rows"]} == {c1["root"]}
    assert not any(r["session_id"] in (c1["mid"], c1["tip"], sibling["id"]) for r in data["rows"])
    terminal = run(c1["root"], "--no-hint", "--tip", c1["tip"], "--tip", sibling["id"])
    assert terminal.exit_code == 5
    assert "error: two candidate segments are proven on different branches" in terminal.stderr


def test_ctrl_c_under_json_writes_an_interrupted_document_and_exits_130(
    replay: Replay, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One shell for every exit path: an interruption mid-read still leaves one document."""
    from hermes_task.dashboard.client import DashboardClient

    def interrupted(*_args: object, **_kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(DashboardClient, "messages", interrupted)
    result = run(replay.manifest["c1"]["root"], "--json")
    assert result.exit_code == 130
    body = doc(result)
    assert body["kind"] == "error"
    assert body["error"]["code"] == "interrupted"
    result = run(replay.manifest["c1"]["root"])
    assert result.exit_code == 130
    assert result.stdout == ""


@pytest.mark.parametrize("command", ["show", "older", "recover"])
def test_timeout_is_not_a_per_request_alias_any_more(replay: Replay, command: str) -> None:
    """`--timeout` bounds a whole run (follow, recover --watch) only; per request it is
    `--request-timeout`, everywhere."""
    c1 = replay.manifest["c1"]
    result = CliRunner().invoke(app, [command, c1["root"], "--timeout", "5", "--url", BASE_URL], env=ENV)
    assert result.exit_code == 2
    first = result.stderr.splitlines()[0]
    assert first.startswith("error: invalid usage: ")
    assert "--request-timeout" in first  # recover: --timeout bounds --watch only
    assert replay.seen == []
    ok = run(c1["root"], "--no-hint", "--request-timeout", "5", "--json")
    assert ok.exit_code in (0, 9), ok.stderr


@pytest.mark.parametrize("columns", ["abc", "0", "-5", ""])
def test_a_broken_columns_variable_keeps_the_error_message(replay: Replay, columns: str) -> None:
    unknown = replay.by_name["detail:unknown"]["path"].rsplit("/", 1)[-1]
    result = run(unknown, env={"COLUMNS": columns})
    assert result.exit_code == 4
    assert (
        result.stderr.splitlines()[0] == f"error: session not found: {unknown} (GET /api/sessions/{unknown})"
    )
    assert "Traceback" not in result.stderr


def test_show_and_older_write_one_error_document_for_a_rejected_tip(replay: Replay) -> None:
    """`show` and `older` read through one function: the same failure, the same document
    (`task` as verified so far in both; `older` once wrote `task: null`)."""
    c1, other = replay.manifest["c1"], replay.manifest["other"]
    args = (c1["root"], "--no-hint", "--tip", other["tip"], "--json")
    shown, older = run(*args), invoke("older", *args)
    assert (shown.exit_code, older.exit_code) == (5, 5)
    assert shown.stderr == older.stderr
    assert doc(older)["task"] is not None
    assert doc(older)["task"]["lineage"] == [c1["root"]]
    assert doc(shown) == doc(older)
