"""`older --all` streamed: the tip segment read oldest-first, page by page, in bounded memory.

After the first refresh the window holds the segment's newest page (rows as of that read).
`stream_pages` then reads the same segment from offset 0 with `order=oldest`, each later page
re-reading the previous page's last row as its anchor (offset = previous end - 1), until the
page that holds the newest page's first row (the boundary): rows before it are yielded as
they are proven, then the held newest page. Oldest-first offsets do not move when the task
writes meanwhile (new rows go after the boundary, where the snapshot ends), so no row is
skipped or repeated; a page without its anchor (rows removed or inserted before it) is a
failure, never guessed around.

Whether a response pages oldest-first is decided per response, never by version label: a
paginated page whose `order` echo is `oldest` (iot, 0.20) or absent (0.19.x ignores `order`
and pages from the oldest row; 0.18.x with pagination likewise). The first page decides
whether streaming holds at all (`Unstreamable`, nothing written yet); a later page that
stops paging oldest-first is a failure.

Memory: one page of rows, the held newest page, and what deduplication needs: the anchor's
key, and the `message_uid`s seen (a row compaction or rotation copied keeps its uid; the
earliest copy is shown, as `core/history.compose` does). Rows are never kept after they
were handed on.

Preconditions (`streamable`): one proven segment, its newest page merged, older rows left
(several segments: `reading/lineage_stream.py`, which shares `oldest_pages`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from msgspec import Struct, field
from msgspec.structs import replace

from hermes_task.core.documents import Coverage, Row, TranscriptDoc, WarningItem
from hermes_task.core.lineage import Cursor, View
from hermes_task.core.projection import project, states_goal
from hermes_task.core.window import RowKey, key_of
from hermes_task.core.wire import MAX_LIMIT, MessagesPage, WireMessage
from hermes_task.failures import Code, HermesError
from hermes_task.reading.api import DashboardAPI
from hermes_task.reading.reader import TaskReader
from hermes_task.reading.transcript import history_warnings, merge_warnings, state_warnings

STREAM_LIMIT = MAX_LIMIT


class Unstreamable(Exception):
    """The first oldest-first read showed the backend cannot page that way (nothing shown yet)."""


class StreamStats(Struct):
    """What the stream did: `pages` read, `unique` identities streamed (hidden rows included),
    `shown` rows per segment, `foreign` identities of sessions outside the lineage, and
    `held_max`: the most rows held at once (one page plus the newest page); `older`: the
    identities streamed before the newest page (0: the newest page held every row)."""

    pages: int = 0
    unique: int = 0
    older: int = 0
    foreign: int = 0
    held_max: int = 0
    shown: Counter[str] = field(default_factory=Counter)


def streamable(reader: TaskReader) -> bool:
    """Can `older --all` stream this task: one proven segment whose newest page is merged
    (the boundary) and whose older rows are not all held yet."""
    window = reader.window
    return (
        len(reader.path) == 1
        and window.canonical == reader.path[0]
        and not window.fresh
        and window.coverage > 0
        and not reader.reached_start
    )


def _oldest_first(page: MessagesPage) -> bool:
    if not page.paginated:
        return False
    order = page.pagination.order
    return not page.ordered or order == "oldest"


class Redirected(Exception):
    """A segment's first oldest-first page answered for another session (nothing of it read)."""


def oldest_pages(
    client: DashboardAPI,
    sid: str,
    stats: StreamStats,
    *,
    limit: int,
    boundary: RowKey | None,
    redirected: bool = False,
    held: int = 0,
) -> Iterator[list[WireMessage]]:
    """The raw rows of segment `sid`'s pages from offset 0, oldest first, one list per page;
    each later page re-reads the previous page's last row as its anchor (not repeated). With
    `boundary`: up to (not including) that row, which must come; without: to a short page.
    `redirected`: a first page of another session raises `Redirected` (else a mismatch).
    `held`: rows the caller holds meanwhile (`stats.held_max` counts them with each page).
    Raises `Unstreamable` when the first page does not page oldest-first."""
    offset = 0
    anchor: RowKey | None = None
    while True:
        page = _read(
            client, sid, stats, offset=offset, limit=limit, first=anchor is None, redirected=redirected
        )
        msgs = list(page.messages)
        stats.held_max = max(stats.held_max, len(msgs) + held)
        keys = [key_of(m) for m in msgs]
        start = 0
        if anchor is not None:
            if not keys or keys[0] != anchor:
                raise HermesError(
                    Code.IDENTITY_MISMATCH,
                    "older rows were added or removed while streaming; run the command again",
                )
            start = 1
        out: list[WireMessage] = []
        seen: set[RowKey] = set()
        for msg, key in zip(msgs[start:], keys[start:], strict=True):
            if key == boundary:
                yield out
                return
            if key not in seen:
                seen.add(key)
                out.append(msg)
        yield out
        returned = page.pagination.returned
        if returned < limit or not msgs:
            if boundary is None:
                return
            raise HermesError(
                Code.IDENTITY_MISMATCH,
                "the newest page's rows were not found paging oldest-first; run the command again",
            )
        anchor = keys[-1]
        offset += returned - 1


