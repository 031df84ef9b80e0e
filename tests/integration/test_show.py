"""`show` and the lineage proof against every real backend; expectations follow each
backend's measured features (`backend.features`, tests/support/harness/specs.py), never its name."""

from __future__ import annotations

import json
from typing import Any

import pytest
from tests.support.cli_runner import hermes_task

from hermes_task.render.rows import STEER_LABEL

pytestmark = pytest.mark.integration


def codes(doc: dict[str, Any]) -> list[str]:
    return [w["code"] for w in doc["warnings"]]


@pytest.mark.feature("rotated_chain")
def test_rotated_subagent_chain_proves_from_tip_to_root(backend: Any) -> None:
    c1 = backend.manifest["c1"]
    run = hermes_task(backend, "show", c1["root"], "--tip", c1["tip"], "--json")
    assert run.code == 0, run.stderr
    assert run.stderr == ""
    doc = run.json()
    assert doc["task"]["lineage"] == [c1["root"], c1["mid"], c1["tip"]]
    assert doc["task"]["candidate"]["status"] == "proven"
    assert doc["task"]["state"] == "ended"
    assert doc["task"]["end_reason"] == "agent_close"
    keys = [(r["session_id"], r["id"]) for r in doc["rows"]]
    assert len(keys) == len(set(keys))
    # Fewer than 50 rows in all: the newest page is filled from mid and root on every backend.
    f = backend.features
    caps = doc["backend"]["capabilities"]
    assert (caps["pagination"], caps["order"]) == (f.pagination, f.order)
    assert doc["backend"]["contract"] == ("current" if f.order else "legacy")
    # merging is seen on the tip's own page where it happens; elsewhere nothing asked it
    assert caps["ancestors_merged"] is (True if f.merges_ancestors else None)
    assert codes(doc) == ([] if f.order else ["legacy_backend"])
    assert {k[0] for k in keys} == {c1["root"], c1["mid"], c1["tip"]}
    assert doc["rows"][0]["text"] == c1["goal"]


@pytest.mark.feature("source_rewrite")
def test_tool_source_chain_proves_and_reads_the_root_too(backend: Any) -> None:
    c2 = backend.manifest["c2"]
    run = hermes_task(backend, "show", c2["root"], "--tip", c2["tip"], "--json")
    assert run.code == 0, run.stderr
    doc = run.json()
    assert doc["task"]["lineage"] == [c2["root"], c2["tip"]]
    # The tip's page omits the root's rows: they are read from the root itself.
    assert "partial_ancestors" not in codes(doc)
    assert {r["session_id"] for r in doc["rows"]} == {c2["root"], c2["tip"]}
    assert doc["task"]["goal"] == c2["goal"]
    if backend.features.rewrites_source:
        # the rotation turned source tool into subagent: accepted, and said so.
        assert doc["task"]["notes"] == ["legacy_source_rewrite"]
        assert doc["backend"]["capabilities"]["source_rewrite"] is True
    else:
        assert doc["task"]["notes"] == []


@pytest.mark.feature("around")
def test_around_exits_6_where_the_route_is_missing_and_reads_where_it_exists(backend: Any) -> None:
    rich = backend.manifest["rich"]
    show = hermes_task(backend, "show", rich["id"], "--json")
    assert show.code == 0, show.stderr
    prompt = next(r["id"] for r in show.json()["rows"] if r["role"] == "user")
    run = hermes_task(backend, "show", rich["id"], "--around", str(prompt), "--json")
    if backend.features.around:
        assert run.code == 0, run.stderr
        assert run.json()["rows"][0]["id"] == prompt
    else:
        # a missing route, never "session not found"
        assert run.code == 6, run.stderr
        assert run.json()["error"]["code"] == "unsupported"
        assert "/messages/around" in run.stderr


def test_another_tasks_tip_is_rejected_and_nothing_of_it_is_shown(backend: Any) -> None:
    c1, other = backend.manifest["c1"], backend.manifest["other"]
    run = hermes_task(backend, "show", c1["root"], "--no-hint", "--no-store", "--tip", other["tip"], "--json")
    assert run.code == 5
    doc = run.json()
    assert doc["error"]["code"] == "lineage_rejected"
    assert {r["session_id"] for r in doc["rows"]} == {c1["root"]}
    assert run.stderr.splitlines()[0].startswith("error: the candidate segment could not be proven")


