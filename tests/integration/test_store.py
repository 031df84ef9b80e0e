"""The local store against both real backends (issue 13): child ids and newer segments are
proposed by the dashboard's own `state.db` and proven over HTTP; forged or foreign rows are
never used; an unusable store is today's behaviour plus one warning; the store and its
directory are byte-identical before and after every command."""

from __future__ import annotations

import hashlib
import json
import secrets
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from tests.support import harness
from tests.support.cli_runner import backend_store_env, cli_env, hermes_task

pytestmark = pytest.mark.integration


def store_dir(backend: Any) -> Path:
    return Path(backend.home) / "hermes"


def listing(directory: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(directory.iterdir())}


@contextmanager
def store_copy(backend: Any, tmp_path: Path, *, live: bool) -> Iterator[Path]:
    """A private copy of the dashboard's store that only the CLI reads (the dashboard itself
    creates and removes `-wal`/`-shm` on its own requests). `live`: a connection stays open
    on it, as a running dashboard's does (WAL: `-wal`/`-shm` exist beside it). The copy's
    bytes and its directory listing must be identical before and after the block."""
    directory = tmp_path / f"store-{'live' if live else 'closed'}"
    directory.mkdir()
    source = sqlite3.connect(f"file:{store_dir(backend) / 'state.db'}?mode=ro", uri=True)
    target = sqlite3.connect(directory / "state.db")
    source.backup(target)
    source.close()
    mode = target.execute("PRAGMA journal_mode").fetchone()[0]
    target.close()
    keeper = sqlite3.connect(directory / "state.db") if live else None
    if keeper is not None:
        keeper.execute("SELECT count(*) FROM sessions").fetchone()
    try:
        before = listing(directory)
        if live and mode == "wal":
            assert {"state.db-wal", "state.db-shm"} <= set(before)
        yield directory / "state.db"
        assert listing(directory) == before
    finally:
        if keeper is not None:
            keeper.close()


def codes(doc: dict[str, Any]) -> list[str]:
    return [w["code"] for w in doc["warnings"]]


# -- recover -----------------------------------------------------------------------------


@pytest.mark.parametrize("live", [True, False], ids=["live", "closed"])
def test_recover_finds_every_seeded_child(backend: Any, tmp_path: Path, live: bool) -> None:
    with store_copy(backend, tmp_path, live=live) as store:
        run = hermes_task(backend, "recover", backend.manifest["parent"], "--store", str(store), "--json")
    assert run.code == 0, run.stderr
    assert "store_unavailable" not in codes(run.json())
    tasks = run.json()["tasks"]
    assert [t["child_session_id"] for t in tasks] == [e["child"] for e in backend.manifest["expected_tasks"]]
    assert {t["child_ref_source"] for t in tasks} == {"store"}


def test_every_background_child_of_the_seeded_parent_is_named(backend: Any) -> None:
    """Issue 35: each background task of the seeded parent (c1, c2 -- the `tool`-source child
    compacted in place --, running) is named by `recover --json`, from the store, proven."""
    m = backend.manifest
    run = hermes_task(backend, "recover", m["parent"], "--json")
    assert run.code == 0, run.stderr
    background = [
        (t["number"], t["child_session_id"], t["child_ref_source"])
        for t, e in zip(run.json()["tasks"], m["expected_tasks"], strict=True)
        if e["status_source"] != "result"
    ]
    wanted = [e["child"] for e in m["expected_tasks"] if e["status_source"] != "result"]
    assert len(background) == 3
    assert [(child, source) for _, child, source in background] == [(c, "store") for c in wanted]


