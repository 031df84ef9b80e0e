"""The local store in the CLI: its options, CHILD_ID completion, and opening it for a command.

Invariant: the store is opened read-only and lazily (`dashboard/store.py`), only where
`settings` chose one (`--store`, `HERMES_TASK_STORE`, the config, or the profile's store for a
loopback URL); everything it proposes is proven over HTTP by the reading layer before use.
Completion never fails loudly: any problem completes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated

import typer

from hermes_task.cli.environment import current

if TYPE_CHECKING:
    from hermes_task.reading.storehints import StoreHints
    from hermes_task.settings import Settings

CONN = "Connection"


def complete_task_id(ctx: typer.Context, incomplete: str) -> list[str]:
    """Shell completion of CHILD_ID: the 50 newest delegated task roots in the local store, for
    the profile and store the command line names; `[]` whenever that is not possible."""
    try:
        from hermes_task import settings
        from hermes_task.core.children import StoreUnavailable, recent_task_roots
        from hermes_task.dashboard.store import Store

        given = {
            k: v for k, v in ctx.params.items() if k in ("url", "gateway", "profile", "store", "no_store")
        }
        resolved = settings.resolve(env=dict(current(ctx).environ), **given)
        if resolved.store is None:
            return []
        store = Store(resolved.store)
        try:
            rows = store.recent_with_parent()
        except StoreUnavailable:
            return []
        finally:
            store.close()
        return [sid for sid in recent_task_roots(rows, resolved.profile) if sid.startswith(incomplete)]
    except Exception:  # a completion must never print a traceback into the shell
        return []


StorePath = Annotated[
    str | None,
    typer.Option(
        "--store",
        metavar="PATH",
        help=(
            "The dashboard's local Hermes store (state.db), read-only, to find child and newer-segment "
            "ids (proven over HTTP) [env: HERMES_TASK_STORE; default: the profile's store, loopback only]."
        ),
        rich_help_panel=CONN,
        show_default=False,
    ),
]
NoStore = Annotated[
    bool, typer.Option("--no-store", help="Never read the local Hermes store.", rich_help_panel=CONN)
]


@contextmanager
def store_hints(resolved: Settings, debug: Callable[[str], None] | None) -> Iterator[StoreHints]:
    """The store these settings chose (or why there is none); closed on exit."""
    from hermes_task.reading.storehints import StoreHints

    store = None
    if resolved.store is not None:  # the SQLite reader is imported only when there is a store
        from hermes_task.dashboard.store import Store

        store = Store(resolved.store, debug=debug)
    hints = StoreHints(store, resolved.store_off, debug=debug)
    try:
        yield hints
    finally:
        hints.close()


__all__ = ["NoStore", "StorePath", "complete_task_id", "store_hints"]