def test_the_root_alone_carries_partial_history(backend: Any) -> None:
    c1 = backend.manifest["c1"]
    run = hermes_task(backend, "show", c1["root"], "--no-hint", "--no-store", "--json")
    assert run.code == 0, run.stderr
    doc = run.json()
    assert doc["task"]["lineage"] == [c1["root"]]
    assert doc["task"]["state"] == "unknown"
    assert "partial_history" in codes(doc)


def test_the_hint_is_only_a_hint(backend: Any) -> None:
    c1 = backend.manifest["c1"]
    doc = hermes_task(backend, "show", c1["root"], "--no-store", "--json").json()
    if backend.features.hint_follows_delegates:
        assert doc["task"]["lineage"] == [c1["root"], c1["mid"], c1["tip"]]
        assert doc["task"]["candidate"] == {
            "id": c1["tip"],
            "status": "proven",
            "reason": "latest_descendant",
            "source": "latest_descendant",
        }
    else:
        assert doc["task"]["lineage"] == [c1["root"]]
        assert "partial_history" in codes(doc)


def test_cold_open_of_a_tip_discloses_earlier_segments(backend: Any) -> None:
    c1 = backend.manifest["c1"]
    doc = hermes_task(backend, "show", c1["tip"], "--json").json()
    assert doc["task"]["lineage"] == [c1["tip"]]
    # Even where the iot tip page carries the ancestors' rows: they are not proven by a cold
    # open (dropped as foreign rows), and the earlier segments stay disclosed as missing.
    assert "partial_ancestors" in codes(doc)
    assert {r["session_id"] for r in doc["rows"]} == {c1["tip"]}


def test_plain_chat_redirect_is_proven_before_its_rows_are_used(backend: Any) -> None:
    plain = backend.manifest["plain"]
    run = hermes_task(backend, "show", plain["root"], "--no-hint", "--json")
    assert run.code == 0, run.stderr
    doc = run.json()
    assert doc["task"]["tip_id"] == plain["tip"]
    assert doc["task"]["lineage"] == [plain["root"], plain["tip"]]


def test_terminal_rendering_and_hostile_text(backend: Any) -> None:
    rich = backend.manifest["rich"]
    run = hermes_task(backend, "show", rich["id"], "--color", "always", "--reasoning")
    assert run.code == 0, run.stderr
    assert rich["goal"] in run.stdout
    for raw in ("\x1b]52", "\x1b[2J", "\x9b", "\u202e", "\x07"):
        assert raw not in run.stdout
    assert "^[]52;c;" in run.stdout
    assert "\x1b[" in run.stdout  # the tool's own SGR colour


