"""Windows other than the newest page: `show --around ROW_ID` (where the route exists).

Each around page starts at a user prompt of the canonical segment and says its absolute
offset from the oldest row, so several windows are unioned in offset order: overlapping
ones are aligned on shared identities, disjoint ones are kept apart with a `gap` warning,
and no row is invented between them.
"""

from __future__ import annotations

from collections.abc import Sequence

from hermes_task.core.documents import warning
from hermes_task.core.ui_strings import WarningCode
from hermes_task.core.window import Window, merge_latest
from hermes_task.core.wire import MessagesPage
from hermes_task.failures import Code, HermesError
from hermes_task.reading.reader import Snapshot, TaskReader


def read_around(reader: TaskReader, row_ids: Sequence[int], snap: Snapshot) -> Snapshot:
    """Replace the reader's window with the union of the windows around `row_ids`."""
    canonical = reader.window.canonical
    assert canonical is not None
    pages: list[MessagesPage] = []
    for row_id in dict.fromkeys(row_ids):
        try:
            page = reader.client.around(canonical, row_id)
        except HermesError as exc:
            if exc.code is Code.UNSUPPORTED:
                reader.caps.around = False
            raise
        reader.caps.around = True
        if page.session_id != canonical:
            raise HermesError(Code.IDENTITY_MISMATCH, "around answered for another session")
        first = page.messages[0] if page.messages else None
        if first is None or first.id != row_id or first.session_id != canonical:
            raise HermesError(Code.NOT_FOUND, f"row {row_id} is not a prompt of this task's segment")
        pages.append(page)
    pages.sort(key=lambda p: p.pagination.offset or 0)
    window = Window(canonical=canonical, generation=reader.window.generation)
    warnings = [w for w in snap.warnings if w.code != "gap"]
    for page in pages:
        result = merge_latest(window, page.messages, exhausted=(page.pagination.offset or 0) == 0)
        window = result.window
        if result.gap:
            warnings.append(warning(WarningCode.gap))
    reader.window = window
    return Snapshot(new_keys=tuple(window.keys), warnings=warnings, failure=snap.failure)
