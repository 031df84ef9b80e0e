"""Opening the local store for a command, without typer.

Invariant: the store is opened read-only and lazily (`dashboard/store.py`), only where
`settings` chose one (`--store`, `HERMES_TASK_STORE`, the config, or the profile's store for a
loopback URL); everything it proposes is proven over HTTP by the reading layer before use.
The `--store`/`--no-store` options and CHILD_ID completion are declared in `options.py`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hermes_task.reading.storehints import StoreHints
    from hermes_task.settings import Settings


@contextmanager
def store_hints(resolved: Settings, debug: Callable[[str], None] | None) -> Iterator[StoreHints]:
    """The store these settings chose (or why there is none); closed on exit."""
    from hermes_task.reading.storehints import StoreHints

    store = None
    if resolved.store is not None:  # the SQLite reader is imported only when there is a store
        from hermes_task.dashboard.store import Store

        store = Store(resolved.store, debug=debug)
    where = str(resolved.store) if resolved.store is not None else None
    hints = StoreHints(store, resolved.store_off, debug=debug, path=where)
    try:
        yield hints
    finally:
        hints.close()
