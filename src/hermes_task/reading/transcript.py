"""What a read cycle shows: the transcript document's history parts (no requests but `read_goal`).

Invariants: rows come only from the composed history view (`core/lineage.py`), so every
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

from hermes_task.core.documents import Coverage, Row, SegmentInfo, WarningItem, warning
from hermes_task.core.lineage import Cursor, View
from hermes_task.core.projection import project, states_goal
from hermes_task.core.sanitize import clean_line
from hermes_task.core.ui_strings import WarningCode
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


def coverage(view: View, cur: Cursor, *, cold_open: bool | None) -> Coverage:
    """`cold_open` None: whether the anchor continues an earlier segment is not known (a
    bound stopped the check), so the start is not claimed."""
    return Coverage(
        unique_rows=len(view.keys),
        has_older=cur.kind in ("page", "first"),
        at_start=cur.kind == "start" and cold_open is False,
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


ANCESTORS: dict[str, str] = {
    "cold_open": "this segment continues an earlier one; open the task's first segment to read them",
    "unknown": "whether this segment continues an earlier one is not known: a read bound stopped the check",
    "blocked": "the pages of segment {sid} answer for a newer segment, so its own rows cannot be read",
}


def history_warnings(view: View, cur: Cursor, *, cold_open: bool | None) -> list[WarningItem]:
    """The warnings the history itself implies (added once to whatever a cycle reported).
    `partial_ancestors` says why: a cold open of a later segment (and where to look), a
    check a bound stopped, or an earlier segment whose pages answer for another session.
    A tip segment that cannot be read (`blocked` at the tip) is not about ancestors."""
    out: list[WarningItem] = []

    if cold_open is not False:
        out.append(warning(WarningCode.partial_ancestors, ANCESTORS["cold_open" if cold_open else "unknown"]))
    elif cur.kind == "blocked" and cur.sid != cur.window.canonical:
        out.append(
            warning(WarningCode.partial_ancestors, ANCESTORS["blocked"].format(sid=clean_line(cur.sid or "")))
        )
    if view.foreign:
        out.append(warning(WarningCode.foreign_rows, f"{view.foreign} row{'s' if view.foreign != 1 else ''}"))
    return out


HISTORY_CODES = frozenset({"partial_ancestors", "foreign_rows"})


def state_warnings(reported: Sequence[WarningItem], *, partial: bool) -> list[WarningItem]:
    """The reported warnings with `partial_history` as the task stands now (`partial`: the
    newest verified segment ended by compression): a refresh that proved a newer segment
    after the warning was reported (a restart while paging) leaves no stale one, and one
    still partial keeps it once, after `legacy_backend`."""
    kept = [w for w in reported if w.code != "partial_history"]
    if partial:
        at = 1 if kept and kept[0].code == "legacy_backend" else 0
        kept.insert(at, warning(WarningCode.partial_history))
    return kept


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
        if row is not None and states_goal(row):
            return row.text
    return None


def oldest_row(client: DashboardAPI, root: str, oldest: MessagesPage | None = None) -> Row | None:
    """The root's oldest visible row when it is the root's own: from `oldest` (that page,
    already read), else one one-row read; None when the dashboard shows none."""
    try:
        page = oldest or client.messages(root, offset=0, limit=1, order="oldest")
    except HermesError as exc:
        if exc.code in (Code.NOT_FOUND, Code.INCOMPATIBLE, Code.BAD_REQUEST, Code.UNSUPPORTED):
            return None
        raise
    for msg in page.messages[:1]:
        row = project(msg)
        if msg.session_id == root and row is not None:
            return row
    return None


def read_goal(client: DashboardAPI, root: str, oldest: MessagesPage | None = None) -> str | None:
    """The root's oldest row when it is the root's own user row: from `oldest` (that page,
    already read), else one one-row read."""
    row = oldest_row(client, root, oldest)
    return row.text if row is not None and row.role == "user" else None


def goal_hidden(row: Row | None) -> bool:
    """Does the root's oldest visible row show that its goal row is not served? A compaction
    summary first means the rows before it were archived and the backend hides archived rows
    (0.19's legacy backend, backend.md section 11): the goal cannot be read over HTTP."""
    return row is not None and row.kind == "compaction_summary"
