"""The support matrix (tests/support/matrix.py): rendered from a run's outcomes, never by hand."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.support import matrix


def _spec(name: str, **features: bool) -> SimpleNamespace:
    base = {"around": False, "rewrites_source": True}
    return SimpleNamespace(dist=name, version="1", features=SimpleNamespace(**{**base, **features}))


def test_the_matrix_renders_outcomes_and_refusals_and_fails_on_a_failure() -> None:
    specs = {"a": _spec("a", around=True, rewrites_source=False), "b": _spec("b")}
    results = {n: {f: ["passed"] for f in matrix.FEATURES} for n in specs}
    results["b"]["follow"] = ["passed", "failed"]
    table = matrix.render(results, specs)
    rows = table.splitlines()
    assert rows[0].startswith("| backend | `show` |")
    assert rows[2].startswith("| a==1 | ")
    cells_a = [c.strip() for c in rows[2].split("|")[2:-1]]
    cells_b = [c.strip() for c in rows[3].split("|")[2:-1]]
    columns = list(matrix.FEATURES)
    assert cells_a[columns.index("around")] == "yes"
    assert cells_a[columns.index("source_rewrite")] == "n/a (source kept)"
    assert cells_b[columns.index("around")] == "no (exit 6)"
    assert cells_b[columns.index("follow")] == "FAILS"
    assert cells_b[columns.index("show")] == "yes"
    assert matrix.complete(results, specs)
    del results["b"]["older"]
    assert not matrix.complete(results, specs)
    assert matrix.cell("older", [], specs["b"].features) == "?"
    assert json.loads(json.dumps(results)) == results


def test_only_the_marked_block_is_rewritten(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text("before\n<!-- support-matrix -->\nold\n<!-- /support-matrix -->\nafter\n")
    monkeypatch.setattr(matrix, "DOCS", (doc,))
    assert matrix.stale_docs("new\n") == [doc]
    assert matrix.write_docs("new\n") == [doc]
    assert doc.read_text() == "before\n<!-- support-matrix -->\nnew\n<!-- /support-matrix -->\nafter\n"
    assert matrix.stale_docs("new\n") == []
    assert matrix.write_docs("new\n") == []


def test_the_committed_docs_hold_the_block() -> None:
    assert matrix.DOCS
    for path in matrix.DOCS:
        assert matrix.committed(path), path  # the block is there, and not empty
