"""`--quiet`: the warnings every command repeats stay off the terminal.

A warning counts as repeating when it describes the setup rather than the task: the same
backend or the same machine says it on every run, so after the first time it only buries
what is new. Those are `legacy_backend` (the dashboard is hermes-agent 0.19.x) and
`store_unavailable` (the local store cannot be read here). Every warning about the task
itself (`partial_history`, `partial_ancestors`, `gap`, `bound_reached`, `foreign_rows`) is
always printed. Invariant: `--quiet` changes stderr only; JSON documents and NDJSON events
keep every warning.
"""

from __future__ import annotations

from typing import Any

from hermes_task.core.ui_strings import SETUP_WARNINGS

REPEATING_WARNINGS = SETUP_WARNINGS


def dropped(quiet: bool, code: str) -> bool:
    """Does `--quiet` keep this warning off the terminal?"""
    return quiet and code in REPEATING_WARNINGS


class QuietNotes:
    """A terminal reporter (watch, follow --parent) without the repeating warnings."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def warning(self, item: Any) -> None:
        if not dropped(True, item.code):
            self.inner.warning(item)

    def child_warning(self, entry: Any, item: Any) -> None:
        if not dropped(True, item.code):
            self.inner.child_warning(entry, item)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)
