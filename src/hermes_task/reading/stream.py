"""`older --all` streamed in bounded memory (`stream_pages`, `LineageRows`), and the load-older
batches over `TaskReader.read_older` (`read_batches`). Pure of typer and rich.

`stream_pages` (`streamable`: one proven segment, its newest page merged, older rows left): the
segment is read again from offset 0 with `order=oldest`, each later page re-reading the previous
page's last row as its anchor, until the page holding the newest page's first row (the
boundary); rows before it are yielded as they are proven, then the held newest page.
Oldest-first offsets do not move when the task writes meanwhile (new rows go after the
boundary), so no row is skipped or repeated; a page without its anchor is a failure, never
guessed around. A response pages oldest-first when it is paginated and its `order` echo is
`oldest` (iot, 0.20) or absent (0.19.x, and 0.18.x with pagination, page from the oldest row
whatever `order` says): decided per response, never by version label. The first page decides
whether streaming holds at all (`Unstreamable`, nothing written yet); a later page that stops
paging oldest-first is a failure. Memory: one page, the held newest page, the anchor's key and
the `message_uid`s seen (the earliest copy of a uid is shown, as `core/lineage.compose` does).

`LineageRows` (`lineage_streamable`: several proven segments): the windowed path
(`TaskReader.read_older`) pages the tip to its start, reads an earlier segment on its own only
when the newer windows hold fewer of its active rows than its detail counts, and shows the
earlier windows (oldest segment first), then the tip window, each identity once, a
`message_uid` at its earliest segment's copy. Which segments are read is known only once every
newer window was read to its start, and a backend that merges the lineage into a segment's
pages (iot) interleaves the segments' rows: nothing can be written before the last page is
read. So each window is read oldest-first (`oldest_pages`), in the windowed path's order and by
its rule, spooled to an unlinked temporary file, then replayed in display order through
`shown_once` (the rule `compose` applies in memory). Memory: one page, the newest page and
identities (keys, each row's content digest, the earliest segment of each `message_uid`, the
earlier segments' active keys seen in newer windows). Invariants: a segment's rows are read
only once it is proven; an earlier segment whose first answer names another session, or one
the reader saw redirected, is `blocked` there, as in the windowed path; an identity read twice
with different contents, or anything else the windowed way must decide, raises `Unstreamable`
before anything is written.

`read_batches`: a *batch* is what one "Load older" does: one raw page; or, with a text target,
raw pages until that many text rows arrived (`counts_as_text`: user and assistant prose), at
most `MIN_TEXT_PAGES` pages. `--all` is one batch that reads to the start. Every batch also
stops at the visible start, raw exhaustion, or a page that brought no new row. Restarts (the
canonical segment changed, or a page missed its anchor twice) re-read the newest page; they
are not pages and are bounded by `MAX_RESTARTS`. A refresh that found a gap, or a restart, is
a `gap` warning only if the paging ended before the block reached the rows known before it.
"""

from __future__ import annotations

import hashlib
import itertools
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from typing import IO

import msgspec
from msgspec import Struct, field
from msgspec.structs import replace

from hermes_task.core.documents import Coverage, Row, TranscriptDoc, WarningItem, warning
from hermes_task.core.lineage import Cursor, View, earliest, shown_once
from hermes_task.core.projection import counts_as_text, project, states_goal
from hermes_task.core.ui_strings import WarningCode
from hermes_task.core.window import MergeResult, RowKey, Window, key_of
from hermes_task.core.wire import MAX_LIMIT, MessagesPage, WireMessage
from hermes_task.failures import Code, HermesError
from hermes_task.reading.api import DashboardAPI
from hermes_task.reading.reader import TaskReader, history_warnings, merge_warnings, state_warnings

STREAM_LIMIT = MAX_LIMIT


class Unstreamable(Exception):
    """The first oldest-first read showed the backend cannot page that way (nothing shown yet)."""


class StreamStats(Struct):
    pages: int = 0
    unique: int = 0  # identities streamed, hidden rows included
    older: int = 0  # identities streamed before the newest page (0: it held every row)
    foreign: int = 0  # identities of sessions outside the lineage
    held_max: int = 0  # the most rows held at once (one page plus the newest page)
    shown: Counter[str] = field(default_factory=Counter)  # rows shown per segment