def test_a_child_whose_goal_row_was_archived_is_named(backend: Any) -> None:
    """Issue 35 (a regression on 0.19.0): a background child compacted in place has its
    goal row archived (the seeding checks it in the store); 0.19 hides archived rows, so its
    oldest row over HTTP is the compaction summary. The child is still named: proven by its own parent link and delegation marker,
    matched on the store's goal row."""
    seeded = backend.compacted_child()
    oldest = hermes_task(backend, "older", seeded["child"], "--all", "--json")
    assert oldest.code == 0, oldest.stderr
    first = oldest.json()["rows"][0]
    if backend.features.order:  # include_compacted honoured: the archived goal is served
        assert (first["text"], first["archived"]) == (seeded["goal"], True)
    else:  # archived rows hidden: the summary comes first (backend.md section 11)
        assert first["text"].startswith("[CONTEXT COMPACTION")
    run = hermes_task(backend, "recover", seeded["parent"], "--json")
    assert run.code == 0, run.stderr
    (task,) = run.json()["tasks"]
    assert (task["goal"], task["child_session_id"], task["child_ref_source"], task["unavailable_reason"]) == (
        seeded["goal"],
        seeded["child"],
        "store",
        None,
    )


def test_same_goal_sync_task_and_recursion(backend: Any, tmp_path: Path) -> None:
    m = backend.manifest["store"]
    with store_copy(backend, tmp_path, live=True) as store:
        run = hermes_task(backend, "recover", m["parent"], "--recursive", "--store", str(store), "--json")
    assert run.code == 0, run.stderr
    doc = run.json()
    by_call: dict[str, list[dict[str, Any]]] = {}
    for task in doc["tasks"]:
        by_call.setdefault(task["call_id"], []).append(task)
    # Two tasks with the same goal: told apart by order or reported ambiguous, never swapped.
    for call, child in zip(m["same"]["calls"], m["same"]["children"], strict=True):
        (task,) = by_call[call]
        assert task["child_session_id"] in (child, None)
        if task["child_session_id"] is None:
            assert task["unavailable_reason"] == "ambiguous_match"
    # The synchronous task with no child never borrows the background task's child.
    (background,) = by_call[m["docs"]["call"]]
    (sync,) = by_call[m["docs"]["sync_call"]]
    assert (background["child_session_id"], background["child_ref_source"]) == (m["docs"]["child"], "store")
    assert (sync["child_session_id"], sync["unavailable_reason"]) == (None, "no_durable_child_reference")
    # --recursive descends for real: the orchestrator child's own delegated task.
    (orch,) = by_call[m["orch"]["call"]]
    assert orch["child_session_id"] == m["orch"]["child"]
    assert [(c["call_id"], c["child_session_id"], c["child_ref_source"]) for c in orch["children"]] == [
        (m["orch"]["grand_call"], m["orch"]["grand"], "store")
    ]
    (tool,) = by_call[m["tool2"]["call"]]
    assert tool["child_session_id"] == m["tool2"]["segments"][0]
    assert "store_unavailable" not in codes(doc)


def test_recover_table_pipes_full_child_ids(backend: Any) -> None:
    m = backend.manifest["store"]
    run = hermes_task(backend, "recover", m["parent"], COLUMNS="80")
    assert run.code == 0, run.stderr
    assert m["docs"]["child"] in run.stdout.split()
    assert m["orch"]["child"] in run.stdout.split()


# -- show ----------------------------------------------------------------------------------


@pytest.mark.parametrize("case", ["c1", "tool2"])
def test_show_root_proves_the_tip_of_a_twice_rotated_task(backend: Any, case: str, tmp_path: Path) -> None:
    """No --tip and no hint: the store's continuations, proven over HTTP (subagent and tool)."""
    if case == "c1":
        c1 = backend.manifest["c1"]
        segments = [c1["root"], c1["mid"], c1["tip"]]
    else:
        segments = backend.manifest["store"]["tool2"]["segments"]
    with store_copy(backend, tmp_path, live=True) as store:
        run = hermes_task(backend, "show", segments[0], "--no-hint", "--store", str(store), "--json")
    assert run.code == 0, run.stderr
    doc = run.json()
    assert doc["task"]["lineage"] == segments
    assert (doc["task"]["tip_id"], doc["task"]["state"]) == (segments[-1], "ended")
    assert doc["task"]["candidate"]["source"] == "store"
    assert "partial_history" not in codes(doc)
    assert "store_unavailable" not in codes(doc)
    keys = [(r["session_id"], r["id"]) for r in doc["rows"]]
    assert len(keys) == len(set(keys))
    # Without the store: today's partial history plus the warning.
    plain = hermes_task(backend, "show", segments[0], "--no-hint", "--no-store", "--json").json()
    assert plain["task"]["lineage"] == [segments[0]]
    assert "partial_history" in codes(plain)
    assert codes(plain)[-1] == "store_unavailable"


