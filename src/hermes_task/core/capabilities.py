"""What a dashboard can do, learned from its own answers, never from a version (docs/backends.md,
"Capabilities, learned from answers"): `None` until an answer of this run shows it, never guessed back.
"""

from __future__ import annotations

from msgspec import Struct
from msgspec.structs import asdict

from hermes_task.core.documents import BackendCapabilities, BackendInfo
from hermes_task.core.wire import MessagesPage


class Capabilities(Struct):
    """The capabilities learned so far in one run (mutable: the reader fills it in)."""

    pagination: bool | None = None
    order: bool | None = None
    ancestors_merged: bool | None = None
    around: bool | None = None

    @property
    def source_rewrite(self) -> bool | None:
        """Does rotation rewrite `tool` into `subagent`? (unknown while merging is unknown)"""
        return None if self.ancestors_merged is None else not self.ancestors_merged

    @property
    def oldest_first(self) -> bool | None:
        """Do offsets count from the oldest row (`order` ignored)? None: not known yet."""
        return None if self.order is None else not self.order

    def learn(self, page: MessagesPage) -> None:
        """Record what one `/messages` answer showed: its envelope, and rows of a merged ancestor."""
        self.pagination = page.paginated
        self.order = page.ordered
        if any(m.session_id != page.session_id for m in page.messages):
            self.ancestors_merged = True

    def info(self) -> BackendInfo:
        """The JSON `backend`: the contract label and what the answers showed."""
        learned = BackendCapabilities(**asdict(self), source_rewrite=self.source_rewrite)
        return BackendInfo(contract="current" if self.order else "legacy", capabilities=learned)
