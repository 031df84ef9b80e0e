"""The unit tests' shared fixtures.

Unit tests replay HTTP captures that have no local store beside them: every CLI run sees a
valid store (the real tables and indexes) that knows every session id named under tests/ and
fixtures/ but
holds no parent links and no messages, so it proposes nothing and the commands behave exactly
as with HTTP alone, with no `store_unavailable` warning. Tests of the store itself pass their
own path or `--store`.

`fake` is the in-memory dashboard (`tests/support/conversations.py`) served to every httpx
client; a module that needs another one (a subclass, other routes) overrides `conversations`.
`clock` is a fake clock and sleep (`tests/support/clock.py`) in the Environment every CLI run
of the test gets (`tests/support/cli_runner.py`'s `ENVIRONMENT`)."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_task.cli.options import Environment
from tests.support.cli_runner import ENVIRONMENT
from tests.support.clock import Clock
from tests.support.conversations import Conversations
from tests.support.dashboard import serving

SCHEMA = """
CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, parent_session_id TEXT,
  model_config TEXT, started_at REAL NOT NULL, ended_at REAL, end_reason TEXT, title TEXT,
  profile_name TEXT);
CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL,
  role TEXT NOT NULL, content TEXT, timestamp REAL NOT NULL);
CREATE INDEX idx_sessions_parent ON sessions(parent_session_id);
CREATE INDEX idx_sessions_started ON sessions(started_at DESC);
CREATE INDEX idx_messages_session ON messages(session_id, timestamp);
"""


@pytest.fixture(scope="session")
def _empty_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("empty-store") / "state.db"
    ids: set[str] = set()
    root = Path(__file__).resolve().parents[2]
    for file in [*(root / "tests").rglob("*"), *(root / "fixtures").rglob("*")]:
        if file.is_file() and file.suffix in (".json", ".py", ".ambr"):
            ids.update(re.findall(r"\b\d{8}_\d{6}_[0-9a-f]{6}\b", file.read_text(errors="replace")))
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA)
    conn.executemany(
        "INSERT INTO sessions (id, source, started_at) VALUES (?, 'cli', 0)", [(i,) for i in sorted(ids)]
    )
    conn.commit()
    conn.close()
    return path


@pytest.fixture(autouse=True)
def _no_local_store(_empty_store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HERMES_TASK_STORE", str(_empty_store))


@pytest.fixture
def conversations() -> Conversations:
    """The dashboard `fake` serves: details and pages only, hints answered."""
    return Conversations()


@pytest.fixture
def fake(conversations: Conversations) -> Iterator[Conversations]:
    """`conversations`, served to every httpx client (respx) while the test runs."""
    with serving(conversations.handle):
        yield conversations


@pytest.fixture
def clock() -> Iterator[Clock]:
    """A fake clock and sleep in the Environment of every CLI run of the test (no real waiting)."""
    c = Clock()
    ENVIRONMENT.append(Environment(clock=c, sleep=c.sleep))
    yield c
    ENVIRONMENT.clear()
