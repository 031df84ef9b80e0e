"""Which real backends the integration suite runs against.

``HERMES_TASK_BACKENDS`` is a comma list of names from ``tools/backend_harness.py``'s
``BACKENDS`` (``official``, ``iot``, ``official018``, ``axisrow``); unset or empty means
``DEFAULT_BACKENDS``.  Every fixture and test that is parametrized over backends takes
``BACKEND_NAMES`` from here, so one variable selects the whole integration suite's backends::

    HERMES_TASK_BACKENDS=official018 .venv/bin/pytest tests/integration -q
    HERMES_TASK_BACKENDS=official,iot,official018,axisrow .venv/bin/pytest tests/integration
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

TOOLS_DIR = Path(__file__).resolve().parent.parent / "tools"
if str(TOOLS_DIR) not in sys.path:
    sys.path.insert(0, str(TOOLS_DIR))

import backend_harness  # noqa: E402  (needs tools/ on sys.path)

ENV_VAR = "HERMES_TASK_BACKENDS"
# The CLI does not read 0.18.2's pre-pagination envelope yet: the default stays at the two
# backends it supports until src/ does (issue 15).
DEFAULT_BACKENDS = ("official", "iot")


def configured_backends(value: str | None = None) -> list[str]:
    """The backend names *value* (default: the environment variable) selects, in its order."""
    raw = os.environ.get(ENV_VAR, "") if value is None else value
    names = [part.strip() for part in raw.split(",") if part.strip()]
    if not names:
        return list(DEFAULT_BACKENDS)
    unknown = [n for n in names if n not in backend_harness.BACKENDS]
    if unknown:
        raise pytest.UsageError(
            f"{ENV_VAR}={raw!r}: unknown backend(s) {', '.join(unknown)}; "
            f"expected a comma list of {', '.join(backend_harness.BACKENDS)}"
        )
    return list(dict.fromkeys(names))


BACKEND_NAMES = configured_backends()
