"""What the reading loops need of a dashboard: the `DashboardAPI` protocol.

The loops in this package depend on this protocol, never on the HTTP client, so they import
no httpx and a test's in-memory dashboard type-checks as one. `dashboard.client.DashboardClient`
is the real implementation. Invariant: every method is a read (GET); each either returns a
validated wire object for exactly the session asked (or the one the dashboard redirected to,
which callers check) or raises `HermesError`.
"""

from __future__ import annotations

from typing import Protocol

from hermes_task.core.delegations import LedgerRecord
from hermes_task.core.lineage import StoreSession
from hermes_task.core.wire import PAGE_LIMIT, LatestDescendant, MessagesPage, SessionDetail


class DashboardAPI(Protocol):
    """The dashboard's read routes that the reading loops use."""

    @property
    def profile(self) -> str | None:
        """The exact profile every response must name (None: the default profile)."""
        ...

    def detail(self, sid: str) -> SessionDetail:
        """`GET /api/sessions/{sid}`: one session's metadata."""
        ...

    def messages(
        self, sid: str, *, offset: int = 0, limit: int = PAGE_LIMIT, order: str = "latest"
    ) -> MessagesPage:
        """`GET /api/sessions/{sid}/messages`: one page of the transcript."""
        ...

    def latest_descendant(self, sid: str) -> LatestDescendant:
        """`GET /api/sessions/{sid}/latest-descendant`: the dashboard's hint, never trusted."""
        ...

    def around(self, sid: str, row_id: int, *, limit: int = 120) -> MessagesPage:
        """`GET /api/sessions/{sid}/messages/around`: the window around one row."""
        ...


class StoreAPI(Protocol):
    """The local store's lookups (`dashboard.store.Store`); each may raise
    `core.lineage.StoreUnavailable`. Everything it returns is a proposal, never proof."""

    def children(self, session_id: str) -> list[StoreSession]:
        """The rows whose `parent_session_id` is `session_id`, newest first (at most
        `MAX_CHILDREN + 1`: more than `MAX_CHILDREN` says the bound cut older ones off)."""
        ...

    def knows(self, session_id: str) -> bool:
        """Does the store hold this session?"""
        ...

    def first_user_text(self, session_id: str) -> str | None:
        """The text of the session's first `user` row (goal matching only)."""
        ...

    def delegation(self, delegation_id: str) -> LedgerRecord | None:
        """Hermes' `async_delegations` record of one background unit, if the store has one."""
        ...

    def close(self) -> None:
        """Release the store."""
        ...
