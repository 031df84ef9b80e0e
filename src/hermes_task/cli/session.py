"""One command's session (gh's Factory, httpie's Environment): the options it was called
with, the settings resolved once, and, built lazily on first use, the dashboard client, the
local store and the output targets.

Invariant: a run resolves its settings at most once, and builds the client and the store
only if the command uses them; the shell (`shell.run`) makes the session, hands it to the
command's body and closes whatever was opened, however the command ends. The store is
opened read-only (`dashboard/store.py`), only where the settings chose one (`--store`,
`HERMES_TASK_STORE`, the config, or the profile's store for a loopback URL); everything it
proposes is proven over HTTP by the reading layer before use.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cached_property
from typing import TYPE_CHECKING

from msgspec import Struct, field

from hermes_task import __version__
from hermes_task.cli.common import Common
from hermes_task.cli.environment import Environment

if TYPE_CHECKING:
    from rich.console import Console

    from hermes_task.core.documents import Row
    from hermes_task.dashboard.client import DashboardClient
    from hermes_task.dashboard.store import Store
    from hermes_task.reading.storehints import StoreHints
    from hermes_task.render.target import Target
    from hermes_task.settings import Settings


class Known(Struct):
    """What a command has verified so far, for the document written if it fails mid-way."""

    rows: Callable[[], list[Row]] = field(default=lambda: [])


class Session:
    """What one run of a command works with (module docstring)."""

    def __init__(self, common: Common) -> None:
        self.common = common
        self.known = Known()
        self._client: DashboardClient | None = None
        self._hints: StoreHints | None = None

    @property
    def env(self) -> Environment:
        return self.common.env

    @cached_property
    def settings(self) -> Settings:
        """The effective settings (flag > env > config file > default), resolved once."""
        from hermes_task.cli.shell import resolve_settings

        return resolve_settings(self.common)

    @cached_property
    def debug(self) -> Callable[[str], None] | None:
        """The `--debug` line writer (stderr), or None when debugging is off."""
        from hermes_task.cli.shell import debug_writer

        return debug_writer(self.common)

    @property
    def client(self) -> DashboardClient:
        """The dashboard client, credentials applied; made on first use."""
        if self._client is None:
            self._client = self._connect()
        return self._client

    def _connect(self) -> DashboardClient:
        import httpx

        from hermes_task.dashboard.auth import apply_credentials
        from hermes_task.dashboard.client import DashboardClient

        resolved = self.settings
        http = httpx.Client(
            base_url=resolved.url,
            timeout=resolved.request_timeout,
            follow_redirects=False,
            headers={"User-Agent": f"hermes-task/{__version__}", "Accept": "application/json"},
            trust_env=False,
            # Certificates are verified for https://; a plain-http URL needs no TLS context, and
            # building one loads the CA bundle (about 35 ms of every run).
            verify=resolved.url.startswith("https://"),
            transport=self.env.transport,
        )
        client = DashboardClient(http, profile=resolved.profile, debug=self.debug)
        try:
            client.use_credentials(apply_credentials(http, resolved, dict(self.env.environ)))
        except BaseException:
            client.close()
            raise
        return client

    def open_store(self) -> Store | None:
        """The local store the settings chose, opened read-only (None without one); the
        caller closes it. `hints` holds the session's own."""
        resolved = self.settings
        if resolved.store is None:
            return None
        from hermes_task.dashboard.store import Store  # SQLite: only when there is a store

        return Store(resolved.store, debug=self.debug)

    @property
    def hints(self) -> StoreHints:
        """The store's hints (or why there is no store); made on first use."""
        if self._hints is None:
            from hermes_task.reading.storehints import StoreHints

            resolved = self.settings
            where = str(resolved.store) if resolved.store is not None else None
            self._hints = StoreHints(self.open_store(), resolved.store_off, debug=self.debug, path=where)
        return self._hints

    @contextmanager
    def reading(self) -> Iterator[tuple[DashboardClient, StoreHints]]:
        """The client and the store's hints for a block of reads; both closed after it."""
        try:
            yield self.client, self.hints
        finally:
            self.close()

    def target(self) -> Target:
        """stdout as the painters' output (`shell.target`)."""
        from hermes_task.cli.shell import target

        return target(self.common)

    def console(self, *, stderr: bool = False) -> Console:
        """A rich console on stdout or stderr (`shell.console`)."""
        from hermes_task.cli.shell import console

        return console(self.common, stderr=stderr)

    def close(self) -> None:
        """Close what was opened (the store, then the client); safe to call again."""
        hints, client = self._hints, self._client
        self._hints = self._client = None
        try:
            if hints is not None:
                hints.close()
        finally:
            if client is not None:
                client.close()
