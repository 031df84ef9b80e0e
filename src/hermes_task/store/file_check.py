"""The store file checked before SQLite touches it (no sqlite3 here: `store.py` is its only user).

Invariant: nothing is created, written or modified. A missing or unreadable file, something
that is not an SQLite database, or a WAL database whose `-shm` file is missing while its
`-wal` holds commits (SQLite would have to create the `-shm`) is refused with a
`StoreUnavailable` reason; otherwise the answer is the URI mode to open it with.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from hermes_task.core.lineage import StoreUnavailable

HEADER = b"SQLite format 3\x00"


def uri_mode(path: Path) -> str:
    """The URI mode, or a refusal before SQLite touches anything: a missing or unreadable
    file, something that is not an SQLite database, or a WAL database whose `-shm` file is
    missing while its `-wal` holds commits (SQLite would create the `-shm`)."""
    _check_regular(path)
    header = _read_header(path)
    if len(header) < 100 or not header.startswith(HEADER):
        raise StoreUnavailable("corrupt", "the store is not an SQLite database")
    wal = header[18] == 2 or header[19] == 2
    if not wal or os.path.exists(f"{path}-shm"):
        return "mode=ro"
    return _wal_without_shm(path)


def _check_regular(path: Path) -> None:
    """The path names a regular file this user can stat."""
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


def _read_header(path: Path) -> bytes:
    """The database header: the file's first 100 bytes (fewer when it is shorter)."""
    try:
        with open(path, "rb") as handle:
            return handle.read(100)
    except PermissionError:
        raise StoreUnavailable("permission", "the store cannot be read") from None
    except OSError:
        raise StoreUnavailable("corrupt", "the store cannot be read") from None


def _wal_without_shm(path: Path) -> str:
    """A WAL database with no `-shm` file: immutable when its `-wal` holds nothing, else
    refused (SQLite would have to create the `-shm`)."""
    try:
        pending = os.path.getsize(f"{path}-wal")
    except FileNotFoundError:
        pending = 0
    except OSError:
        raise StoreUnavailable("permission", "the store's -wal file cannot be read") from None
    if pending:
        raise StoreUnavailable("needs_write", "a WAL store with a -wal file but no -shm file")
    # No writer has it open (SQLite removes -wal/-shm when the last connection closes):
    # the file holds every commit; a writer that starts now appends to a new -wal only.
    return "mode=ro&immutable=1"


__all__ = ["HEADER", "uri_mode"]
