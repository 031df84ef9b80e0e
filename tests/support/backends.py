"""Which real backends the integration suite runs against.

``HERMES_TASK_BACKENDS`` is a comma list of names from ``tests/support/harness/specs.py``'s
``BACKENDS`` (``official``, ``iot``, ``official018``, ``axisrow``); unset or empty means
``DEFAULT_BACKENDS``.  Every fixture and test that is parametrized over backends takes
``BACKEND_NAMES`` from here, so one variable selects the whole integration suite's backends::

    HERMES_TASK_BACKENDS=official018 .venv/bin/pytest tests/integration -q
    HERMES_TASK_BACKENDS=official,iot,official018,axisrow .venv/bin/pytest tests/integration
"""

from __future__ import annotations

import os

import pytest

from tests.support import harness

ENV_VAR = "HERMES_TASK_BACKENDS"
# Every backend the harness knows: the suite (and the support matrix) covers all four.
DEFAULT_BACKENDS = ("official", "iot", "official018", "axisrow")


def configured_backends(value: str | None = None) -> list[str]:
    """The backend names *value* (default: the environment variable) selects, in its order."""
    raw = os.environ.get(ENV_VAR, "") if value is None else value
    names = [part.strip() for part in raw.split(",") if part.strip()]
    if not names:
        return list(DEFAULT_BACKENDS)
    unknown = [n for n in names if n not in harness.BACKENDS]
    if unknown:
        raise pytest.UsageError(
            f"{ENV_VAR}={raw!r}: unknown backend(s) {', '.join(unknown)}; "
            f"expected a comma list of {', '.join(harness.BACKENDS)}"
        )
    return list(dict.fromkeys(names))


BACKEND_NAMES = configured_backends()

# The `legacy_backend` warning texts (src/hermes_task/core/ui_strings.py), spelled out so a
# change of wording is a test failure.
LEGACY_WARNINGS = {
    "paginated": "legacy backend (hermes-agent 0.19.x): archived rows are not visible over HTTP",
    "unpaginated": (
        "legacy backend (hermes-agent 0.18.x or older): no paging, `order` or archived rows over "
        "HTTP; every active row is read in one answer"
    ),
}


def legacy_warning(features: harness.Features) -> str | None:
    """The `legacy_backend` message a backend with *features* gets, or None."""
    if features.order:
        return None
    return LEGACY_WARNINGS["paginated" if features.pagination else "unpaginated"]


def legacy_stderr(features: harness.Features) -> str:
    text = legacy_warning(features)
    return f"warning: {text}\n" if text else ""
