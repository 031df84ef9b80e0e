"""The floor for `hermes-task older --all --json`: the same pages with a plain httpx loop.

    python bench/minimal_pager.py URL SESSION_ID current|legacy [--debug]

(token in HERMES_DASHBOARD_TOKEN). It pages `/messages` 500 rows at a time, the largest
page both backends allow, until a short page: newest-first on a current backend
(`order=latest`, offsets from the newest row, pages prepended), oldest-first on a legacy
0.19.x one (which ignores `order`). It decodes every body and prints all rows as one
ASCII JSON document: no detail reads, no validation, no de-duplication, no projection, no
protection against rows appended meanwhile. With --debug it writes one `debug: start`
line per request, as hermes-task does, so both are counted the same way.
"""

from __future__ import annotations

import json
import os
import sys
from urllib.parse import quote

import httpx

LIMIT = 500


def main(argv: list[str]) -> int:
    url, sid, contract = argv[1], argv[2], argv[3]
    debug = "--debug" in argv[4:]
    headers = {"X-Hermes-Session-Token": os.environ["HERMES_DASHBOARD_TOKEN"], "Accept": "application/json"}
    pages: list[list[object]] = []
    offset = 0
    with httpx.Client(
        base_url=url, headers=headers, timeout=30.0, follow_redirects=False, trust_env=False
    ) as client:
        while True:
            params: dict[str, str | int] = {
                "limit": LIMIT,
                "offset": offset,
                "order": "latest",
                "inline_images": "false",
                "include_compacted": "true",
            }
            if debug:
                sys.stderr.write(f"debug: start messages id={sid} offset={offset} limit={LIMIT}\n")
            response = client.get(f"/api/sessions/{quote(sid, safe='')}/messages", params=params)
            response.raise_for_status()
            rows = response.json()["messages"]
            pages.append(rows)
            offset += len(rows)
            if len(rows) < LIMIT:
                break
    if contract == "current":
        pages.reverse()  # newest-first pages, each chronological inside
    out = [row for page in pages for row in page]
    sys.stdout.write(json.dumps({"rows": out}, ensure_ascii=True, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
