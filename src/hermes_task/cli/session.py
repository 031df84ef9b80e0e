"""One command's session (gh's Factory, httpie's Environment): the options it was called
with, the settings resolved once, the `--debug` writer, and, built lazily on first use, the
dashboard client, the local store and the outputs (stdout as the painters' `Target`, the
rich consoles on stdout and stderr: `consoles.py`).

Invariant: a run resolves its settings at most once, builds the client and the store only if
the command uses them, and each output at most once, when the command first writes to it; a
command makes its session and hands it to the shell (`shell.run`), which gives it to the
command's body and closes whatever was opened, however the command ends. The store is
opened read-only (`store/sqlite_reader.py`), only where the settings chose one (`--store`,
`HERMES_TASK_STORE`, the config, or the profile's store for a loopback URL); everything it
proposes is proven over HTTP by the reading layer before use.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cached_property
from typing import TYPE_CHECKING, Any

from msgspec import Struct, field

from hermes_task import __version__
from hermes_task import settings as settings_module
from hermes_task.cli.common import Common
from hermes_task.cli.consoles import output_target, rich_console
from hermes_task.cli.environment import Environment
from hermes_task.core.documents import Row
from hermes_task.reading.hints import StoreHints
from hermes_task.render import Target

if TYPE_CHECKING:
    from rich.console import Console

    from hermes_task.dashboard.client import DashboardClient
    from hermes_task.store.sqlite_reader import Store


_DEBUG_LOCK = threading.Lock()  # one --debug line at a time, from any thread (reading/fanout.py)


class Known(Struct):
    """What a command has verified so far, for the document written if it fails mid-way."""

    rows: Callable[[], list[Row]] = field(default=lambda: [])


def debug_enabled(common: Common) -> bool:
    """`--debug`, or HERMES_TASK_DEBUG set (and not 0)."""
    return common.debug or common.env.environ.get("HERMES_TASK_DEBUG", "") not in ("", "0")


class Session:
    """What one run of a command works with (module docstring)."""

    def __init__(self, common: Common) -> None:
        self.common = common
        self.known = Known()
        self._client: DashboardClient | None = None
        self._hints: StoreHints | None = None
        self._consoles: dict[bool, Console] = {}
        # Where `--debug` lines go while a live display holds the terminal (`cli/watch.py`):
        # above it, as its notes are, not into the region it redraws. None: straight to stderr.
        self.debug_above: Callable[[str], None] | None = None

    @property
    def env(self) -> Environment:
        return self.common.env

    @cached_property
    def target(self) -> Target:
        """stdout as the painters' output (`consoles.output_target`): its terminal, colour and
        size as they were when the command first wrote."""
        return output_target(self.common)

    def console(self) -> Console:
        """The rich console on stdout (`consoles.rich_console`), made on first use."""
        return self._console(stderr=False)

    def err_console(self) -> Console:
        """The rich console on stderr, made on first use."""
        return self._console(stderr=True)

    def _console(self, *, stderr: bool) -> Console:
        if stderr not in self._consoles:
            self._consoles[stderr] = rich_console(self.common, stderr=stderr)
        return self._consoles[stderr]

    @cached_property
    def settings(self) -> settings_module.Settings:
        """The effective settings (flag > env > config file > default), resolved once."""
        common = self.common
        return settings_module.resolve(
            env=dict(common.env.environ),
            url=common.url,
            gateway=common.gateway,
            profile=common.profile,
            token_file=common.token_file,
            username=common.username,
            password_file=common.password_file,
            request_timeout=common.request_timeout,
            store=common.store,
            no_store=common.no_store,
        )

    @cached_property
    def debug(self) -> Callable[[str], None] | None:
        """The `--debug` line writer (stderr), or None when debugging is off."""
        if not debug_enabled(self.common):
            return None

        def write(line: str, stderr: Any = self.env.stderr) -> None:
            with _DEBUG_LOCK:
                if self.debug_above is not None:
                    self.debug_above(line)
                else:
                    print(f"debug: {line}", file=stderr, flush=True)

        return write

    @property
    def client(self) -> DashboardClient:
        """The dashboard client, credentials applied; made on first use."""
        if self._client is None:
            self._client = self._connect()
        return self._client

    def _connect(self) -> DashboardClient:
        import httpx  # lazy: httpx and the client, only for a command that reads a dashboard

        from hermes_task.dashboard.auth import apply_credentials  # lazy: as httpx
        from hermes_task.dashboard.client import DashboardClient  # lazy: as httpx

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
        from hermes_task.store.sqlite_reader import Store  # lazy: SQLite, only when there is a store

        return Store(resolved.store, debug=self.debug)

    @property
    def hints(self) -> StoreHints:
        """The store's hints (or why there is no store); made on first use."""
        if self._hints is None:
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
