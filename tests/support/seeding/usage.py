"""Usage figures per segment, written by Hermes' own ``SessionDB.update_token_counts`` (issue 28).

Seeded sessions start at 0 tokens and no cost (no API call was made). ``seed_usage`` gives the
segments of three tasks of parent P figures of their own, the way Hermes' gateway path writes
cumulative totals (``absolute=True``), after every other scenario has written its rows:

* ``c1`` (root, mid, tip): tokens, calls and an estimated cost (``cost_status`` ``estimated``)
  on each of its three segments;
* ``c2`` (root, tip): an actual cost as well on both (``cost_status`` ``actual``);
* ``long``: tokens and calls, but a cost Hermes could not price (``cost_status`` ``unknown``,
  no estimate: the package stores 0 for it);

``manifest["usage"]`` maps each segment id to the figures written (the keyword arguments, so a
test sums them itself). The keyword names are the same in every supported package's signature
(hermes-agent 0.18.2 and 0.19.0, axisrow 0.20.1.2, iot 0.22.2.post1); a package without the
method fails the seed, never skips it.
"""

from __future__ import annotations

from typing import Any

from tests.support.seeding.common import SeedError
from tests.support.seeding.seeder import Seeder

# (input, output, cache read, cache write, reasoning, API calls, estimated cost, actual cost, status)
FIGURES: dict[str, tuple[int, int, int, int, int, int, float | None, float | None, str]] = {
    "c1.root": (1200, 150, 400, 60, 20, 4, 0.0125, None, "estimated"),
    "c1.mid": (2100, 240, 900, 0, 35, 5, 0.021, None, "estimated"),
    "c1.tip": (640, 75, 300, 10, 5, 2, 0.0066, None, "estimated"),
    "c2.root": (800, 60, 0, 0, 0, 3, 0.01, 0.0093, "actual"),
    "c2.tip": (500, 45, 100, 0, 0, 2, 0.006, 0.0061, "actual"),
    "long.id": (5000, 300, 0, 0, 0, 120, None, None, "unknown"),
}
NAMES = (
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
    "api_call_count",
    "estimated_cost_usd",
    "actual_cost_usd",
    "cost_status",
)


def seed_usage(s: Seeder, manifest: dict[str, Any]) -> None:
    """Write FIGURES through the package's own ``update_token_counts`` and record them."""
    update = getattr(s.db, "update_token_counts", None)
    if update is None:
        raise SeedError("this package's SessionDB has no update_token_counts")
    written: dict[str, dict[str, Any]] = {}
    for key, values in FIGURES.items():
        task, segment = key.split(".")
        sid = manifest[task][segment]
        figures = dict(zip(NAMES, values, strict=True))
        update(sid, absolute=True, **figures)
        row = s.session(sid)
        stored = tuple(row[name] for name in NAMES[:6])
        if stored != values[:6]:
            raise SeedError(f"update_token_counts did not write {key}'s figures: {stored!r}")
        written[sid] = figures
    manifest["usage"] = written