def test_a_long_tool_output_shows_its_first_and_last_lines(backend: Any) -> None:
    """Issue 26: piped, a cut tool output keeps its first 4 and last 8 lines (the end of a
    build log matters), with the count of what was left out between them."""
    from hermes_task.core.projection import tool_text

    c1 = backend.manifest["c1"]
    doc = hermes_task(backend, "show", c1["root"], "--tip", c1["tip"], "--json").json()
    outputs = {r["id"]: (tool_text(r["text"]) or r["text"]) for r in doc["rows"] if r["role"] == "tool"}
    bodies = {i: (o if isinstance(o, str) else o.body).split("\n") for i, o in outputs.items()}
    row_id, lines = next((i, b) for i, b in bodies.items() if len(b) > 12 and len("\n".join(b)) < 2000)
    run = hermes_task(backend, "show", c1["root"], "--tip", c1["tip"])
    assert run.code == 0, run.stderr
    section = run.stdout.split(f"  #{row_id}  ", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
    shown = [line[2:] for line in section]
    assert shown[:4] == lines[:4]
    assert shown[4] == f"… {len(lines) - 12} lines left out (--full)"
    assert shown[5:13] == lines[-8:]


def test_a_steer_reads_as_the_users_words(backend: Any) -> None:
    # iot stores a steer as a typed user row; the others append it to a tool result, marked
    rich = backend.manifest["rich"]
    doc = json.loads(hermes_task(backend, "show", rich["id"], "--json").stdout)
    row = next(r for r in doc["rows"] if r["id"] == rich["row_ids"]["steer"])
    run = hermes_task(backend, "show", rich["id"], "--full")
    assert run.code == 0, run.stderr
    assert "OUT-OF-BAND" not in run.stdout
    assert rich["steer_text"] in run.stdout
    if row["role"] == "tool":
        assert "OUT-OF-BAND" in row["text"]  # JSON keeps the text as stored
        after = run.stdout.split(f"#{row['id']}", 1)[1]
        lines = [line.strip() for line in after.splitlines()[1:5]]
        assert lines == ["Terminal — build", "exit 0", STEER_LABEL, rich["steer_text"]]
    else:
        assert (row["role"], row["kind"]) == ("user", "steer")


def test_failures_are_typed(backend: Any) -> None:
    run = hermes_task(backend, "show", "20000101_000000_000000", "--json")
    assert run.code == 4
    assert run.json()["error"]["code"] == "not_found"
    # An ambiguous prefix is a 404 (the backend caps its LIKE at two matches); a unique one
    # resolves server-side, and the exact-id check refuses the answer.
    run = hermes_task(backend, "show", backend.manifest["c1"]["tip"][:9], "--json")
    assert run.code == 4
    assert run.json()["error"]["code"] == "not_found"
    run = hermes_task(backend, "show", backend.manifest["c1"]["tip"][:-1], "--json")
    assert run.code == 5
    assert run.json()["error"]["code"] == "identity_mismatch"
    run = hermes_task(
        backend, "show", backend.manifest["c1"]["tip"], "--json", HERMES_DASHBOARD_TOKEN="wrong-token-123"
    )
    assert run.code == 3
    assert run.json()["error"]["code"] == "auth_rejected"
    assert "wrong-token-123" not in run.stdout + run.stderr
    run = hermes_task(backend, "show", backend.manifest["c1"]["tip"], "--profile", "nosuchprofile", "--json")
    assert run.code == 4
    run = hermes_task(backend, "show", backend.manifest["c1"]["tip"], "--profile", "default", "--json")
    assert run.code == 0, run.stderr
    assert run.json()["task"]["profile"] == "default"
    assert backend.token not in run.stdout + run.stderr


def _run_at(backend: Any, url: str, *args: str) -> Any:
    import subprocess
    import sys

    from tests.support.cli_runner import Run, cli_env

    proc = subprocess.run(
        [sys.executable, "-m", "hermes_task", *args, "--url", url],
        capture_output=True,
        text=True,
        timeout=60,
        env=cli_env(backend.token),
        check=False,
    )
    return Run(proc.returncode, proc.stdout, proc.stderr)


def test_failures_say_what_happened(backend: Any) -> None:
    tip = backend.manifest["c1"]["tip"]
    unknown = "20000101_000000_000000"
    run = hermes_task(backend, "show", unknown)
    assert run.code == 4
    assert run.stderr.splitlines()[0] == f"error: session not found: {unknown} (GET /api/sessions/{unknown})"
    run = hermes_task(backend, "show", tip[:9])
    assert run.code == 4
    assert "hint: pass the full id; prefixes are not resolved" in run.stderr
    run = hermes_task(backend, "show", tip, "--profile", "nosuchprofile", "--json")
    assert run.code == 4
    assert run.json()["error"]["code"] == "profile_not_found"
    assert run.json()["error"]["retryable"] is False
    assert run.json()["error"]["message"] == "the dashboard has no such profile: 'nosuchprofile'"


def test_a_wrong_path_prefix_does_not_look_like_a_hermes_dashboard(backend: Any) -> None:
    run = _run_at(
        backend, backend.url + "/not-the-dashboard", "show", backend.manifest["c1"]["tip"], "--json"
    )
    assert run.code == 6, run.stderr
    error = run.json()["error"]
    assert error["code"] == "incompatible_response"
    assert error["message"].startswith("does not look like a Hermes dashboard: ")
    assert "/not-the-dashboard/api/sessions/" in error["message"]
    assert "--url" in error["hint"]


def test_a_network_error_names_the_url_and_the_cause(backend: Any) -> None:
    import socket

    with socket.socket() as sock:  # a port nothing listens on: bound, never listening
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        run = _run_at(backend, f"http://127.0.0.1:{port}", "show", backend.manifest["c1"]["tip"], "--json")
    assert run.code == 7
    message = run.json()["error"]["message"]
    assert message.startswith(f"could not reach the dashboard: http://127.0.0.1:{port} (GET /api/sessions/")
    assert message.endswith(": connection refused")
    assert backend.token not in run.stdout + run.stderr
