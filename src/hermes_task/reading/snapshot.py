"""What one read cycle brought: `Snapshot`, and older reads that carry the refreshes they made.

Invariant: a refresh made in the middle of an older read (a restart, a re-anchor) is never
lost: its new rows, warnings and gap travel with the older read's result.
"""

from __future__ import annotations

from msgspec import Struct, field
from msgspec.structs import replace

from hermes_task.core.documents import WarningItem
from hermes_task.core.window import MergeResult
from hermes_task.failures import HermesError


class Snapshot(Struct):
    """The outcome of one cycle: new rows, warnings, and a failure to report after the
    verified rows (a rejected or forked candidate)."""

    new_keys: tuple[tuple[str, int], ...] = ()
    warnings: list[WarningItem] = field(default_factory=list)
    failure: HermesError | None = None


def with_refreshes(result: MergeResult, *snaps: Snapshot | None) -> MergeResult:
    """`result` carrying the new rows and warnings of refreshes made during an older read."""
    new_keys, warnings, gap = dict.fromkeys(result.new_keys), list(result.warnings), result.gap
    for snap in snaps:
        if snap is not None:
            new_keys.update(dict.fromkeys(snap.new_keys))
            warnings += snap.warnings
            gap = gap or any(w.code == "gap" for w in snap.warnings)
    return replace(result, new_keys=tuple(new_keys), warnings=tuple(warnings), gap=gap)