def _tip_merged(reader: TaskReader) -> bool:
    """The tip's newest page is merged (the boundary) and its older rows are not all held."""
    window = reader.window
    return (
        window.canonical == reader.path[-1]
        and not window.fresh
        and window.coverage > 0
        and not reader.reached_start
    )


def streamable(reader: TaskReader) -> bool:
    return len(reader.path) == 1 and _tip_merged(reader)


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
    """Segment `sid`'s raw rows oldest first, a list per page (see the module): up to (not
    including) `boundary`, which must come, else to a short page. `redirected`: a first page of
    another session raises `Redirected`; `held`: rows the caller holds (`stats.held_max`)."""
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
    if not page.paginated or (page.ordered and page.pagination.order != "oldest"):
        if first:  # nothing of this segment read: the caller decides
            raise Unstreamable
        raise HermesError(Code.INCOMPATIBLE, "the dashboard stopped paging oldest-first while streaming")
    stats.pages += 1
    return page


def stream_pages(reader: TaskReader, stats: StreamStats, *, limit: int | None = None) -> Iterator[list[Row]]:
    """The shown rows of the tip segment, oldest first, one list per page (see the module)."""
    window = reader.window
    sid = window.canonical or reader.path[0]
    held = [window.messages[k] for k in window.keys[window.block_start :]]
    raw = oldest_pages(
        reader.client, sid, stats, limit=limit or STREAM_LIMIT, boundary=key_of(held[0]), held=len(held)
    )
    uids: set[str] = set()

    def keep(msg: WireMessage) -> Row | None:
        """The row to show for `msg` (None: hidden, foreign or a copy already shown)."""
        if msg.session_id != sid:
            stats.foreign += 1
            return None
        if msg.message_uid:
            if msg.message_uid in uids:
                return None
            uids.add(msg.message_uid)
        stats.unique += 1
        row = project(msg)
        if row is not None:
            stats.shown[row.session_id] += 1
        return row

    def pages() -> Iterator[list[Row]]:
        for msgs in raw:
            yield [row for msg in msgs if (row := keep(msg)) is not None]
        stats.older = stats.unique
        last = [row for msg in held if (row := keep(msg)) is not None]
        if last:
            yield last

    return pages()


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


MIN_TEXT_PAGES = 10
ALL_PAGES = 10_000
MAX_RESTARTS = 3
FINAL_STOPS = frozenset({"start", "no_progress", "restart_bound"})


class Plan(Struct, frozen=True):
    """`batches` None reads to the start (`--all`); `min_text` makes batches text-aware;
    `limit` is the number of older rows asked for per page."""

    batches: int | None = 1
    min_text: int | None = None
    limit: int = 50


class Progress(Struct, frozen=True):
    """After each older page: pages read so far, unique rows known, rows the page added."""

    page: int
    rows: int
    new: int


class PagingOutcome(Struct):
    """What the batches did (`text_rows` is counted only for a text target). `stop` is why the
    last batch ended: `start` (the visible start), `no_progress` (a page added no row),
    `restart_bound`, `page_bound` (the per-batch page bound), `target` (the text target) or
    `page` (one raw page)."""

    pages: int = 0
    new_rows: int = 0
    text_rows: int = 0
    restarts: int = 0
    batches: int = 0
    stop: str = "page"
    warnings: list[WarningItem] = field(default_factory=list)


