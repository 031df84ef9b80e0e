"""The floor for `hermes-task show --json`: the same GETs with plain httpx, nothing else.

    python bench/minimal_show.py URL TARGET...      (token in HERMES_DASHBOARD_TOKEN)

Each TARGET is a request path with its query exactly as hermes-task sent it (bench/run.py
records them through tests/support/fault_proxy.py in pass-through mode). The script makes the same
requests with the same interpreter, headers and client settings (no redirects, no proxy
variables), decodes every body, and prints the rows of the last messages answer as one
ASCII JSON document: no validation, no lineage proof, no projection. It is what a user
could write in five minutes, and the bar `show --json` is measured against.
"""

from __future__ import annotations

import json
import os
import sys

import httpx


def main(argv: list[str]) -> int:
    url, targets = argv[1], argv[2:]
    headers = {"X-Hermes-Session-Token": os.environ["HERMES_DASHBOARD_TOKEN"], "Accept": "application/json"}
    rows: list[object] = []
    with httpx.Client(
        base_url=url, headers=headers, timeout=10.0, follow_redirects=False, trust_env=False
    ) as client:
        for target in targets:
            response = client.get(target)
            response.raise_for_status()
            body = response.json()
            if isinstance(body, dict) and isinstance(body.get("messages"), list):
                rows = body["messages"]
    sys.stdout.write(json.dumps({"rows": rows}, ensure_ascii=True, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
