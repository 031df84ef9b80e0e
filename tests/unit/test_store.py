"""store/sqlite_reader.py: read-only, exact-id lookups; every failure one stable reason; nothing
created or modified next to the store. store/location.py and settings: which store is used."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from hermes_task import settings
from hermes_task.core.lineage import StoreSession, StoreUnavailable
from hermes_task.failures import HermesError
from hermes_task.store import sqlite_reader
from hermes_task.store.location import choose_store, default_store, hermes_root
from hermes_task.store.sqlite_reader import Store
from tests.unit.conftest import SCHEMA

P = "20261201_100000_aaaaaa"
C1 = "20261201_100001_bbbbbb"
C2 = "20261201_100002_cccccc"


def build(path: Path, *, wal: bool, schema: str = SCHEMA) -> None:
    conn = sqlite3.connect(path)
    if wal:
        conn.execute("PRAGMA journal_mode=WAL")
    conn.executescript(schema)
    cfg = json.dumps({"max_iterations": 90, "_delegate_from": P})
    conn.executemany(
        "INSERT INTO sessions (id, source, parent_session_id, model_config, started_at, ended_at,"
        " end_reason, profile_name) VALUES (?,?,?,?,?,?,?,?)",
        [
            (P, "cli", None, None, 100.0, None, None, "default"),
            (C2, "tool", P, cfg, 102.0, 103.0, "agent_close", None),
            (C1, "subagent", P, cfg, 101.0, None, None, "default"),
        ],
    )
    conn.executemany(
        "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?,?,?,?)",
        [
            (C1, "user", "Count  TODO\nmarkers", 101.1),
            (C1, "assistant", "ok", 101.2),
            (C1, "user", "later", 101.3),
        ],
    )
    conn.commit()
    conn.close()


def snapshot(directory: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(directory.iterdir())}


@contextmanager
def unchanged(directory: Path, *names: str) -> Iterator[None]:
    """The directory listing, and the named files' bytes, are identical before and after."""
    before = snapshot(directory)
    yield
    after = snapshot(directory)
    assert sorted(after) == sorted(before)
    for name in names:
        assert after[name] == before[name]


@pytest.mark.parametrize("wal", [False, True], ids=["delete", "wal"])
def test_children_and_first_user_row_without_touching_anything(tmp_path: Path, wal: bool) -> None:
    db = tmp_path / "state.db"
    build(db, wal=wal)
    writer = sqlite3.connect(db)  # a live dashboard: WAL keeps -wal/-shm beside the store
    writer.execute("SELECT count(*) FROM sessions").fetchone()
    lines: list[str] = []
    try:
        with unchanged(tmp_path, "state.db"):
            store = Store(db, debug=lines.append)
            kids = store.children(P)
            assert [k.id for k in kids] == [C2, C1]  # newest first (issue 35)
            assert kids[1] == StoreSession(
                id=C1,
                parent_session_id=P,
                model_config=json.dumps({"max_iterations": 90, "_delegate_from": P}),
                started_at=101.0,
                ended_at=None,
                end_reason=None,
                source="subagent",
                profile_name="default",
            )
            assert store.first_user_text(C1) == "Count  TODO\nmarkers"
            assert store.first_user_text(C2) is None
            assert store.children(C2) == []
            assert [s.id for s in store.recent_with_parent()] == [C2, C1]
            store.close()
    finally:
        writer.close()
    assert lines[0] == f"store {db}: opened read-only in " + lines[0].rsplit(" in ", 1)[1]
    text = "\n".join(lines)
    for secret in (P, C1, C2, "TODO", "later"):
        assert secret not in text
    assert sum("store query" in line for line in lines) == 5


