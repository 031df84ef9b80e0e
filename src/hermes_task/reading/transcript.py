"""What a read cycle shows: the transcript document's history parts (no requests but `read_goal`).

Invariants: rows come only from the composed history view (`core/history.py`), so every
shown row belongs to a proven segment and a dropped foreign row is always counted in a
`foreign_rows` warning; `coverage.at_start` is true only when the lineage's first row is
held and the anchor continues no earlier segment; `partial_ancestors` stands whenever
earlier segments exist that this window cannot include (a cold open of a later segment,
a blocked segment) and is never dropped because some earlier row happens to be held.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence

from hermes_task.core.documents import Coverage, Row, SegmentInfo, WarningCode, WarningItem
from hermes_task.core.history import Cursor, View
from hermes_task.core.messages import warning_message
from hermes_task.core.projection import counts_as_text, project
from hermes_task.core.wire import MessagesPage, SessionDetail
from hermes_task.failures import Code, HermesError
from hermes_task.reading.api import DashboardAPI


def shown_rows(view: View) -> list[Row]:
    """Displayed rows in order (server-hidden rows omitted)."""
    out: list[Row] = []
    for key in view.keys:
        row = project(view.messages[key])
        if row is not None:
            out.append(row)
    return out


def coverage(view: View, cur: Cursor, *, cold_open: bool) -> Coverage:
    return Coverage(
        unique_rows=len(view.keys),
        has_older=cur.kind in ("page", "first"),
        at_start=cur.kind == "start" and not cold_open,
    )


def _seconds(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


def segments(
    path: Sequence[str], details: Mapping[str, SessionDetail], rows: Sequence[Row]
) -> list[SegmentInfo]:
    counts = Counter(row.session_id for row in rows)
    out: list[SegmentInfo] = []
    for sid in path:
        detail = details.get(sid)
        out.append(
            SegmentInfo(
                id=sid,
                started_at=_seconds(detail.started_at) if detail else None,
                ended_at=_seconds(detail.ended_at) if detail else None,
                end_reason=detail.end_reason if detail else None,
                rows_shown=counts[sid],
            )
        )
    return out


def history_warnings(view: View, cur: Cursor, *, cold_open: bool) -> list[WarningItem]:
    """The warnings the history itself implies (added once to whatever a cycle reported)."""
    out: list[WarningItem] = []

    def add(code: WarningCode, detail: str = "") -> None:
        out.append(WarningItem(code=code, message=warning_message(code, detail)))

    if cold_open or cur.kind == "blocked":
        add("partial_ancestors")
    if view.foreign:
        add("foreign_rows", f"{view.foreign} row{'s' if view.foreign != 1 else ''}")
    return out


HISTORY_CODES = frozenset({"partial_ancestors", "foreign_rows"})


def merge_warnings(reported: Sequence[WarningItem], history: Sequence[WarningItem]) -> list[WarningItem]:
    """The reported warnings, with the history's own ones as they stand now (one per code)."""
    kept = [w for w in reported if w.code not in HISTORY_CODES]
    return [*kept, *history]


def goal_in(view: View, root: str, cur: Cursor) -> str | None:
    """The goal when the view holds the root's first row: the root's first user row."""
    if cur.kind != "start":
        return None
    for key in view.keys:
        if key[0] != root:
            continue
        row = project(view.messages[key])
        if row is not None and row.role == "user" and counts_as_text(row):
            return row.text
    return None


def read_goal(client: DashboardAPI, root: str, oldest: MessagesPage | None = None) -> str | None:
    """The root's oldest row when it is the root's own user row: from `oldest` (that page,
    already read), else one one-row read."""
    try:
        page = oldest or client.messages(root, offset=0, limit=1, order="oldest")
    except HermesError as exc:
        if exc.code in (Code.NOT_FOUND, Code.INCOMPATIBLE, Code.BAD_REQUEST, Code.UNSUPPORTED):
            return None
        raise
    for msg in page.messages[:1]:
        row = project(msg)
        if msg.session_id == root and row is not None and row.role == "user":
            return row.text
    return None
