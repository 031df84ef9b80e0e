"""`older` against both real backends: the 241-row `long` child read back to its goal, page
by page and with --all, and the `running` child paged while rows are appended to it (rows
are only appended to `running`, never ended: another test owns ending it)."""

from __future__ import annotations

import threading
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from tests.support.cli_runner import hermes_task

from hermes_task.dashboard.client import DashboardClient
from hermes_task.reading.reader import TaskReader, shown_rows
from hermes_task.reading.stream import Plan, read_batches

pytestmark = pytest.mark.integration


def stored(backend: Any, sid: str) -> list[int]:
    """Every row id of `sid` as stored, oldest first (0.19.x ignores `order`: oldest anyway;
    0.18.x ignores every parameter and answers every row at once, without `pagination`)."""
    out: list[int] = []
    while True:
        query = f"limit=500&offset={len(out)}&order=oldest&include_compacted=true&inline_images=false"
        status, body = backend.get(f"/api/sessions/{quote(sid)}/messages?{query}")
        assert status == 200, body
        assert body["session_id"] == sid
        if "pagination" not in body:  # the pre-pagination envelope: the whole transcript
            return [m["id"] for m in body["messages"]]
        out += [m["id"] for m in body["messages"]]
        if len(body["messages"]) < 500:
            return out


def ids(doc: dict[str, Any]) -> list[int]:
    return [row["id"] for row in doc["rows"]]


def test_all_reads_the_long_child_once_in_server_order_goal_first(backend: Any) -> None:
    long = backend.manifest["long"]
    run = hermes_task(backend, "older", long["id"], "--all", "--json")
    assert run.code == 0, run.stderr
    assert run.stderr == ""
    doc = run.json()
    assert ids(doc) == stored(backend, long["id"])
    assert len(doc["rows"]) == long["rows"] == 241
    assert len({(r["session_id"], r["id"]) for r in doc["rows"]}) == 241
    assert doc["rows"][0]["text"] == long["goal"]
    assert doc["coverage"] == {"unique_rows": 241, "has_older": False, "at_start": True}
    expected = [] if backend.features.order else ["legacy_backend"]
    assert [w["code"] for w in doc["warnings"]] == expected


def test_pages_one_then_more_walk_back_to_the_start(backend: Any) -> None:
    long = backend.manifest["long"]
    truth = stored(backend, long["id"])
    for args, count in (((), 100), (("--pages", "1"), 100), (("--pages", "2"), 150), (("--pages", "4"), 241)):
        if not backend.features.pagination:
            count = len(truth)  # one answer holds the whole transcript: nothing older
        run = hermes_task(backend, "older", long["id"], *args, "--json")
        assert run.code == 0, run.stderr
        doc = run.json()
        assert ids(doc) == truth[-count:]
        done = count == len(truth)
        assert doc["coverage"] == {"unique_rows": count, "has_older": not done, "at_start": done}


def test_min_text_counts_prose_rows_only(backend: Any) -> None:
    long = backend.manifest["long"]
    run = hermes_task(backend, "older", long["id"], "--min-text", "30", "--json")
    assert run.code == 0, run.stderr
    doc = run.json()
    expected = stored(backend, long["id"])
    assert ids(doc) == (expected[-150:] if backend.features.pagination else expected)
    assert sum(1 for r in doc["rows"][-150:][:100] if r["role"] == "tool") == 50


def test_terminal_output_has_the_goal_first_and_no_hint_at_the_start(backend: Any) -> None:
    long = backend.manifest["long"]
    run = hermes_task(backend, "older", long["id"], "--all")
    assert run.code == 0, run.stderr
    assert run.stdout.index(long["goal"]) < run.stdout.index("Summarised 119 modules.")
    assert "241 rows shown" in run.stdout
    assert "older rows exist" not in run.stdout


def reader_for(backend: Any, sid: str) -> TaskReader:
    http = httpx.Client(
        base_url=backend.url, headers={"X-Hermes-Session-Token": backend.token}, trust_env=False
    )
    return TaskReader(DashboardClient(http), sid)


def close_reader(reader: TaskReader) -> None:
    """Close the HTTP client of a `reader_for` reader (the reader knows only the protocol)."""
    client = reader.client
    assert isinstance(client, DashboardClient)
    client.close()