def test_a_closed_wal_store_is_read_as_immutable(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    build(db, wal=True)  # closed: SQLite removed -wal and -shm, the header still says WAL
    assert db.read_bytes()[18:20] == b"\x02\x02"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.db"]
    with unchanged(tmp_path, "state.db"):
        store = Store(db)
        assert [k.id for k in store.children(P)] == [C2, C1]
        store.close()


def test_a_wal_store_with_commits_but_no_shm_file_is_not_opened(tmp_path: Path) -> None:
    live = tmp_path / "live"
    live.mkdir()
    build(live / "state.db", wal=True)
    writer = sqlite3.connect(live / "state.db")
    writer.execute("PRAGMA wal_autocheckpoint=0")
    writer.execute("UPDATE sessions SET title = 'x'")
    writer.commit()
    copy = tmp_path / "copy"
    copy.mkdir()
    for name in ("state.db", "state.db-wal"):  # a crashed writer: commits in -wal, no -shm
        (copy / name).write_bytes((live / name).read_bytes())
    writer.close()
    assert (copy / "state.db-wal").stat().st_size > 0
    with unchanged(copy, "state.db", "state.db-wal"), pytest.raises(StoreUnavailable) as caught:
        Store(copy / "state.db").children(P)
    assert caught.value.reason == "needs_write"


def test_the_first_failure_is_remembered(tmp_path: Path) -> None:
    store = Store(tmp_path / "missing.db")
    for _ in range(2):
        with pytest.raises(StoreUnavailable) as caught:
            store.children(P)
        assert caught.value.reason == "no_file"
    assert not (tmp_path / "missing.db").exists()
    assert list(tmp_path.iterdir()) == []


def test_not_a_database_and_not_a_file(tmp_path: Path) -> None:
    junk = tmp_path / "junk.db"
    junk.write_bytes(os.urandom(4096))
    with unchanged(tmp_path, "junk.db"), pytest.raises(StoreUnavailable) as caught:
        Store(junk).children(P)
    assert caught.value.reason == "corrupt"
    with pytest.raises(StoreUnavailable) as caught:
        Store(tmp_path).children(P)
    assert caught.value.reason == "corrupt"


def test_a_damaged_database_is_corrupt(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    build(db, wal=False)
    data = bytearray(db.read_bytes())
    data[100:4096] = b"\xff" * (4096 - 100)  # the schema page is garbage, the header is intact
    db.write_bytes(bytes(data))
    with unchanged(tmp_path, "state.db"), pytest.raises(StoreUnavailable) as caught:
        Store(db).children(P)
    assert caught.value.reason == "corrupt"


def test_permission_denied(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "state.db"
    build(db, wal=False)
    real_open = open

    def deny(path: Any, *args: Any, **kwargs: Any) -> Any:
        if str(path) == str(db):
            raise PermissionError(13, "Permission denied")
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(sqlite_reader, "open", deny, raising=False)
    with pytest.raises(StoreUnavailable) as caught:
        Store(db).children(P)
    assert caught.value.reason == "permission"


@pytest.mark.parametrize(
    ("where", "error", "reason", "detail"),
    [
        ("stat", PermissionError(13, "Permission denied"), "permission", "the store cannot be opened"),
        ("stat", OSError(5, "Input/output error"), "no_file", "the store path cannot be read"),
        ("open", OSError(5, "Input/output error"), "corrupt", "the store cannot be read"),
        (
            "getsize",
            PermissionError(13, "Permission denied"),
            "permission",
            "the store's -wal file cannot be read",
        ),
    ],
)
def test_each_file_failure_before_sqlite_is_one_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str, error: OSError, reason: str, detail: str
) -> None:
    """A file the checks cannot stat, read, or (a WAL store without `-shm`) whose `-wal` they
    cannot measure is refused with its own reason before SQLite opens anything."""
    db = tmp_path / "state.db"
    build(db, wal=True)  # closed: a WAL header, no -wal or -shm file
    real: dict[str, Callable[..., Any]] = {"stat": os.stat, "open": open, "getsize": os.path.getsize}

    def failing(path: Any, *args: Any, **kwargs: Any) -> Any:
        if str(path) in (str(db), f"{db}-wal"):
            raise error
        return real[where](path, *args, **kwargs)

    if where == "open":
        monkeypatch.setattr(sqlite_reader, "open", failing, raising=False)
    else:
        monkeypatch.setattr(os.path if where == "getsize" else os, where, failing)
    with pytest.raises(StoreUnavailable) as caught:
        sqlite_reader.uri_mode(db)
    assert (caught.value.reason, caught.value.detail) == (reason, detail)


def test_locked_past_the_busy_timeout(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    build(db, wal=False)
    writer = sqlite3.connect(db, isolation_level=None)
    writer.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(StoreUnavailable) as caught:
            Store(db, busy_timeout=0.05).children(P)
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert caught.value.reason == "locked"


@pytest.mark.parametrize(
    "schema",
    [
        SCHEMA.replace("model_config TEXT,", ""),
        SCHEMA.replace("CREATE INDEX idx_sessions_parent ON sessions(parent_session_id);", ""),
        SCHEMA.replace("role TEXT NOT NULL,", "kind TEXT,"),
    ],
    ids=["column", "index", "messages"],
)
def test_unknown_columns(tmp_path: Path, schema: str) -> None:
    db = tmp_path / "state.db"
    conn = sqlite3.connect(db)
    conn.executescript(schema)
    conn.close()
    with pytest.raises(StoreUnavailable) as caught:
        Store(db).children(P)
    assert caught.value.reason == "unknown_columns"


def test_the_store_is_never_written(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    build(db, wal=False)
    store = Store(db)
    try:
        store.children(P)
        assert store._conn is not None
        with pytest.raises(sqlite3.OperationalError):
            store._conn.execute("DELETE FROM sessions")
    finally:
        store.close()  # Python 3.13 warns about a connection left to the garbage collector


# -- which store ---------------------------------------------------------------------------


def test_hermes_root_and_profile_layout() -> None:
    env = {"HOME": "/home/u"}
    assert hermes_root(env) == Path("/home/u/.hermes")
    assert hermes_root({**env, "HERMES_HOME": "/home/u/.hermes/profiles/coder"}) == Path("/home/u/.hermes")
    assert hermes_root({**env, "HERMES_HOME": "/opt/data/profiles/coder"}) == Path("/opt/data")
    assert hermes_root({**env, "HERMES_HOME": "/opt/data"}) == Path("/opt/data")
    assert default_store(env, None) == Path("/home/u/.hermes/state.db")
    assert default_store({**env, "HERMES_HOME": "/opt/data"}, None) == Path("/opt/data/state.db")
    assert default_store(env, "Coder") == Path("/home/u/.hermes/profiles/coder/state.db")
    assert default_store(env, "DEFAULT") == Path("/home/u/.hermes/state.db")
    assert default_store({**env, "HERMES_HOME": "/opt/data"}, "x") == Path("/opt/data/profiles/x/state.db")


def test_choose_store() -> None:
    env = {"HOME": "/h"}
    explicit = Path("/s.db")
    assert choose_store(env, None, explicit, off=True, loopback=True) == (None, "disabled")
    assert choose_store(env, None, explicit, off=False, loopback=False) == (explicit, None)
    assert choose_store(env, None, None, off=False, loopback=False) == (None, "not_loopback")
    assert choose_store(env, None, None, off=False, loopback=True) == (Path("/h/.hermes/state.db"), None)


def test_settings_store_precedence(tmp_path: Path) -> None:
    cfg = tmp_path / "hermes-task" / "config.toml"
    cfg.parent.mkdir(parents=True)
    cfg.write_text('store = "top.db"\n[gateways.lab]\nurl = "https://lab.example"\nstore = "lab.db"\n')
    env = {"XDG_CONFIG_HOME": str(tmp_path), "HOME": "/h", "HERMES_HOME": "/hh"}
    s = settings.resolve(env=env)
    assert (s.store, s.store_off, s.sources.get("store")) == (cfg.parent / "top.db", None, "config")
    s = settings.resolve(env=env, gateway="lab")
    assert (s.store, s.sources.get("store")) == (cfg.parent / "lab.db", "config")
    s = settings.resolve(env={**env, "HERMES_TASK_STORE": "/env.db"}, gateway="lab")
    assert (s.store, s.sources.get("store")) == (Path("/env.db"), "env")
    s = settings.resolve(env=env, gateway="lab", store="/flag.db")
    assert (s.store, s.sources.get("store")) == (Path("/flag.db"), "flag")
    assert settings.resolve(env=env, store="/flag.db", no_store=True).store_off == "disabled"
    plain = {"XDG_CONFIG_HOME": "/nonexistent", "HOME": "/h", "HERMES_HOME": "/hh"}
    assert settings.resolve(env=plain).store == Path("/hh/state.db")
    assert settings.resolve(env=plain, profile="work").store == Path("/hh/profiles/work/state.db")
    far = settings.resolve(env=plain, url="https://dash.example")
    assert (far.store, far.store_off) == (None, "not_loopback")
    cfg.write_text('[gateways.lab]\nurl = "http://127.0.0.1:1"\nno_store = true\n')
    assert settings.resolve(env=env, gateway="lab").store_off == "disabled"
    cfg.write_text("no_store = 1\n")
    with pytest.raises(HermesError):
        settings.resolve(env=env)


def test_making_a_store_starts_the_sqlite3_import_and_close_waits_for_it(tmp_path: Path) -> None:
    """The import overlaps the first HTTP reads; nothing else imports sqlite3 before a lookup.
    Without a store file, nothing imports it at all (the lookup fails `no_file` first)."""
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "from pathlib import Path\n"
        "from hermes_task.store.sqlite_reader import Store\n"
        "before = 'sqlite3' in sys.modules\n"
        "store = Store(Path(sys.argv[1]))\n"
        "started = store._preload is not None\n"
        "store.close()\n"
        "print(before, started, 'sqlite3' in sys.modules, store._preload is None)\n"
    )
    missing = subprocess.run(
        [
            sys.executable,
            "-c",
            probe.replace("store.close()\n", "")
            + "from hermes_task.core.lineage import StoreUnavailable\n"
            + "try:\n    store.knows('x')\nexcept StoreUnavailable as exc:\n    print(exc.reason)\n"
            + "print('sqlite3' in sys.modules)\n",
            str(tmp_path / "state.db"),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert missing.stdout.split() == ["False", "False", "False", "True", "no_file", "False"]
    (tmp_path / "state.db").write_bytes(b"")
    out = subprocess.run(
        [sys.executable, "-c", probe, str(tmp_path / "state.db")], capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["False", "True", "True", "True"]
    # Already imported (as in this process): no thread.
    already = Store(tmp_path / "state.db")
    assert already._preload is None
    already.close()
