"""`older --all` in bounded memory (`stream_pages`: one segment; `LineageRows`: several) and the
load-older batches (`read_batches`), by docs/commands.md, `older`. Invariants: a page without its
anchor fails, never guessed around; what the windowed path must decide raises `Unstreamable` before
anything is written; `LineageRows` replays its spools through `shown_once`, as `compose` does.
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

from hermes_task.core.documents import Row, TranscriptDoc, WarningItem, warning
from hermes_task.core.lineage import Cursor, View, earliest, must_read, shown_once
from hermes_task.core.projection import counts_as_text, project, states_goal
from hermes_task.core.ui_strings import WarningCode
from hermes_task.core.window import MergeResult, RowKey, Window, dedupe, key_of
from hermes_task.core.wire import MAX_LIMIT, WireMessage
from hermes_task.failures import Code, HermesError
from hermes_task.reading.api import DashboardAPI
from hermes_task.reading.reader import TaskReader

STREAM_LIMIT = MAX_LIMIT


class Unstreamable(Exception):
    """The first oldest-first read showed the backend cannot page that way (nothing shown yet)."""


class Redirected(Exception):
    """A segment's first oldest-first page answered for another session (nothing of it read)."""


class StreamStats(Struct):
    pages: int = 0
    unique: int = 0  # identities streamed, hidden rows included
    older: int = 0  # identities streamed before the newest page (0: it held every row)
    foreign: int = 0  # identities of sessions outside the lineage
    held_max: int = 0  # the most rows held at once (one page plus the newest page)
    shown: Counter[str] = field(default_factory=Counter)  # rows shown per segment

    def count(self, msg: WireMessage, shown: bool) -> Row | None:
        """Count one identity; its row to show (None: foreign or hidden)."""
        if not shown:
            self.foreign += 1
            return None
        self.unique += 1
        row = project(msg)
        if row is not None:
            self.shown[row.session_id] += 1
        return row


def _tip_merged(reader: TaskReader) -> bool:
    """The tip's newest page is merged (the boundary) and its older rows are not all held."""
    window = reader.window  # coverage > 0: not `fresh`
    return window.canonical == reader.path[-1] and window.coverage > 0 and not reader.reached_start


def streamable(reader: TaskReader) -> bool:
    return len(reader.path) == 1 and _tip_merged(reader)


def lineage_streamable(reader: TaskReader) -> bool:
    """No earlier segment read yet, and every segment's detail read (the document shows it)."""
    return (
        len(reader.path) > 1
        and all(sid in reader.details for sid in reader.path)
        and not reader.earlier
        and not reader.blocked
        and _tip_merged(reader)
    )


def oldest_pages(
    client: DashboardAPI,
    sid: str,
    stats: StreamStats,
    *,
    limit: int,
    boundary: RowKey | None,
    held: int = 0,
) -> Iterator[list[WireMessage]]:
    """Segment `sid`'s raw rows oldest first, a list per page, up to `boundary` (which must come),
    else to a short page (and a first answer for another session is `Redirected`). `held`: rows
    the caller holds (`stats.held_max`)."""
    offset = 0
    anchor: RowKey | None = None
    while True:
        page = client.messages(sid, offset=offset, limit=limit, order="oldest")
        if page.session_id != sid:
            if anchor is None and boundary is None:
                raise Redirected
            raise HermesError(Code.IDENTITY_MISMATCH, "the segment changed while streaming older rows")
        if not page.paginated or (page.ordered and page.pagination.order != "oldest"):
            if anchor is None:  # nothing of this segment read: the caller decides
                raise Unstreamable
            raise HermesError(Code.INCOMPATIBLE, "the dashboard stopped paging oldest-first while streaming")
        stats.pages += 1
        msgs = list(page.messages)
        stats.held_max = max(stats.held_max, len(msgs) + held)
        keys = [key_of(m) for m in msgs]
        if anchor is not None and keys[:1] != [anchor]:
            raise HermesError(
                Code.IDENTITY_MISMATCH,
                "older rows were added or removed while streaming; run the command again",
            )
        start = 0 if anchor is None else 1
        end = keys.index(boundary, start) if boundary in keys[start:] else None
        yield dedupe(msgs[start:end])
        if end is not None:
            return
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


