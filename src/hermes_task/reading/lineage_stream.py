"""`older --all` of a lineage of several proven segments, in bounded memory (`reading/stream.py`
streams one segment).

The windowed path (`TaskReader.read_older`, `core/lineage.py`) pages the tip segment to
its start, then reads an earlier segment on its own only when the newer windows hold fewer of
its active rows than its detail counts, and shows the earlier windows (oldest segment first),
then the tip window, each identity once, a `message_uid` at its earliest segment's copy. Which
segments are read, and so the order of the first rows, is known only once every newer window
has been read to its start, and a backend that merges the lineage into a segment's pages (iot)
interleaves the segments' rows there. So nothing can be written before the last page is read.

Here every window is read oldest-first (`stream.oldest_pages`: the tip to its newest page's
first row, an earlier segment to its last row), in the windowed path's order and by its rule,
and its raw rows are spooled to an unlinked temporary file; then the windows are replayed in
display order through the same de-duplication (`lineage_window.shown_once`, which `compose`
applies to windows in memory). Memory holds one page, the newest
page and identities: the keys replayed, each row's content digest (an identity read twice
with different contents falls back to the windowed path, which shows the newest read), the
earliest segment of each `message_uid`, and the earlier segments' active keys seen in newer
windows (the windowed rule's counts).

Invariants: a segment's rows are read only once it is proven part of the lineage (the proof
ran before); an earlier segment whose first answer names another session, or one the reader
saw redirected, is `blocked` there, as in the windowed path; whatever cannot be decided the
windowed way (a first answer that does not page oldest-first, contents that differ) raises
`Unstreamable` before anything is written.
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Iterator
from typing import IO

import msgspec
from msgspec import Struct, field

from hermes_task.core.documents import Row
from hermes_task.core.lineage import Cursor, earliest, shown_once
from hermes_task.core.projection import project, states_goal
from hermes_task.core.window import RowKey, key_of
from hermes_task.core.wire import WireMessage
from hermes_task.reading import stream
from hermes_task.reading.reader import TaskReader
from hermes_task.reading.stream import Redirected, StreamStats, Unstreamable, oldest_pages

_ENCODE = msgspec.json.Encoder()
_DECODE = msgspec.json.Decoder(WireMessage)


class _Spool:
    """The raw rows of one segment's window, one JSON line each, in an unlinked file."""

    def __init__(self, sid: str) -> None:
        self.sid = sid
        self.file: IO[bytes] = tempfile.TemporaryFile("w+b")  # noqa: SIM115 (closed by `LineageRows.close`)
        self.rows = 0

    def add(self, line: bytes) -> None:
        self.file.write(line)
        self.file.write(b"\n")
        self.rows += 1

    def messages(self) -> Iterator[WireMessage]:
        self.file.flush()
        self.file.seek(0)
        for line in self.file:
            yield _DECODE.decode(line)


class Plan(Struct):
    """What the windowed path would read: the windows in display order (earlier segments
    oldest first, then the tip) and the segment its history stops at when it is blocked
    (None: it reaches the start)."""

    windows: list[str] = field(default_factory=list)
    blocked: str | None = None


