"""One window over the proven lineage: which segment is read next, and the rows shown (pure).

A task's history is its tip window (`TaskReader.window`: the canonical segment, paged by
the anchored rules of `core/anchors.py`) plus one window per earlier segment that had to be
read on its own. Whether an earlier segment must be read is decided from rows, never from a
backend version: once the newer windows are read to their start, a segment is read (newest
page first) only when they hold fewer of its rows (by `session_id`) than the segment
counts; a backend that merges every ancestor row into the tip's pages needs no other read,
one whose merged view leaves some ancestor rows out (or holds none) gets them read.

Invariants: a segment is never given a window while a newer window's sequence already
includes its rows; the shown rows are the earlier windows oldest segment first, then the
tip window, each identity once; a row whose `session_id` is not a segment of the proven
lineage is never shown (it is counted as foreign); the history is at its start only at the
first row of the lineage's first segment.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Literal

from msgspec import Struct

from hermes_task.core.window import RowKey, Window
from hermes_task.core.wire import WireMessage

CursorKind = Literal["page", "first", "start", "blocked"]


class Cursor(Struct, frozen=True):
    """Where the next older read goes. `page`: older rows of `window` (segment `sid`);
    `first`: the newest page of segment `sid`, not read yet; `start`: the lineage's first
    row is held; `blocked`: the segment `sid` that comes next cannot be read on its own.
    `window` is the last window looked at."""

    kind: CursorKind
    sid: str | None
    window: Window


def _counted(msg: WireMessage) -> bool:
    """Does a detail's `message_count` count this row? It counts active rows only: an
    archived row (`active` 0, compacted in place) is shown but not counted."""
    return msg.active is None or bool(msg.active)


def held(sid: str, windows: Sequence[Window]) -> int:
    """Active row ids of segment `sid` held by any of `windows`: what its detail's
    `message_count` can be compared with (archived rows are not in that count)."""
    return len(
        {key for window in windows for key in window.keys if key[0] == sid and _counted(window.messages[key])}
    )


def _at_start(window: Window) -> bool:
    return window.at_start and not (window.fresh and not window.empty)


def cursor(
    path: tuple[str, ...],
    tip: Window,
    earlier: Mapping[str, Window],
    blocked: frozenset[str] = frozenset(),
    counts: Mapping[str, int | None] | None = None,
) -> Cursor:
    """The next older read of the history (see the module's rule). `counts` are the
    segments' own row counts (detail `message_count`); a segment whose rows the windows
    already hold (as many as it counts; any, when its count is unknown) is not read."""
    counts = counts or {}
    current = tip
    windows = [tip, *earlier.values()]
    for sid in reversed(path[:-1]):
        if not _at_start(current):
            return Cursor("page", current.canonical, current)
        if sid in blocked:
            return Cursor("blocked", sid, current)
        if sid in earlier:
            current = earlier[sid]
            continue
        have, total = held(sid, windows), counts.get(sid)
        if have and (total is None or have >= total):
            continue  # a newer segment's pages already include this segment's rows
        return Cursor("first", sid, current)
    if not _at_start(current):
        return Cursor("page", current.canonical, current)
    return Cursor("start", path[0], current)


class View(Struct, frozen=True):
    """The shown side of the history: identities in display order (owned rows only, each
    durable row once), every known message, and how many identities named a session
    outside the lineage."""

    keys: tuple[RowKey, ...]
    messages: Mapping[RowKey, WireMessage]
    foreign: int


def compose(path: tuple[str, ...], tip: Window, earlier: Mapping[str, Window]) -> View:
    """Earlier windows (oldest segment first), then the tip window; each identity once
    (`shown_once`'s rule). A later window's copy of a message replaces an earlier one's."""
    owned = {sid: i for i, sid in enumerate(path)}
    messages: dict[RowKey, WireMessage] = {}
    windows = [earlier[sid] for sid in path if sid in earlier and sid != tip.canonical]
    for window in [*windows, tip]:
        messages.update(window.messages)
    entries = [(key, messages[key].message_uid) for window in [*windows, tip] for key in window.keys]
    first: dict[str, int] = {}
    for key, uid in entries:
        earliest(first, uid, owned.get(key[0]))
    shown: list[RowKey] = []
    foreign = 0
    for key, owned_row in shown_once(entries, owned, first):
        if owned_row:
            shown.append(key)
        else:
            foreign += 1
    return View(tuple(shown), messages, foreign)


def earliest(first: dict[str, int], uid: str | None, at: int | None) -> None:
    """Note that segment `at` (its index in the lineage; None: a foreign row) holds `uid`:
    `first` keeps each uid's earliest segment."""
    if uid and at is not None:
        first[uid] = min(first.get(uid, at), at)


def shown_once(
    entries: Iterable[tuple[RowKey, str | None]], owned: Mapping[str, int], first: dict[str, int]
) -> Iterator[tuple[RowKey, bool]]:
    """The identities of `entries` (key, `message_uid`) in display order, each once:
    (key, True) for a row shown, (key, False) for a row of a session outside the lineage
    (`owned`: segment -> index), counted, never shown. Durable identity: where the backend
    gives rows a `message_uid` (iot), a row a rotation re-anchored into a later segment (the
    goal, a steer, the carried tail) keeps its uid, and so does the pruned copy in-place
    compaction leaves beside an archived original: it is the same row, shown and counted
    once, the earliest copy (of the earliest segment holding the uid, `first`, built with
    `earliest` over the same entries; consumed here), first in display order there. A row
    without a uid is its own (`session_id`, `id`). Used by `compose` over windows in memory
    and by `reading/lineage_stream.py` over spooled ones."""
    seen: set[RowKey] = set()
    for key, uid in entries:
        if key in seen:
            continue
        seen.add(key)
        at = owned.get(key[0])
        if at is None:
            yield key, False
            continue
        if uid:
            if first.get(uid) != at:
                continue
            del first[uid]  # the earliest copy is shown; every other is the same row
        yield key, True


__all__ = ["Cursor", "View", "compose", "cursor", "earliest", "held", "shown_once"]