def stream_pages(reader: TaskReader, stats: StreamStats, *, limit: int | None = None) -> Iterator[list[Row]]:
    """The shown rows of the tip segment, oldest first, a list per page, then the newest page."""
    window = reader.window
    sid = window.canonical or reader.path[0]
    held = [window.messages[k] for k in window.keys[window.block_start :]]
    raw = oldest_pages(
        reader.client, sid, stats, limit=limit or STREAM_LIMIT, boundary=key_of(held[0]), held=len(held)
    )
    uids: set[str] = set()
    for msgs in itertools.chain(raw, [held]):
        if msgs is held:
            stats.older = stats.unique
        rows: list[Row] = []
        for msg in msgs:
            ours, uid = msg.session_id == sid, msg.message_uid
            if ours and uid:
                if uid in uids:
                    continue
                uids.add(uid)
            if (row := stats.count(msg, ours)) is not None:
                rows.append(row)
        if rows or msgs is not held:
            yield rows


def finish(
    reader: TaskReader,
    doc: TranscriptDoc,
    stats: StreamStats,
    warnings: list[WarningItem],
    cur: Cursor | None = None,
) -> TranscriptDoc:
    """The streamed document without `rows`, its history read to `cur` (default: the start)."""
    cur = cur or Cursor("start", None, reader.window)
    streamed = reader.document(warnings, View((), {}, stats.foreign), cur)
    segments = [replace(s, rows_shown=stats.shown[s.id]) for s in doc.task.segments]
    task = replace(doc.task, goal=reader.goal, segments=segments)
    coverage = replace(streamed.coverage, unique_rows=stats.unique)
    return replace(doc, task=task, rows=[], coverage=coverage, warnings=streamed.warnings)


MIN_TEXT_PAGES = 10
ALL_PAGES = 10_000
MAX_RESTARTS = 3
FINAL_STOPS = frozenset({"start", "no_progress", "restart_bound"})


class Plan(Struct, frozen=True):
    batches: int | None = 1  # None: to the start (`--all`)
    min_text: int | None = None  # text rows a batch reads for
    limit: int = 50  # older rows asked for per page


class Progress(Struct, frozen=True):
    """After each older page: pages read so far, unique rows known, rows the page added."""

    page: int
    rows: int
    new: int


class PagingOutcome(Struct):
    """What the batches did."""

    pages: int = 0
    new_rows: int = 0
    text_rows: int = 0  # counted only for a text target
    restarts: int = 0
    batches: int = 0
    stop: str = "page"  # why the last batch ended (the `--debug` line's reasons)
    warnings: list[WarningItem] = field(default_factory=list)


class _Run(Struct):
    """Restarts are not pages, bounded by `MAX_RESTARTS`; a gap or a restart is a `gap` warning
    only if paging ended before the block reached the rows known before it (`pending`)."""

    reader: TaskReader
    plan: Plan
    on_page: Callable[[Progress], None] | None
    out: PagingOutcome = field(default_factory=PagingOutcome)
    pending: tuple[RowKey, ...] | None = None

    def batch(self) -> str:
        """One batch (one "Load older"); why it ended (`FINAL_STOPS` reasons end all paging)."""
        plan, reader = self.plan, self.reader
        bound = ALL_PAGES if plan.batches is None else MIN_TEXT_PAGES if plan.min_text else 1
        pages = text = 0
        while not reader.reached_start:
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
            if reader.reached_start:
                return "start"
            if not result.new_keys and not result.window.at_start:  # at_start: the next segment
                return "no_progress"
            if plan.min_text is not None and plan.batches is not None and text >= plan.min_text:
                return "target"
        return "start"

    def _absorb(self, before: Window, result: MergeResult) -> bool:
        """Take a read's new rows, warnings and restarts; True past `MAX_RESTARTS`."""
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
        """Count a page that returned rows, report it to `on_page`; its text rows (if counted)."""
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