def test_older_walks_the_store_lineage(backend: Any) -> None:
    c1 = backend.manifest["c1"]
    run = hermes_task(backend, "older", c1["root"], "--all", "--no-hint", "--json")
    assert run.code == 0, run.stderr
    doc = run.json()
    assert doc["task"]["lineage"] == [c1["root"], c1["mid"], c1["tip"]]


# -- unusable stores -----------------------------------------------------------------------


def test_an_unusable_store_is_todays_behaviour_plus_the_warning(
    backend: Any, seeded_home: Any, tmp_path: Path
) -> None:
    parent = backend.manifest["parent"]
    expected = hermes_task(backend, "recover", parent, "--no-store", "--json").json()
    assert codes(expected)[-1] == "store_unavailable"
    today = {**expected, "warnings": expected["warnings"][:-1]}
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not SQLite" * 64)
    foreign = _another_dashboards_store(seeded_home(backend.name, tmp_path / "other"))
    cases = {
        "unreadable": ("--store", str(junk)),
        "another dashboard": ("--store", str(foreign)),
        "off": ("--no-store",),
    }
    for name, args in cases.items():
        run = hermes_task(backend, "recover", parent, *args, "--json")
        assert run.code == 0, (name, run.stderr)
        doc = run.json()
        assert {**doc, "warnings": doc["warnings"][:-1]} == today, name
        assert codes(doc)[-1] == "store_unavailable", name
    # A URL that is not recognisably loopback (127.1 reaches 127.0.0.1; the dashboards check
    # the Host header, so through tests/support/fault_proxy.py, which sends the upstream's): no store.
    from tests.support.fault_proxy import FaultProxy

    env = cli_env(backend.token, **backend_store_env(backend))
    with FaultProxy(backend.url) as proxy:
        far = proxy.url.replace("127.0.0.1", "127.1")
        proc = subprocess.run(
            [sys.executable, "-m", "hermes_task", "recover", parent, "--json", "--url", far],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
            check=False,
        )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert {**doc, "warnings": doc["warnings"][:-1]} == today
    assert "not loopback" in doc["warnings"][-1]["message"]


def _another_dashboards_store(home: Path) -> Path:
    """A store of the same schema none of whose ids this dashboard knows: a copy of its own
    seeded store with every session id (and every reference to one) moved to another year."""
    year = json.loads((home / "manifest.json").read_text())["parent"][:4]  # ids start with it
    db = home / "hermes" / "state.db"
    conn = sqlite3.connect(db)
    try:
        for table, column in (
            ("sessions", "id"),
            ("sessions", "parent_session_id"),
            ("sessions", "model_config"),
            ("messages", "session_id"),
        ):
            conn.execute(f"UPDATE {table} SET {column} = replace({column}, ?, '1999')", (year,))  # noqa: S608
        conn.commit()
    finally:
        conn.close()
    return db


# -- forged rows (a private server whose store holds them) --------------------------------


def _forge(db: Path, template: str, new_id: str, **changes: Any) -> None:
    conn = sqlite3.connect(db)
    try:
        conn.execute("CREATE TEMP TABLE forged AS SELECT * FROM sessions WHERE id = ?", (template,))
        sets = ", ".join(f"{k} = ?" for k in ("id", *changes))
        conn.execute(f"UPDATE forged SET {sets}", (new_id, *changes.values()))  # noqa: S608
        conn.execute("INSERT INTO sessions SELECT * FROM forged")
        first = conn.execute(
            "SELECT role, content, timestamp FROM messages WHERE session_id = ? AND role = 'user' ORDER BY timestamp LIMIT 1",
            (template,),
        ).fetchone()
        if first is not None:
            conn.execute(
                "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, ?, ?, ?)",
                (new_id, first[0], first[1], changes.get("started_at", first[2])),
            )
        conn.commit()
    finally:
        conn.close()


