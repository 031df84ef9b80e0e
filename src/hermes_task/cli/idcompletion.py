"""Shell completion of session ids from the local store: CHILD_ID (`show`, `follow`, `older`)
and PARENT_ID (`recover`, `follow --parent`).

A completion makes no HTTP request, so what it offers is the store's proposal only, filtered
by the same pure rules the commands apply before their HTTP proof (`core/lineage.py`
`recent_task_roots` and `propose_parents`): delegated by their parent's
own segment, of the profile in use, every id passing the id check (a control sequence,
surrounding whitespace or `..` is never printed into the shell). Invariant: a completion
never raises; anything that goes wrong offers nothing.
"""

from __future__ import annotations

from typing import Any

import typer

from hermes_task.cli.environment import current


def _recent_store_rows(ctx: typer.Context) -> tuple[list[Any], str | None] | None:
    """The store's newest rows with a parent (`Store.recent_with_parent`) and the profile,
    for the store and profile the command line names; None without a usable store."""
    from hermes_task import settings  # lazy: completion only (the config file, the store)
    from hermes_task.core.lineage import StoreUnavailable  # lazy: completion only
    from hermes_task.store.sqlite_reader import Store  # lazy: completion only (SQLite)

    given = {k: v for k, v in ctx.params.items() if k in ("url", "gateway", "profile", "store", "no_store")}
    resolved = settings.resolve(env=dict(current(ctx).environ), **given)
    if resolved.store is None:
        return None
    store = Store(resolved.store)
    try:
        return store.recent_with_parent(), resolved.profile
    except StoreUnavailable:
        return None
    finally:
        store.close()


def complete_task_id(ctx: typer.Context, incomplete: str) -> list[str]:
    """Shell completion of CHILD_ID: the 50 newest delegated task roots in the local store, for
    the profile and store the command line names; `[]` whenever that is not possible."""
    try:
        from hermes_task.core.lineage import recent_task_roots  # lazy: completion only

        found = _recent_store_rows(ctx)
        if found is None:
            return []
        return [sid for sid in recent_task_roots(*found) if sid.startswith(incomplete)]
    except Exception:  # a completion must never print a traceback into the shell
        return []


def complete_parent_id(ctx: typer.Context, incomplete: str) -> list[str]:
    """Shell completion of PARENT_ID: the sessions `parents` would propose from the local
    store (the parents of its newest delegated children, newest delegation first, at most
    50, id-checked; not proven over HTTP: a completion makes no request); `[]` whenever that
    is not possible."""
    try:
        from hermes_task.core.lineage import propose_parents  # lazy: completion only

        found = _recent_store_rows(ctx)
        if found is None:
            return []
        return [sid for sid in propose_parents(*found, 50) if sid.startswith(incomplete)]
    except Exception:  # a completion must never print a traceback into the shell
        return []


__all__ = ["complete_parent_id", "complete_task_id"]