def _read(
    client: DashboardAPI,
    sid: str,
    stats: StreamStats,
    *,
    offset: int,
    limit: int,
    first: bool,
    redirected: bool,
) -> MessagesPage:
    page = client.messages(sid, offset=offset, limit=limit, order="oldest")
    if page.session_id != sid:
        if first and redirected:
            raise Redirected
        raise HermesError(Code.IDENTITY_MISMATCH, "the segment changed while streaming older rows")
    if not _oldest_first(page):
        if first:  # nothing of this segment read: the caller decides
            raise Unstreamable
        raise HermesError(Code.INCOMPATIBLE, "the dashboard stopped paging oldest-first while streaming")
    stats.pages += 1
    return page


class _Stream:
    def __init__(self, reader: TaskReader, stats: StreamStats, limit: int) -> None:
        self.reader = reader
        self.stats = stats
        self.limit = limit
        self.uids: set[str] = set()
        window = reader.window
        self.sid = window.canonical or reader.path[0]
        self.held = [window.messages[k] for k in window.keys[window.block_start :]]
        self.boundary = key_of(self.held[0])

    def _keep(self, msg: WireMessage) -> Row | None:
        """The row to show for `msg` (None: hidden, foreign or a copy already shown)."""
        if msg.session_id != self.sid:
            self.stats.foreign += 1
            return None
        uid = msg.message_uid
        if uid:
            if uid in self.uids:
                return None
            self.uids.add(uid)
        self.stats.unique += 1
        row = project(msg)
        if row is not None:
            self.stats.shown[row.session_id] += 1
        return row

    def pages(self) -> Iterator[list[Row]]:
        raw = oldest_pages(
            self.reader.client,
            self.sid,
            self.stats,
            limit=self.limit,
            boundary=self.boundary,
            held=len(self.held),
        )
        for msgs in raw:
            yield [row for msg in msgs if (row := self._keep(msg)) is not None]
        self.stats.older = self.stats.unique
        last = [row for msg in self.held if (row := self._keep(msg)) is not None]
        if last:
            yield last


def stream_pages(reader: TaskReader, stats: StreamStats, *, limit: int | None = None) -> Iterator[list[Row]]:
    """The shown rows of the tip segment, oldest first, one list per page (see the module).
    Raises `Unstreamable` on the first page only, `HermesError` for a failure."""
    return _Stream(reader, stats, limit or STREAM_LIMIT).pages()


def goal_of(rows: list[Row]) -> str | None:
    """The goal from the segment's first page: its first user text row (`goal_in`'s rule)."""
    for row in rows:
        if states_goal(row):
            return row.text
    return None


def finish(
    reader: TaskReader,
    doc: TranscriptDoc,
    stats: StreamStats,
    warnings: list[WarningItem],
    cur: Cursor | None = None,
) -> TranscriptDoc:
    """The streamed document with rows left out (`rows` is written element by element):
    each segment's `rows_shown`, coverage (read to `cur`: the lineage's start unless given,
    nothing older either way) and the warnings as `TaskReader.document` states them there."""
    cold = reader.continues_parent
    cur = cur or Cursor("start", None, reader.window)
    view = View((), {}, stats.foreign)
    tip = reader.tip
    assert tip is not None
    task = replace(
        doc.task,
        goal=reader.goal,
        segments=[replace(s, rows_shown=stats.shown[s.id]) for s in doc.task.segments],
    )
    return replace(
        doc,
        task=task,
        rows=[],
        coverage=Coverage(
            unique_rows=stats.unique, has_older=False, at_start=cur.kind == "start" and cold is False
        ),
        warnings=merge_warnings(
            state_warnings(warnings, partial=tip.end_reason == "compression"),
            history_warnings(view, cur, cold_open=cold),
        ),
    )