def test_forged_rows_are_never_used(backend: Any, seeded_home: Any, tmp_path: Path) -> None:
    home = seeded_home(backend.name, tmp_path / "home")
    m = json.loads((home / "manifest.json").read_text())
    db = home / "hermes" / "state.db"
    c1, p = m["c1"], m["parent"]
    conn = sqlite3.connect(db)
    root_started, mid_config = conn.execute(
        "SELECT r.started_at, m.model_config FROM sessions r, sessions m WHERE r.id = ? AND m.id = ?",
        (c1["root"], c1["mid"]),
    ).fetchone()
    columns = {row[1] for row in conn.execute("PRAGMA table_info(sessions)")}
    conn.close()
    wrong = json.dumps({**json.loads(mid_config), "_branched_from": "20261130_000000_abcdef"})
    c2_child = m["expected_tasks"][3]["child"]
    forged = {
        # continuations of c1's root
        "20261130_000001_f00001": (c1["mid"], {"model_config": wrong}),
        "20261130_000002_f00002": (c1["mid"], {"profile_name": "someone-else"}),
        "20261130_000003_f00003": (c1["mid"], {"started_at": root_started - 100}),
        # children of the parent, with c2's goal
        "20261130_000004_f00004": (c2_child, {"started_at": root_started - 100}),
        "20261130_000005_f00005": (c2_child, {"profile_name": "someone-else"}),
    }
    for new_id, (template, changes) in forged.items():
        if set(changes) <= columns:  # 0.18.x stores have no profile_name to forge
            _forge(db, template, new_id, **changes)
    with harness.start(backend.name, home, secrets.token_urlsafe(24)) as server:
        run = hermes_task(server, "show", c1["root"], "--no-hint", "--json")
        assert run.code == 0, run.stderr
        assert run.json()["task"]["lineage"] == [c1["root"], c1["mid"], c1["tip"]]
        run = hermes_task(server, "recover", p, "--json")
        assert run.code == 0, run.stderr
        assert [t["child_session_id"] for t in run.json()["tasks"]] == [
            e["child"] for e in m["expected_tasks"]
        ]
    # unknown to the dashboard: a continuation that only a copy of the store holds
    copy = tmp_path / "copy.db"
    shutil.copyfile(db, copy)
    _forge(copy, c1["mid"], "20261130_000006_f00006")
    run = hermes_task(
        backend, "show", backend.manifest["c1"]["root"], "--no-hint", "--store", str(copy), "--json"
    )
    assert run.code == 0, run.stderr


# -- follow through a rotation -------------------------------------------------------------


def test_follow_reaches_the_end_of_a_task_that_rotates_while_followed(
    backend: Any, seeded_home: Any, tmp_path: Path
) -> None:
    home = seeded_home(backend.name, tmp_path / "home")
    m = json.loads((home / "manifest.json").read_text())
    live = m["store"]["live"]["id"]
    with harness.start(backend.name, home, secrets.token_urlsafe(24)) as server:
        env = cli_env(server.token, **backend_store_env(server))
        proc = subprocess.Popen(
            [sys.executable, "-m", "hermes_task", "follow", live, "--no-hint", "--json", "--interval", "0.5",
             "--timeout", "90", "--url", server.url],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )  # fmt: skip
        try:
            assert proc.stdout is not None
            first = json.loads(proc.stdout.readline())
            assert first["type"] in ("state", "row")
            time.sleep(1.0)
            rotated = server.rotate(live)
            out, err = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert proc.returncode == 0, err
    events = [first, *(json.loads(line) for line in out.splitlines())]
    rows = [(e["session_id"], e["id"]) for e in events if e["type"] == "row"]
    assert len(rows) == len(set(rows))
    states = [e for e in events if e["type"] == "state"]
    assert states[-1]["tip_id"] == rotated["new"]
    assert states[-1]["lineage"] == [live, rotated["new"]]
    assert states[-1]["candidate"]["source"] == "store"
    assert events[-1] == {
        "type": "result",
        "state": "ended",
        "end_reason": "agent_close",
        "exit_code": 0,
        "last_read_age": None,
        "unreported": None,
    }
    assert any(r[0] == rotated["new"] for r in rows)
