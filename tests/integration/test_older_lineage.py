"""`older --all` of a delegated child rotated twice (root -> mid -> tip, the last rotation
through Hermes' real compression path), streamed (`reading/stream.py`) against the
windowed path on the real backends: the same bytes, piped and `--json`. In-process, so the
stream's pages can be small (several per segment) and the windowed path can be forced."""

from __future__ import annotations

import json
from typing import Any

import pytest
from tests.support.cli_runner import backend_store_env, invoke

from hermes_task.cli import older as run_older
from hermes_task.reading import stream as older_stream
from hermes_task.reading import stream as stream_mod
from hermes_task.reading.stream import LineageRows

pytestmark = pytest.mark.integration

GOAL = "Count the TODO markers under src/ and list the files"


def _runs(backend: Any, root: str, tip: str) -> list[Any]:
    env = {"HERMES_DASHBOARD_TOKEN": backend.token, **backend_store_env(backend)}
    args = ("older", root, "--tip", tip, "--all")
    return [invoke(*args, "--json", env=env, url=backend.url), invoke(*args, env=env, url=backend.url)]


def test_a_rotated_childs_older_all_streams_the_windowed_bytes(
    backend: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    unit = backend.held_unit([GOAL])
    root = unit["children"][0]
    mid = backend.rotate(root, before=30, after=30, how="by-hand")["new"]
    tip = backend.rotate(mid, before=20, after=80, how="compressor")["new"]
    monkeypatch.setattr(stream_mod, "STREAM_LIMIT", 30)
    plans: list[Any] = []

    class Spy(LineageRows):
        def read(self) -> Any:
            plans.append(super().read())
            return plans[-1]

    monkeypatch.setattr(older_stream, "LineageRows", Spy)
    streamed = _runs(backend, root, tip)
    monkeypatch.setattr(run_older, "stream", lambda *a, **k: False)
    windowed = _runs(backend, root, tip)
    for got, want in zip(streamed, windowed, strict=True):
        assert got.exit_code == want.exit_code == 0, got.output
        assert got.stdout == want.stdout
        assert got.stderr == want.stderr
    doc = json.loads(streamed[0].stdout)
    assert doc["task"]["lineage"] == [root, mid, tip]
    assert doc["task"]["goal"] == GOAL
    assert doc["coverage"]["at_start"] is True
    assert [r["text"] for r in doc["rows"]].count(GOAL) >= 1
    assert all(s["rows_shown"] for s in doc["task"]["segments"])
    # streamed wherever the backend pages (0.18.x answers every row at once: nothing older)
    assert len(plans) == (2 if backend.features.pagination else 0)
    assert all(plan.blocked is None for plan in plans)  # each reached the start
