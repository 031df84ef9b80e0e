"""The floor for `hermes-task older ROOT --tip TIP --all --json` on a rotated task: the three
segments paged with a plain httpx loop, oldest segment first.

    python bench/minimal_lineage.py URL current|legacy ROOT MID TIP [--debug]

(token in HERMES_DASHBOARD_TOKEN). Each segment is paged exactly as `bench/minimal_pager.py`
pages one session (500-row pages until a short one); the rows of all three are printed as one
ASCII JSON document. No detail read, no proof, no validation, no de-duplication: a backend
that merges ancestors into a segment's pages would make it print them twice.
"""

from __future__ import annotations

import json
import os
import sys
from urllib.parse import quote

import httpx

LIMIT = 500


def segment(client: httpx.Client, sid: str, contract: str, debug: bool) -> list[object]:
    pages: list[list[object]] = []
    offset = 0
    while True:
        params: dict[str, str | int] = {
            "limit": LIMIT,
            "offset": offset,
            "order": "latest",
            "inline_images": "false",
        }
        params["include_compacted"] = "true"
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
    return [row for page in pages for row in page]


def main(argv: list[str]) -> int:
    url, contract, sids = argv[1], argv[2], argv[3:6]
    debug = "--debug" in argv[6:]
    headers = {"X-Hermes-Session-Token": os.environ["HERMES_DASHBOARD_TOKEN"], "Accept": "application/json"}
    with httpx.Client(
        base_url=url, headers=headers, timeout=30.0, follow_redirects=False, trust_env=False
    ) as c:
        out = [row for sid in sids for row in segment(c, sid, contract, debug)]
    sys.stdout.write(json.dumps({"rows": out}, ensure_ascii=True, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
