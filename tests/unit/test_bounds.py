"""Partial states survive every bound (issue 25, item 6): a spent detail budget or path bound
is `bound_reached` beside the partial state it interrupted, `coverage.at_start` is true only
when the lineage's first row was read, and a redirect past the 32-node path bound is
`bound_reached`, never `identity_mismatch`; a long lineage is proven in steps where the hint
or the store names its segments. Also: an earlier segment counts as held by its active row
ids (archived rows are not in `message_count`), `older` keeps no stale `partial_history`
after a restart proved a newer segment, and `partial_ancestors` says why it stands."""

from __future__ import annotations

import json
from typing import Any

import pytest

from hermes_task.reading.hints import StoreHints
from hermes_task.reading.reader import TaskReader
from hermes_task.reading.stream import Plan, combine_warnings, read_batches
from tests.support.cli_runner import invoke
from tests.support.dashboard import Dashboard, serving
from tests.unit.test_forks import DashboardStore
from tests.unit.test_poll import Lineage, X, Y, Z

CHAT = [f"20261202_{i:06d}_abcdef" for i in range(45)]  # a plain chat's segments, oldest first


def codes(items: Any) -> list[str]:
    return [w.code for w in items]


def plain_chat(rotations: int, *, legacy: bool) -> Dashboard:
    """A plain `cli` chat rotated `rotations` times (no markers, a null model config). Like
    both real backends, every segment's messages answer for the newest one (merged with
    every earlier segment's rows where the backend merges); `latest-descendant` walks the
    chain to its tip."""
    dash = Dashboard(contract="legacy" if legacy else "current")
    ids = CHAT[: rotations + 1]
    for i, sid in enumerate(ids):
        last = i == rotations
        dash.put(
            sid,
            source="cli",
            parent_session_id=ids[i - 1] if i else None,
            model_config=None,
            started_at=100.0 + i,
            ended_at=None if last else 100.5 + i,
            end_reason=None if last else "compression",
        )
        dash.row(sid, role="user", content=f"turn {i}")
        dash.row(sid, role="assistant", content=f"answer {i}")
        dash.redirect[sid] = ids[-1]
        dash.paths[sid] = ids[i:]
    if not legacy:
        dash.merged[ids[-1]] = ids
    return dash


@pytest.mark.parametrize("legacy", [False, True], ids=["current", "legacy"])
def test_a_redirect_past_the_path_bound_is_bound_reached_not_identity_mismatch(legacy: bool) -> None:
    """39 rotations: the newest segment is 40 nodes from the root, past one proof walk. With
    no source naming a segment in between, nothing of the answer can be proven: the old
    code ended with identity_mismatch (exit 5) and no rows."""
    dash = plain_chat(39, legacy=legacy)
    reader = TaskReader(dash.client(), CHAT[0], hint=False)
    snap = reader.refresh()
    assert snap.failure is None
    assert reader.path == (CHAT[0],)
    assert "bound_reached" in codes(snap.warnings)
    assert "partial_history" in codes(snap.warnings)
    doc = reader.document(snap.warnings)
    assert doc.rows == []  # every row it has is a page of the unproven newest segment
    assert (doc.coverage.has_older, doc.coverage.at_start) == (False, False)
    assert "partial_ancestors" not in codes(doc.warnings)
    assert reader.reached_start  # nothing can be paged: no restart loop
    with serving(dash.handle):
        run = invoke("show", CHAT[0], "--no-hint", "--no-store", "--json")
    assert run.exit_code == 0, run.stderr
    assert "bound_reached" in codes(_warnings(run.stdout))


@pytest.mark.parametrize("legacy", [False, True], ids=["current", "legacy"])
@pytest.mark.parametrize("source", ["hint", "store"])
def test_a_long_lineage_is_proven_in_steps_where_a_source_names_its_segments(
    legacy: bool, source: str
) -> None:
    dash = plain_chat(39, legacy=legacy)
    store = StoreHints(DashboardStore(dash)) if source == "store" else None
    reader = TaskReader(dash.client(), CHAT[0], hint=source == "hint", store=store)
    snap = reader.refresh()
    assert snap.failure is None
    assert reader.path == tuple(CHAT[:40])
    assert "bound_reached" not in codes(snap.warnings)
    rows = [(r.session_id, r.text) for r in reader.rows()]
    assert (CHAT[39], "answer 39") in rows
    assert all(sid in reader.path for sid, _ in rows)


def test_at_19_rotations_one_walk_proves_the_redirect() -> None:
    dash = plain_chat(19, legacy=True)
    reader = TaskReader(dash.client(), CHAT[0], hint=False)
    snap = reader.refresh()
    assert (snap.failure, "bound_reached" in codes(snap.warnings)) == (None, False)
    assert reader.path == tuple(CHAT[:20])


def _warnings(stdout: str) -> list[Any]:
    from types import SimpleNamespace

    return [SimpleNamespace(**w) for w in json.loads(stdout)["warnings"]]


