"""Honest counters for docs/reliability.md: what the hostile, escape, secret and fault tests tried.

Tests call `count(category)` once per input they actually exercised (one hypothesis example,
one corpus case through one output path, one injected fault) and `observe(name, value)` for
measured outcomes (rows lost). Counting is always on and costs a dict update. The numbers
reach a file only when this module is also loaded as a pytest plugin
(`python -m pytest -p tests.support.tally --tally-out PATH`, as `bench/run.py` does): each count is
attributed to the test that made it, and the file records that test's outcome, so a report
can never claim inputs of a test that failed.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest

_current = "<outside a test>"
_counts: defaultdict[str, Counter[str]] = defaultdict(Counter)
_observed: defaultdict[str, dict[str, Any]] = defaultdict(dict)
_outcomes: dict[str, str] = {}


def count(category: str, n: int = 1) -> None:
    """Record `n` inputs of `category` exercised by the running test."""
    _counts[_current][category] += n


def observe(name: str, value: Any) -> None:
    """Record a measured value (e.g. `rows_lost`) for the running test; sums over calls."""
    bucket = _observed[_current]
    bucket[name] = bucket.get(name, 0) + value if isinstance(value, int | float) else value


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--tally-out", default=None, help="write the reliability tally as JSON here")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    global _current
    _current = item.nodeid


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "call" or report.outcome != "passed":
        previous = _outcomes.get(report.nodeid)
        if previous in (None, "passed"):
            _outcomes[report.nodeid] = report.outcome


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    path = session.config.getoption("--tally-out", default=None)
    if not path:
        return
    tests = {
        nodeid: {
            "outcome": outcome,
            "counts": dict(_counts.get(nodeid, {})),
            "observed": _observed.get(nodeid, {}),
        }
        for nodeid, outcome in sorted(_outcomes.items())
    }
    Path(path).write_text(json.dumps({"exitstatus": int(exitstatus), "tests": tests}, indent=1) + "\n")