def test_paging_a_child_while_rows_are_appended_never_skips_or_repeats(backend: Any) -> None:
    sid = backend.manifest["running"]["id"]
    backend.append_rows(sid, 240)
    reader = reader_for(backend, sid)
    if not backend.features.pagination:
        _whole_transcript_reads_diff_by_identity(backend, reader, sid)
        return
    try:
        reader.refresh()
        assert reader.window.coverage == 50
        legacy = not backend.features.order
        backend.append_rows(sid, 10)
        first = reader.read_older()
        assert first is not None
        assert not first.restarted
        if legacy:  # oldest-first offsets do not move when rows are appended
            assert len(first.new_keys) == 50
            assert reader.window.head == 0
        else:  # newest-first: the page overlaps the block by the 10 new rows, and says so
            assert len(first.new_keys) == 40
            assert reader.window.head == 10
        backend.append_rows(sid, 80)  # more than a page
        second = reader.read_older()
        assert second is not None
        if legacy:
            assert not second.restarted
            assert len(second.new_keys) == 50
        else:  # the page missed its anchor: a refresh read the head (a gap), then it was merged
            assert second.restarted
            assert second.gap
            assert second.returned == 51
        outcome = read_batches(reader, Plan(batches=None, limit=500))
        assert outcome.stop == "start"
        assert outcome.warnings == []
        assert [k[1] for k in reader.window.keys] == stored(backend, sid)[: len(reader.window.keys)]
        # a refresh joins the head: on 0.19.x the 90 rows appended meanwhile are more than a
        # page, so the newest page is a gap, which older reads fill
        snap = reader.refresh()
        assert ("gap" in [w.code for w in snap.warnings]) is legacy
        outcome = read_batches(reader, Plan(batches=None, limit=500))
        assert outcome.warnings == []
        window = reader.window
        assert [k[1] for k in window.keys] == stored(backend, sid)  # every row once, in order
        assert window.at_start
        assert window.coverage == len(window.keys)
        first_row = shown_rows(window)[0]
        assert first_row.text == backend.manifest["running"]["goal"]
    finally:
        close_reader(reader)


def test_older_all_while_the_task_keeps_writing(backend: Any) -> None:
    sid = backend.manifest["running"]["id"]
    backend.append_rows(sid, 600)
    writer = threading.Thread(target=lambda: [backend.append_rows(sid, 30) for _ in range(3)])
    writer.start()
    try:
        runs = [hermes_task(backend, "older", sid, "--all", "--json") for _ in range(3)]
    finally:
        writer.join()
    truth = stored(backend, sid)
    for run in runs:
        assert run.code == 0, run.stderr
        doc = run.json()
        got = ids(doc)
        assert got == truth[: len(got)]  # a prefix of what is stored: nothing skipped or repeated
        assert doc["rows"][0]["text"] == backend.manifest["running"]["goal"]
        assert doc["coverage"]["at_start"] is True
        assert doc["coverage"]["has_older"] is False


def _whole_transcript_reads_diff_by_identity(backend: Any, reader: TaskReader, sid: str) -> None:
    """The pre-pagination envelope: each answer is every active row; nothing is older, and
    a later read adds exactly the appended rows (by identity)."""
    try:
        snap = reader.refresh()
        assert [k[1] for k in reader.window.keys] == stored(backend, sid)
        assert reader.window.at_start
        assert [w.code for w in snap.warnings] == ["legacy_backend"]
        assert reader.read_older() is None
        backend.append_rows(sid, 90)
        again = reader.refresh()
        assert len(again.new_keys) == 90
        assert "gap" not in [w.code for w in again.warnings]
        assert [k[1] for k in reader.window.keys] == stored(backend, sid)
        assert shown_rows(reader.window)[0].text == backend.manifest["running"]["goal"]
    finally:
        close_reader(reader)


def test_streamed_pages_equal_the_stored_transcript_page_by_page(backend: Any) -> None:
    """`older --all`'s stream (reading/stream.py) over small pages, so the 241-row child takes
    several oldest-first pages each re-reading its anchor: every stored row once, in order, the
    rows held bounded by one page plus the newest. A backend whose first answer is the whole
    transcript (0.18.x) holds the start already: nothing to stream."""
    from hermes_task.reading.stream import StreamStats, stream_pages, streamable

    long = backend.manifest["long"]
    reader = reader_for(backend, long["id"])
    try:
        reader.refresh()
        truth = stored(backend, long["id"])
        if not streamable(reader):
            assert reader.reached_start
            assert [r.id for r in reader.rows()] == truth
            return
        stats = StreamStats()
        got = [row.id for rows in stream_pages(reader, stats, limit=60) for row in rows]
        assert got == truth
        assert stats.pages >= 3
        assert stats.held_max <= 60 + 50
    finally:
        close_reader(reader)