def read_batches(
    reader: TaskReader, plan: Plan, *, on_page: Callable[[Progress], None] | None = None
) -> PagingOutcome:
    """Read `plan` older batches into `reader.window` (after its first refresh)."""
    run = _Run(reader, plan, on_page)
    out = run.out
    while plan.batches is None or out.batches < plan.batches:
        out.batches += 1
        out.stop = run.batch()
        if out.stop in FINAL_STOPS or plan.batches is None:
            break
    window = reader.window
    if run.pending is not None and not set(run.pending) & set(window.keys[window.block_start :]):
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


def combine_warnings(*groups: Iterable[WarningItem]) -> list[WarningItem]:
    """Warnings in order of first appearance, one per code."""
    out: dict[str, WarningItem] = {}
    for item in itertools.chain(*groups):
        out.setdefault(item.code, item)
    return list(out.values())


_ENCODE = msgspec.json.Encoder()
_DECODE = msgspec.json.Decoder(WireMessage)


class LineagePlan(Struct):
    """The windows the windowed path would read, in display order, and where it is blocked."""

    windows: list[str] = field(default_factory=list)
    blocked: str | None = None  # None: it reaches the start


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
        self.held: dict[str, set[RowKey]] = {sid: set() for sid in self.path[:-1]}  # active keys seen
        self.plan = LineagePlan()
        self.goal: str | None = None
        self.newest = [reader.window.messages[k] for k in reader.window.keys[reader.window.block_start :]]

    def read(self) -> LineagePlan:
        """Every window the windowed path would read (`core/lineage.must_read`), tip first; one the
        reader saw redirected, or whose first answer names another session, is `blocked`."""
        tip = self.path[-1]
        self._window(tip, key_of(self.newest[0]), self.newest)
        read, blocked = [tip], None
        counts = {sid: d.message_count for sid, d in self.reader.details.items()}
        for sid in reversed(self.path[:-1]):
            if not must_read(len(self.held[sid]), counts.get(sid)):
                continue
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
        """Spool segment `sid` oldest first, then `last`, each identity once (its first place)."""
        spool = self.spools[sid] = tempfile.TemporaryFile("w+b")  # noqa: SIM115 (closed by `close`)
        held = len(self.newest)
        pages = oldest_pages(
            self.reader.client, sid, self.stats, limit=self.limit, boundary=boundary, held=held
        )
        seen: set[RowKey] = set()
        for msg in itertools.chain(itertools.chain.from_iterable(pages), last):
            key = key_of(msg)
            if key in seen:
                continue
            seen.add(key)
            line = _ENCODE.encode(msg)
            digest = hashlib.blake2b(line, digest_size=16).digest()
            if self.digests.setdefault(key, digest) != digest:
                raise Unstreamable  # read twice with different contents: the windowed path decides
            spool.write(line + b"\n")
            if msg.session_id in self.held and msg.active != 0:
                self.held[msg.session_id].add(key)
            earliest(self.earliest, msg.message_uid, self.index.get(msg.session_id))

    def _replay(self) -> Iterator[tuple[WireMessage, bool]]:
        """Every identity of the windows in display order, once: (row, shown)."""
        current: list[WireMessage] = []  # the message of the entry `shown_once` took last

        def entries() -> Iterator[tuple[RowKey, str | None]]:
            for sid in self.plan.windows:
                spool = self.spools[sid]
                spool.flush()
                spool.seek(0)
                for line in spool:
                    current[:] = [_DECODE.decode(line)]
                    yield key_of(current[0]), current[0].message_uid

        for _key, shown in shown_once(entries(), self.index, dict(self.earliest)):
            yield current[0], shown

    def count(self) -> None:
        """The stats and the goal, before any row is written."""
        root = self.path[0]
        for msg, shown in self._replay():
            row = self.stats.count(msg, shown)
            if row is not None and self.goal is None and msg.session_id == root and states_goal(row):
                self.goal = row.text

    def pages(self) -> Iterator[list[Row]]:
        """The shown rows in display order, `limit` at a time."""
        rows = (row for msg, shown in self._replay() if shown and (row := project(msg)) is not None)
        while batch := list(itertools.islice(rows, self.limit)):
            yield batch

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