def cold_open() -> Lineage:
    """Y continues X by compression; Y is opened directly (a cold open), running."""
    client = Lineage(legacy=True)
    client.add(X)
    client.append(X, 3)
    client.rotate(X, Y)
    client.append(Y, 3)
    return client


def test_a_budget_spent_during_the_ancestor_check_keeps_partial_ancestors_and_the_start_unclaimed() -> None:
    """Y's cycle reads Y, Y again (fresh), then X for the ancestor check: with a budget of
    two reads that check cannot be made. The old code took "not known" for "no ancestor":
    `partial_ancestors` dropped and `at_start` true."""
    client = cold_open()
    reader = TaskReader(client.client(), Y, hint=False)
    reader.detail_budget = 2
    snap = reader.refresh()
    doc = reader.document(snap.warnings)
    assert "bound_reached" in codes(doc.warnings)
    ancestors = next(w for w in doc.warnings if w.code == "partial_ancestors")
    assert "not known" in ancestors.message
    assert doc.coverage.at_start is False
    assert "partial_ancestors" in codes(snap.warnings)  # what follow reports too
    reader.detail_budget = 100  # the next cycle can make the check: now it is known
    doc = reader.document(reader.refresh().warnings)
    ancestors = next(w for w in doc.warnings if w.code == "partial_ancestors")
    assert "open the task's first segment" in ancestors.message
    assert doc.coverage.at_start is False


def test_partial_ancestors_gives_no_advice_to_open_the_first_segment_to_one_who_did() -> None:
    """The root's own pages answer for its newer segment (a backend that redirects): the
    root's rows cannot be read as its own. The user opened the first segment already."""
    client = Lineage(legacy=True)
    client.add(X)
    client.append(X, 3)
    client.rotate(X, Y)
    client.append(Y, 3)
    client.redirect[X] = Y
    client.descendants.pop(X)
    reader = TaskReader(client.client(), X, hint=False)
    reader.refresh()
    read_batches(reader, Plan(batches=None, limit=500))
    doc = reader.document([])
    ancestors = next(w for w in doc.warnings if w.code == "partial_ancestors")
    assert "open the task's first segment" not in ancestors.message
    assert X in ancestors.message
    assert doc.coverage.at_start is False


def test_an_earlier_segment_counts_as_held_by_its_active_rows_only() -> None:
    """X was compacted in place (4 archived rows) before it rotated; the merged tip page
    carries those archived rows and one active row of X. X's `message_count` (4) counts
    active rows only: the old code counted 5 held rows, skipped X and claimed the start
    with three of X's active rows (and its first row) never read."""
    client = Lineage(legacy=False)
    client.add(X)
    archived = [client.row(X, role="tool", content=f"old {i}", active=0, compacted=1) for i in range(4)]
    goal = client.row(X, role="user", content="the goal")
    active = [goal, *client.append(X, 3)]
    client.rotate(X, Y)
    client.append(Y, 3)
    client.end(Y, "agent_close", at=9.0)
    client.rows["view"] = [r for r in client.rows[X] if r["id"] in {k[1] for k in [*archived, active[-1]]}]
    client.merged[Y] = ["view", Y]
    reader = TaskReader(client.client(), X, tips=[Y])
    reader.refresh()
    read_batches(reader, Plan(batches=None, limit=500))
    shown = {(r.session_id, r.id) for r in reader.document([]).rows}
    assert set(active) <= shown
    assert ("messages", X) in client.calls()
    assert reader.document([]).coverage.at_start is True
    assert reader.read_goal() == "the goal"


def test_older_keeps_no_stale_partial_history_after_a_restart_proved_a_newer_segment() -> None:
    """X ended by compression with nothing newer known: the first cycle says
    `partial_history`. While paging, X's continuation Z appears and X's pages answer for it:
    the restart proves Z. The old document still said `partial_history`."""
    client = Lineage(legacy=True)
    client.add(X)
    client.append(X, 120)
    client.end(X, "compression")
    client.descendants.clear()

    def continued() -> None:
        client.add(Z, parent=X, started=2.0)
        client.append(Z, 2)
        client.redirect[X] = Z

    reader = TaskReader(client.client(), X, hint=False)
    snap = reader.refresh()
    assert "partial_history" in codes(snap.warnings)
    continued()
    outcome = read_batches(reader, Plan(batches=1))
    assert reader.path == (X, Z)
    doc = reader.document(combine_warnings(snap.warnings, outcome.warnings))
    assert "partial_history" not in codes(doc.warnings)
    assert doc.task.state == "running"
    # still partial: the warning stays, once, after legacy_backend
    client.end(Z, "compression")
    doc = reader.document(combine_warnings(reader.refresh().warnings))
    assert codes(doc.warnings)[:2] == ["legacy_backend", "partial_history"]