class _Run(Struct):
    reader: TaskReader
    plan: Plan
    on_page: Callable[[Progress], None] | None
    out: PagingOutcome = field(default_factory=PagingOutcome)
    pending: tuple[RowKey, ...] | None = None  # the block before a gap or restart

    def batch(self) -> str:
        """One batch; returns why it ended (`FINAL_STOPS` reasons end all paging)."""
        plan, reader = self.plan, self.reader
        bound = ALL_PAGES if plan.batches is None else MIN_TEXT_PAGES if plan.min_text else 1
        pages = text = 0
        while True:
            if reader.reached_start:
                return "start"
            if pages >= bound:
                return "page_bound" if plan.batches is None or plan.min_text else "page"
            before = reader.window
            result = reader.read_older(plan.limit)
            if result is None:
                return "start"
            if self._absorb(before, result):
                return "restart_bound"
            if result.stale or not result.returned:
                continue
            pages += 1
            text += self._count_page(result)
            stop = self._page_stop(result, text)
            if stop is not None:
                return stop

    def _absorb(self, before: Window, result: MergeResult) -> bool:
        """Take a read's new rows, warnings, resets and restarts into the outcome; True when
        the restarts passed `MAX_RESTARTS`."""
        out = self.out
        out.new_rows += len(result.new_keys)
        out.warnings += [w for w in result.warnings if w.code != "gap"]
        same = before.canonical == result.window.canonical and before.coverage
        if (result.gap or result.restarted) and self.pending is None and same:
            self.pending = before.keys[before.block_start :]
        if result.restarted or result.stale:
            out.restarts += 1
            return out.restarts > MAX_RESTARTS
        return False

    def _count_page(self, result: MergeResult) -> int:
        """Count a page that returned rows (and its text rows, for a text target), report it
        to `on_page`; returns its text rows."""
        out = self.out
        out.pages += 1
        found = 0
        if self.plan.min_text is not None:
            rows = (project(result.window.messages[key]) for key in result.new_keys)
            found = sum(1 for row in rows if row is not None and counts_as_text(row))
        out.text_rows += found
        if self.on_page is not None:
            self.on_page(Progress(page=out.pages, rows=len(result.window.keys), new=len(result.new_keys)))
        return found

    def _page_stop(self, result: MergeResult, text: int) -> str | None:
        """Why the batch ends after a counted page (`text` text rows in it so far), or None."""
        plan = self.plan
        if self.reader.reached_start:
            return "start"
        if not result.new_keys and not result.window.at_start:
            # A page of its anchor alone that reached its segment's start is progress: the
            # next read goes on to the segment before it.
            return "no_progress"
        if plan.min_text is not None and plan.batches is not None and text >= plan.min_text:
            return "target"
        return None

    def run(self) -> PagingOutcome:
        out, plan = self.out, self.plan
        while plan.batches is None or out.batches < plan.batches:
            out.batches += 1
            out.stop = self.batch()
            if out.stop in FINAL_STOPS or plan.batches is None:
                break
        window = self.reader.window
        if self.pending is not None and not set(self.pending) & set(window.keys[window.block_start :]):
            out.warnings.append(warning(WarningCode.gap))
        bound = {
            "page_bound": f"{out.pages} older pages read"
            if plan.batches is None
            else f"{MIN_TEXT_PAGES} pages without {plan.min_text} text rows",
            "restart_bound": f"the transcript changed {out.restarts} times while paging",
            "no_progress": "an older page brought no new row",
        }.get(out.stop)
        if bound is not None:
            out.warnings.append(warning(WarningCode.bound_reached, bound))
        return out


def read_batches(
    reader: TaskReader, plan: Plan, *, on_page: Callable[[Progress], None] | None = None
) -> PagingOutcome:
    """Read `plan` older batches into `reader.window` (after its first refresh).

    Invariants: rows are only ever added to the window (unique by identity, server order);
    every stop before the start leaves `window.has_older` true; a text target counts only
    rows that older pages added.
    """
    return _Run(reader, plan, on_page).run()


def combine_warnings(*groups: Iterable[WarningItem]) -> list[WarningItem]:
    """Warnings in order of first appearance, one per code."""
    out: dict[str, WarningItem] = {}
    for item in itertools.chain(*groups):
        out.setdefault(item.code, item)
    return list(out.values())


_ENCODE = msgspec.json.Encoder()
_DECODE = msgspec.json.Decoder(WireMessage)


def _spooled(spool: IO[bytes]) -> Iterator[WireMessage]:
    spool.flush()
    spool.seek(0)
    for line in spool:
        yield _DECODE.decode(line)


