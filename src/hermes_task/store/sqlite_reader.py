"""The local Hermes state store, read-only: the only module that knows SQLite (docs/identity.md,
"The local store"). The file is checked before SQLite touches it (`uri_mode`). A failure stays
for the rest of the run, except `locked`. `import sqlite3` costs milliseconds: a `Store` whose
file exists starts it on a background thread, overlapping the first HTTP reads.
"""

from __future__ import annotations

import importlib
import os
import stat
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_task.core import lineage
from hermes_task.core.delegations import LedgerRecord
from hermes_task.core.lineage import StoreSession, StoreUnavailable

if TYPE_CHECKING:
    import sqlite3  # imported when a lookup opens the store (it costs start-up time)

BUSY_TIMEOUT = 0.2
RECENT_SCAN = 500
SESSION_COLUMNS = StoreSession.__struct_fields__[:-1]  # the columns of its fields, but `profile_name`
MESSAGE_COLUMNS = ("session_id", "role", "content", "timestamp")
LEDGER_COLUMNS = LedgerRecord.__struct_fields__


def _classify(exc: sqlite3.Error) -> StoreUnavailable:
    text = str(exc).lower()
    if "locked" in text or "busy" in text:
        return StoreUnavailable("locked", "the store stayed locked past the busy timeout")
    if "readonly" in text or "read-only" in text or "write" in text:
        return StoreUnavailable("needs_write", "SQLite would need to write to read it")
    if "unable to open" in text or "authori" in text:
        return StoreUnavailable("permission", "the store cannot be opened")
    if "no such" in text:
        return StoreUnavailable("unknown_columns", "a needed table or column is missing")
    return StoreUnavailable("corrupt", "the store is not a readable SQLite database")


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _number(value: object) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