class LineageRows:
    """The windows of a lineage, read and spooled (`read`), then replayed (`pages`)."""

    def __init__(self, reader: TaskReader, stats: StreamStats, limit: int | None = None) -> None:
        self.reader = reader
        self.stats = stats
        self.limit = limit or stream.STREAM_LIMIT
        self.path = reader.path
        self.index = {sid: i for i, sid in enumerate(self.path)}
        self.spools: dict[str, _Spool] = {}
        self.digests: dict[RowKey, bytes] = {}
        self.earliest: dict[str, int] = {}  # message_uid -> the earliest segment holding it
        self.held: dict[str, set[RowKey]] = {sid: set() for sid in self.path[:-1]}
        self.plan = Plan()
        self.goal: str | None = None
        window = reader.window
        self.newest = [window.messages[k] for k in window.keys[window.block_start :]]

    # -- reading ----------------------------------------------------------------------------

    def read(self) -> Plan:
        """Read every window the windowed path would, tip first (see the module)."""
        tip = self.path[-1]
        self._window(tip, self._pages(tip, key_of(self.newest[0])), self.newest)
        read = [tip]
        counts = {sid: d.message_count for sid, d in self.reader.details.items()}
        for sid in reversed(self.path[:-1]):
            have, total = len(self.held[sid]), counts.get(sid)
            if have and (total is None or have >= total):
                continue  # a newer window holds its rows: not read on its own
            if sid in self.reader.redirects:
                self.plan = Plan(windows=read[::-1], blocked=sid)
                return self.plan
            try:
                self._window(sid, self._pages(sid, None), [])
            except Redirected:
                self.spools.pop(sid).file.close()
                self.plan = Plan(windows=read[::-1], blocked=sid)
                return self.plan
            read.append(sid)
        self.plan = Plan(windows=read[::-1])
        return self.plan

    def _pages(self, sid: str, boundary: RowKey | None) -> Iterator[list[WireMessage]]:
        """Segment `sid` oldest first (`stream.oldest_pages`); an earlier segment (no
        `boundary`) whose first answer names another session raises `Redirected`."""
        client, held = self.reader.client, len(self.newest)
        redirected = boundary is None
        return oldest_pages(
            client, sid, self.stats, limit=self.limit, boundary=boundary, redirected=redirected, held=held
        )

    def _window(self, sid: str, pages: Iterator[list[WireMessage]], last: list[WireMessage]) -> None:
        spool = self.spools[sid] = _Spool(sid)
        seen: set[RowKey] = set()
        for msgs in pages:
            for msg in msgs:
                self._add(spool, msg, seen)
        for msg in last:
            self._add(spool, msg, seen)

    def _add(self, spool: _Spool, msg: WireMessage, seen: set[RowKey]) -> None:
        """One raw row of `spool`'s window (a window holds an identity once, first place)."""
        key = key_of(msg)
        if key in seen:
            return
        seen.add(key)
        line = _ENCODE.encode(msg)
        digest = hashlib.blake2b(line, digest_size=16).digest()
        if self.digests.setdefault(key, digest) != digest:
            raise Unstreamable  # read twice with different contents: the windowed path decides
        spool.add(line)
        at = self.index.get(msg.session_id)
        if at is None:
            return
        if msg.session_id in self.held and (msg.active is None or bool(msg.active)):
            self.held[msg.session_id].add(key)
        earliest(self.earliest, msg.message_uid, at)

    # -- replaying --------------------------------------------------------------------------

    def _replay(self) -> Iterator[tuple[WireMessage, bool]]:
        """Every identity of the windows in display order, once: (row, shown)
        (`lineage_window.shown_once`, the rule `compose` applies in memory)."""
        current: list[WireMessage] = []  # the message of the entry `shown_once` took last

        def entries() -> Iterator[tuple[RowKey, str | None]]:
            for sid in self.plan.windows:
                for msg in self.spools[sid].messages():
                    current[:] = [msg]
                    yield key_of(msg), msg.message_uid

        for _key, shown in shown_once(entries(), self.index, dict(self.earliest)):
            yield current[0], shown

    def count(self) -> None:
        """The stats and the goal, before any row is written."""
        stats, root = self.stats, self.path[0]
        for msg, shown in self._replay():
            if not shown:
                stats.foreign += 1
                continue
            stats.unique += 1
            row = project(msg)
            if row is None:
                continue
            stats.shown[row.session_id] += 1
            if self.goal is None and msg.session_id == root and states_goal(row):
                self.goal = row.text

    def pages(self) -> Iterator[list[Row]]:
        """The shown rows in display order, `limit` at a time."""
        out: list[Row] = []
        for msg, shown in self._replay():
            row = project(msg) if shown else None
            if row is not None:
                out.append(row)
                if len(out) >= self.limit:
                    yield out
                    out = []
        if out:
            yield out

    def read_so_far(self) -> None:
        """After a failure: replay the windows read so far, in display order."""
        self.plan = Plan(windows=[sid for sid in self.path if sid in self.spools])

    def cursor(self) -> Cursor:
        """Where the windowed history stops (`coverage`, `history_warnings`)."""
        if self.plan.blocked is not None:
            return Cursor("blocked", self.plan.blocked, self.reader.window)
        return Cursor("start", self.path[0], self.reader.window)

    def close(self) -> None:
        for spool in self.spools.values():
            spool.file.close()
        self.spools.clear()


def lineage_streamable(reader: TaskReader) -> bool:
    """A lineage of several proven segments whose tip's newest page is merged (the boundary),
    with older rows left, no earlier segment read yet, and every segment's detail read (the
    windowed path would read a missing one, and the document shows it)."""
    window = reader.window
    return (
        len(reader.path) > 1
        and all(sid in reader.details for sid in reader.path)
        and window.canonical == reader.path[-1]
        and not window.fresh
        and window.coverage > 0
        and not reader.earlier.windows
        and not reader.earlier.blocked
        and not reader.reached_start
    )


__all__ = ["LineageRows", "Plan", "lineage_streamable"]