class LineagePlan(Struct):
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
        self.limit = limit or STREAM_LIMIT
        self.path = reader.path
        self.index = {sid: i for i, sid in enumerate(self.path)}
        self.spools: dict[str, IO[bytes]] = {}  # each window's raw rows, a JSON line each, unlinked
        self.digests: dict[RowKey, bytes] = {}
        self.earliest: dict[str, int] = {}  # message_uid -> the earliest segment holding it
        self.held: dict[str, set[RowKey]] = {sid: set() for sid in self.path[:-1]}
        self.plan = LineagePlan()
        self.goal: str | None = None
        window = reader.window
        self.newest = [window.messages[k] for k in window.keys[window.block_start :]]

    def read(self) -> LineagePlan:
        """Every window the windowed path would read, tip first (see the module)."""
        tip = self.path[-1]
        self._window(tip, key_of(self.newest[0]), self.newest)
        read, blocked = [tip], None
        counts = {sid: d.message_count for sid, d in self.reader.details.items()}
        for sid in reversed(self.path[:-1]):
            have, total = len(self.held[sid]), counts.get(sid)
            if have and (total is None or have >= total):
                continue  # a newer window holds its rows: not read on its own
            if sid in self.reader.redirects:
                blocked = sid
                break
            try:
                self._window(sid, None, [])
            except Redirected:
                self.spools.pop(sid).close()
                blocked = sid
                break
            read.append(sid)
        self.plan = LineagePlan(windows=read[::-1], blocked=blocked)
        return self.plan

    def _window(self, sid: str, boundary: RowKey | None, last: list[WireMessage]) -> None:
        """Segment `sid` oldest first (`oldest_pages`), then `last`, spooled; an earlier segment
        (no `boundary`) whose first answer names another session raises `Redirected`."""
        spool = self.spools[sid] = tempfile.TemporaryFile("w+b")  # noqa: SIM115 (closed by `close`)
        pages = oldest_pages(
            self.reader.client,
            sid,
            self.stats,
            limit=self.limit,
            boundary=boundary,
            redirected=boundary is None,
            held=len(self.newest),
        )
        seen: set[RowKey] = set()
        for msg in itertools.chain(itertools.chain.from_iterable(pages), last):
            self._add(spool, msg, seen)

    def _add(self, spool: IO[bytes], msg: WireMessage, seen: set[RowKey]) -> None:
        """One raw row of `spool`'s window (a window holds an identity once, first place)."""
        key = key_of(msg)
        if key in seen:
            return
        seen.add(key)
        line = _ENCODE.encode(msg)
        digest = hashlib.blake2b(line, digest_size=16).digest()
        if self.digests.setdefault(key, digest) != digest:
            raise Unstreamable  # read twice with different contents: the windowed path decides
        spool.write(line + b"\n")
        at = self.index.get(msg.session_id)
        if at is None:
            return
        if msg.session_id in self.held and (msg.active is None or bool(msg.active)):
            self.held[msg.session_id].add(key)
        earliest(self.earliest, msg.message_uid, at)

    def _replay(self) -> Iterator[tuple[WireMessage, bool]]:
        """Every identity of the windows in display order, once: (row, shown)
        (`lineage_window.shown_once`, the rule `compose` applies in memory)."""
        current: list[WireMessage] = []  # the message of the entry `shown_once` took last

        def entries() -> Iterator[tuple[RowKey, str | None]]:
            for sid in self.plan.windows:
                for msg in _spooled(self.spools[sid]):
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
        self.plan = LineagePlan(windows=[sid for sid in self.path if sid in self.spools])

    def cursor(self) -> Cursor:
        """Where the windowed history stops (`coverage`, `history_warnings`)."""
        if self.plan.blocked is not None:
            return Cursor("blocked", self.plan.blocked, self.reader.window)
        return Cursor("start", self.path[0], self.reader.window)

    def close(self) -> None:
        for spool in self.spools.values():
            spool.close()
        self.spools.clear()


def lineage_streamable(reader: TaskReader) -> bool:
    """No earlier segment read yet, and every segment's detail read (the windowed path would
    read a missing one, and the document shows it)."""
    return (
        len(reader.path) > 1
        and all(sid in reader.details for sid in reader.path)
        and not reader.earlier.windows
        and not reader.earlier.blocked
        and _tip_merged(reader)
    )