class Store:
    """A lazily opened, read-only view of one `state.db`."""

    def __init__(
        self, path: Path, *, debug: Callable[[str], None] | None = None, busy_timeout: float = BUSY_TIMEOUT
    ) -> None:
        self.path = path
        self.debug = debug
        self.busy_timeout = busy_timeout
        self._conn: sqlite3.Connection | None = None
        self._failure: StoreUnavailable | None = None
        self._session_columns: tuple[str, ...] = ()
        self._ledger: bool | None = None  # has the store a usable `async_delegations` table?
        self._preload: threading.Thread | None = None
        # Opening and closing are one at a time: a loop's thread (`tui`) may still ask while
        # the command closes the store, and a closed store never opens again (no connection
        # is left behind for the collector).
        self._opening = threading.Lock()
        self._closed = False
        if "sqlite3" not in sys.modules and os.path.exists(path):
            self._preload = threading.Thread(
                target=importlib.import_module, args=("sqlite3",), name="sqlite3-import", daemon=True
            )
            self._preload.start()

    def _connect(self) -> sqlite3.Connection:
        mode = uri_mode(self.path)
        import sqlite3  # lazy: SQLite, only when a store is read

        uri = Path(os.path.abspath(self.path)).as_uri() + "?" + mode
        try:
            conn = sqlite3.connect(
                uri, uri=True, timeout=self.busy_timeout, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise _classify(exc) from None
        try:
            conn.execute("PRAGMA query_only = 1")
            sessions = {row[1] for row in conn.execute("PRAGMA table_info(sessions)")}
            messages = {row[1] for row in conn.execute("PRAGMA table_info(messages)")}
            indexed = any(
                (first := conn.execute(f"PRAGMA index_info({_quoted(row[1])})").fetchone()) is not None
                and first[2] == "parent_session_id"
                for row in conn.execute("PRAGMA index_list(sessions)").fetchall()
            )
        except sqlite3.Error as exc:
            conn.close()
            raise _classify(exc) from None
        missing = [f"sessions.{c}" for c in SESSION_COLUMNS if c not in sessions]
        missing += [f"messages.{c}" for c in MESSAGE_COLUMNS if c not in messages]
        if missing or not indexed:
            conn.close()
            what = f"missing {', '.join(missing)}" if missing else "no index on sessions.parent_session_id"
            raise StoreUnavailable("unknown_columns", what)
        self._session_columns = SESSION_COLUMNS + (("profile_name",) if "profile_name" in sessions else ())
        return conn

    def _open(self) -> sqlite3.Connection:
        with self._opening:
            if self._closed:
                raise StoreUnavailable("closed", "the run is ending")
            if self._failure is not None:
                raise self._failure
            if self._conn is None:
                started = time.perf_counter()
                try:
                    self._conn = self._connect()
                except StoreUnavailable as exc:
                    raise self._failed(exc, f"store {self.path}: unavailable ({exc.reason})") from None
                self._say(f"store {self.path}: opened read-only in {_ms(started)}")
            return self._conn

    def _say(self, line: str) -> None:
        if self.debug is not None:
            self.debug(line)

    def _failed(self, failure: StoreUnavailable, line: str) -> StoreUnavailable:
        """A lock held past the busy timeout (another connection writing) passes: the next
        query asks again. Any other failure is the store's for the rest of the run."""
        self._failure = None if failure.reason == "locked" else failure
        self._say(line)
        return failure

    def _query(self, name: str, sql: str, args: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        conn = self._open()
        import sqlite3  # lazy: SQLite, only when a store is read

        started = time.perf_counter()
        try:
            rows = conn.execute(sql, args).fetchall()
        except sqlite3.Error as exc:
            failure = _classify(exc)
            raise self._failed(
                failure, f"store query {name}: failed ({failure.reason}) after {_ms(started)}"
            ) from None
        self._say(f"store query {name}: {len(rows)} rows in {_ms(started)}")
        return rows

    def _sessions(self, name: str, condition: str, args: tuple[Any, ...]) -> list[StoreSession]:
        """The `sessions` rows that meet `condition` with a text id, each column its type or None."""
        self._open()  # the columns are known once the store is open
        sql = f"SELECT {', '.join(self._session_columns)} FROM sessions WHERE {condition}"  # noqa: S608 (known column names)
        out: list[StoreSession] = []
        for row in self._query(name, sql, args):
            values = dict(zip(self._session_columns, row, strict=False))
            sid = _text(values.get("id"))
            if sid is not None:
                out.append(
                    StoreSession(
                        id=sid,
                        parent_session_id=_text(values.get("parent_session_id")),
                        model_config=_text(values.get("model_config")),
                        started_at=_number(values.get("started_at")),
                        ended_at=_number(values.get("ended_at")),
                        end_reason=_text(values.get("end_reason")),
                        source=_text(values.get("source")),
                        profile_name=_text(values.get("profile_name")),
                    )
                )
        return out

    def children(self, session_id: str) -> list[StoreSession]:
        """The rows whose `parent_session_id` is `session_id`, newest first: at most
        `MAX_CHILDREN + 1`, so a caller that gets more knows the bound cut older ones off."""
        order = "ORDER BY started_at DESC, id DESC LIMIT ?"
        return self._sessions(
            "children", f"parent_session_id = ? {order}", (session_id, lineage.MAX_CHILDREN + 1)
        )

    def knows(self, session_id: str) -> bool:
        """Does the store hold this session (primary key)? A store that does not know the
        session being read is not this dashboard's store."""
        return bool(self._query("knows", "SELECT 1 FROM sessions WHERE id = ? LIMIT 1", (session_id,)))

    def first_user_text(self, session_id: str) -> str | None:
        """The text of the session's first `user` row (indexed on session_id, timestamp)."""
        rows = self._query(
            "first_user",
            "SELECT content FROM messages WHERE session_id = ? AND role = 'user' ORDER BY timestamp LIMIT 1",
            (session_id,),
        )
        return _text(rows[0][0]) if rows else None

    def recent_with_parent(self, scan: int = RECENT_SCAN) -> list[StoreSession]:
        """The newest `scan` rows that have a parent, newest first (`parents`, completion)."""
        return self._sessions(
            "recent", "parent_session_id IS NOT NULL ORDER BY started_at DESC LIMIT ?", (scan,)
        )

    def delegation(self, delegation_id: str) -> LedgerRecord | None:
        """Hermes' `async_delegations` record of one background unit (its primary key), or
        None: no such record, or no such table, column or key (a Hermes without the ledger)."""
        if self._ledger is None:
            info = self._query("ledger", "PRAGMA table_info(async_delegations)", ())
            names = {row[1] for row in info}
            keys = [row[1] for row in info if row[5]]
            self._ledger = keys == ["delegation_id"] and all(c in names for c in LEDGER_COLUMNS)
            if not self._ledger:
                self._say("store: no usable async_delegations table; no outcome is proposed")
        if not self._ledger:
            return None
        rows = self._query(
            "delegation",
            f"SELECT {', '.join(LEDGER_COLUMNS)} FROM async_delegations WHERE delegation_id = ? LIMIT 1",  # noqa: S608 (known column names)
            (delegation_id,),
        )
        if not rows:
            return None
        values = [_text(value) for value in rows[0]]
        return LedgerRecord(values[0] or "", *values[1:])

    def close(self) -> None:
        """Close the connection; every later query fails (`closed`), none reopens it."""
        with self._opening:
            self._closed = True
            if self._conn is not None:
                self._conn.close()
                self._conn = None
        if self._preload is not None:
            self._preload.join()  # never leave an import running into interpreter shutdown
            self._preload = None


def _quoted(name: object) -> str:
    return '"' + str(name).replace('"', '""') + '"'


def _ms(started: float) -> str:
    return f"{(time.perf_counter() - started) * 1000:.1f} ms"


HEADER = b"SQLite format 3\x00"


def uri_mode(path: Path) -> str:
    """The URI mode, or a refusal before SQLite touches anything: a missing, unreadable or
    non-SQLite file, or a WAL database whose `-wal` holds commits but has no `-shm`."""
    header = _read_header(path)
    if len(header) < 100 or not header.startswith(HEADER):
        raise StoreUnavailable("corrupt", "the store is not an SQLite database")
    wal = header[18] == 2 or header[19] == 2
    if not wal or os.path.exists(f"{path}-shm"):
        return "mode=ro"
    try:
        pending = os.path.getsize(f"{path}-wal")
    except FileNotFoundError:
        pending = 0
    except OSError:
        raise StoreUnavailable("permission", "the store's -wal file cannot be read") from None
    if pending:
        raise StoreUnavailable("needs_write", "a WAL store with a -wal file but no -shm file")
    # No writer has it open (SQLite removes -wal/-shm when the last connection closes).
    return "mode=ro&immutable=1"


def _read_header(path: Path) -> bytes:
    """The database header of a regular file: its first 100 bytes (fewer when shorter)."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise StoreUnavailable("no_file", "no store file") from None
    except PermissionError:
        raise StoreUnavailable("permission", "the store cannot be opened") from None
    except OSError:
        raise StoreUnavailable("no_file", "the store path cannot be read") from None
    if not stat.S_ISREG(info.st_mode):
        raise StoreUnavailable("corrupt", "the store path is not a regular file")
    try:
        with open(path, "rb") as handle:
            return handle.read(100)
    except PermissionError:
        raise StoreUnavailable("permission", "the store cannot be read") from None
    except OSError:
        raise StoreUnavailable("corrupt", "the store cannot be read") from None
