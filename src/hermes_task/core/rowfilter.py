"""Which rows a reading command prints: `--role` and `--tail` (pure).

Invariants: a selection keeps the rows' order and never adds, changes or repeats a row;
`--role` keeps the rows of the named roles (`assistant` also matches the `agent` rows some
backends write); `--tail N` then keeps the last N of those (0: none). Filters choose what is
printed, never what is read or proven: a transcript document's `coverage` still describes
every row of the window, and each segment's `rows_shown` counts the rows the document holds.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from msgspec import Struct
from msgspec.structs import replace

from hermes_task.core.documents import Row, TranscriptDoc

ROLES = ("user", "assistant", "tool", "system")
ALIASES = {"agent": "assistant"}


def role_of(row: Row) -> str:
    """The row's role as `--role` names it."""
    return ALIASES.get(row.role, row.role)


class RowFilter(Struct, frozen=True):
    """`roles` empty: every role. `tail` None: every row."""

    roles: frozenset[str] = frozenset()
    tail: int | None = None

    @classmethod
    def of(cls, roles: Iterable[str] | None, tail: int | None) -> RowFilter:
        return cls(frozenset(roles or ()), tail)

    def select(self, rows: Sequence[Row], *, tail: bool = True) -> list[Row]:
        """The rows to print, in order; `tail=False` applies the roles only (follow's new rows)."""
        kept = [row for row in rows if not self.roles or role_of(row) in self.roles]
        if tail and self.tail is not None:
            kept = kept[-self.tail :] if self.tail > 0 else []
        return kept


def filtered(doc: TranscriptDoc, rows: RowFilter) -> TranscriptDoc:
    """`doc` with only the selected rows; segments' `rows_shown` recounted, coverage kept."""
    if not rows.roles and rows.tail is None:
        return doc
    kept = rows.select(doc.rows)
    counts = Counter(row.session_id for row in kept)
    segments = [replace(s, rows_shown=counts[s.id]) for s in doc.task.segments]
    return replace(doc, rows=kept, task=replace(doc.task, segments=segments))
