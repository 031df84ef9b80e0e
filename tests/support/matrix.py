"""The support matrix: which feature works on which real backend, from the suite's results.

Integration tests carry ``@pytest.mark.feature(NAME)`` (or get a column from their module,
``MODULE_FEATURES``). ``record`` collects each (backend, feature) outcome of a run;
``render`` turns complete results into the Markdown table that README.md and
docs/backends.md hold between ``<!-- support-matrix -->`` markers. A cell is ``yes`` when
every test of that feature passed on that backend and the backend has the feature,
``no (exit 6)`` when every test passed and they proved the honest refusal (the backend lacks
it: ``ABSENT_WHEN``), and ``FAILS`` when any test failed. Each run writes its
backends' outcomes to ``RESULTS_DIR/<backend>.json`` (git-ignored), so the per-backend runs
``tools/check.sh`` makes side by side add up; ``tools/regen.py --matrix`` (``main`` here) renders them into
the docs, and ``--matrix --check`` (tools/check.sh) or a single run over every backend
(tests/conftest.py) fails when the committed table differs from the fresh one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
RESULTS_DIR = ROOT / ".matrix-results"  # one <backend>.json per backend a run covered (git-ignored)
DOCS = (ROOT / "README.md", ROOT / "docs" / "backends.md")
BLOCK = re.compile(r"(<!-- support-matrix -->\n)(.*?)(<!-- /support-matrix -->)", re.S)

# Column order and titles.
FEATURES: dict[str, str] = {
    "show": "`show`",
    "rotated_chain": "rotated chain proven",
    "source_rewrite": "`tool`→`subagent` rotation",
    "older": "`older`",
    "follow": "`follow`",
    "recover": "`recover`",
    "around": "`--around`",
}
MODULE_FEATURES = {
    "test_show": "show",
    "test_older": "older",
    "test_follow": "follow",
    "test_recover": "recover",
}
# A feature the backend lacks by design (its tests then prove the refusal or the absence).
ABSENT_WHEN: dict[str, Callable[[Any], bool]] = {
    "around": lambda f: not f.around,
    "source_rewrite": lambda f: not f.rewrites_source,
}
ABSENT_TEXT = {"around": "no (exit 6)", "source_rewrite": "n/a (source kept)"}


def feature_of(item: Any) -> str | None:
    marker = item.get_closest_marker("feature")
    if marker is not None:
        return str(marker.args[0])
    module = getattr(item, "module", None)
    name = getattr(module, "__name__", "").rsplit(".", 1)[-1]
    return MODULE_FEATURES.get(name)


def record(results: dict[str, dict[str, list[str]]], backend: str, feature: str, outcome: str) -> None:
    results.setdefault(backend, {}).setdefault(feature, []).append(outcome)


def cell(feature: str, outcomes: Iterable[str], features: Any) -> str:
    outcomes = list(outcomes)
    if not outcomes:
        return "?"
    if any(o != "passed" for o in outcomes):
        return "FAILS"
    absent = ABSENT_WHEN.get(feature)
    if absent is not None and absent(features):
        return ABSENT_TEXT[feature]
    return "yes"


def render(results: dict[str, dict[str, list[str]]], specs: dict[str, Any]) -> str:
    """The Markdown table for `results` (rows: backends in `specs` order)."""
    head = "| backend | " + " | ".join(FEATURES.values()) + " |\n"
    rule = "|---|" + "---|" * len(FEATURES) + "\n"
    body = ""
    for name, spec in specs.items():
        got = results.get(name, {})
        cells = [cell(f, got.get(f, ()), spec.features) for f in FEATURES]
        body += f"| {spec.dist}=={spec.version} | " + " | ".join(cells) + " |\n"
    return head + rule + body


def complete(results: dict[str, dict[str, list[str]]], specs: dict[str, Any]) -> bool:
    """Did this run give every backend a result for every feature?"""
    return all(results.get(n, {}).get(f) for n in specs for f in FEATURES)


def write_results(results: dict[str, dict[str, list[str]]]) -> None:
    """One file per backend, so runs of one backend each (tools/check.sh runs them side by
    side) add up to the whole matrix."""
    RESULTS_DIR.mkdir(exist_ok=True)
    for backend, features in results.items():
        (RESULTS_DIR / f"{backend}.json").write_text(json.dumps(features, indent=1, sort_keys=True) + "\n")


def load_results() -> dict[str, dict[str, list[str]]]:
    """The last recorded outcomes of every backend that has a results file."""
    if not RESULTS_DIR.is_dir():
        return {}
    return {p.stem: json.loads(p.read_text()) for p in sorted(RESULTS_DIR.glob("*.json"))}


def committed(path: Path) -> str | None:
    match = BLOCK.search(path.read_text())
    return None if match is None else match.group(2)


def stale_docs(table: str) -> list[Path]:
    """The docs whose marked block is not `table`."""
    return [p for p in DOCS if committed(p) != table]


def write_docs(table: str) -> list[Path]:
    changed = []
    for path in DOCS:
        text = path.read_text()
        new = BLOCK.sub(lambda m: m.group(1) + table + m.group(3), text)
        if new != text:
            path.write_text(new)
            changed.append(path)
    return changed


def main(argv: list[str] | None = None) -> int:
    """`python -m tests.support.matrix [--check]` (what `tools/regen.py --matrix` runs): render
    the last complete results into the docs, or with `--check` fail when a committed block differs."""
    import sys

    from tests.support import harness

    args = sys.argv[1:] if argv is None else argv
    results = load_results()
    if not complete(results, harness.BACKENDS):
        missing = sorted(set(harness.BACKENDS) - set(results))
        print(
            f"error: no complete results of every backend and feature (missing: {missing})", file=sys.stderr
        )
        return 1
    table = render(results, harness.BACKENDS)
    if "--check" in args:
        stale = stale_docs(table)
        for path in stale:
            print(f"stale: {path.relative_to(ROOT)} (support matrix)")
        if stale:
            print(table, end="")
        return 1 if stale else 0
    for path in write_docs(table):
        print(f"regenerated: {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
