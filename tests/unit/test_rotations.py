"""Rotations met inside one read cycle: a redirected messages answer, a second rotation during
the same refresh, and 0.19's `latest-descendant` answer that walks past the task into a
grandchild (issue 16, item 10). The fake dashboard is test_poll's."""

from __future__ import annotations

import json

import pytest

from hermes_task.reading.reader import TaskReader
from tests.unit.test_poll import PARENT, Clock, Lineage, X, Y, Z, follow, running

G = "20260101_000004_dddddd"  # a task delegated by a newer segment: a grandchild of the parent


def redirected(legacy: bool) -> tuple[Lineage, list[tuple[str, int]]]:
    """X rotated into Y; X's messages now answer for Y, and no hint names Y."""
    client, first = running(legacy)
    client.rotate(X, Y)
    later = client.append(Y, 2)
    client.redirect[X] = Y
    client.descendants.pop(X)
    return client, first + later


@pytest.mark.parametrize("legacy", [False, True], ids=["current", "legacy"])
def test_a_redirected_answer_is_proven_and_its_page_is_not_read_again(legacy: bool) -> None:
    client, rows = redirected(legacy)
    reader = TaskReader(client.client(), X, hint=False)
    snap = reader.refresh()
    assert reader.path == (X, Y)
    # legacy pages hold one segment's rows: X's are read as an earlier segment, on demand
    assert [(r.session_id, r.id) for r in reader.rows()] == (rows[-2:] if legacy else rows)
    assert snap.failure is None
    assert reader.redirects == {X: Y}
    # current: the answer to X's newest page is Y's newest page, used as it is; legacy: its
    # offset was X's, so Y's page is read once (the old code read it twice: the cycle restarted)
    assert client.calls().count(("messages", Y)) == (1 if legacy else 0)
    client.log.clear()
    reader.refresh()
    assert [c for c in client.calls() if c[0] == "messages"] == [("messages", Y)]


def test_a_segment_known_to_redirect_is_not_read_again_as_an_earlier_segment() -> None:
    client, rows = redirected(legacy=True)
    reader = TaskReader(client.client(), X, hint=False)
    reader.refresh()
    while reader.read_older() is not None:
        pass
    assert client.calls().count(("messages", X)) == 1  # the one that answered for Y
    assert reader.rows()[-2:]
    assert [(r.session_id, r.id) for r in reader.rows()][-2:] == rows[-2:]


def test_a_second_rotation_inside_one_refresh_ends_honestly_then_is_followed() -> None:
    """X's answer names Y; Y rotates into Z while the cycle reads it. The old code restarted
    the cycle twice and ended it with no tip (an internal error)."""
    client, rows = redirected(legacy=False)

    def second() -> None:
        client.rotate(Y, Z)
        client.descendants.pop(Y)
        client.redirect.update({X: Z, Y: Z})

    client.after[("messages", X)] = second
    reader = TaskReader(client.client(), X, hint=False)
    snap = reader.refresh()
    assert reader.tip is not None
    assert snap.failure is None
    assert reader.path in ((X, Y), (X, Y, Z))
    if reader.path == (X, Y):  # Y is seen ended by compression: said, never hidden
        assert [w.code for w in snap.warnings] == ["partial_history"]
        reader.refresh()
    assert reader.path == (X, Y, Z)
    assert reader.state() == "running"
    assert [(r.session_id, r.id) for r in reader.rows()] == rows


def test_a_legacy_second_rotation_during_the_redirect_is_proven_on_fresh_details() -> None:
    """Y's detail was read (running) before Y rotated into Z; Y's re-read page then answers
    for Z. The proof must not use the stale detail (the old code: identity_mismatch, exit 5)."""
    client, _ = redirected(legacy=True)
    z_rows: list[tuple[str, int]] = []

    def second() -> None:
        client.rotate(Y, Z)
        z_rows.extend(client.append(Z, 1))
        client.redirect.update({X: Z, Y: Z})

    client.after[("detail", Y)] = second
    reader = TaskReader(client.client(), X, hint=False)
    snap = reader.refresh()
    assert snap.failure is None
    assert reader.path == (X, Y, Z)
    assert reader.redirects == {X: Y, Y: Z}
    assert reader.tip is not None
    assert reader.tip.id == Z
    assert [(r.session_id, r.id) for r in reader.rows()] == z_rows


def test_a_redirect_to_an_unproven_session_is_still_an_identity_mismatch() -> None:
    client, _ = running()
    client.add(Z, parent=None)
    client.append(Z, 2)
    client.redirect[X] = Z
    clock = Clock([lambda: client.end(X, "agent_close")])
    outcome, recorder = follow(client, clock, hint=False)
    assert outcome.exit_code == 5
    assert all(key[0] != Z for key in recorder.row_keys)


# -- 0.19's latest-descendant path -------------------------------------------------------------


def grandchild_chain() -> tuple[Lineage, list[tuple[str, int]]]:
    """X -> Y -> Z by compression; Z delegated G (its `_delegate_from` is Z): 0.19's hint
    from X walks into G."""
    client = Lineage(legacy=True)  # 0.19.0: the newest child by `started_at`, the path walked
    client.add(X)
    rows = client.append(X, 2)
    client.rotate(X, Y)
    rows += client.append(Y, 2)
    client.rotate(Y, Z)
    rows += client.append(Z, 2)
    client.add(G, parent=Z, started=9.0)
    client.details[G]["model_config"] = json.dumps({"_delegate_from": Z})
    client.append(G, 3)
    client.descendants.clear()
    client.paths[X] = [X, Y, Z, G]
    return client, rows


def test_a_hint_into_a_grandchild_proves_the_newest_segment_on_its_path() -> None:
    client, rows = grandchild_chain()
    reader = TaskReader(client.client(), X)
    snap = reader.refresh()
    assert snap.failure is None
    assert reader.path == (X, Y, Z)  # the old code ignored the path: X alone, partial history
    assert reader.candidate.status == "proven"
    assert reader.candidate.id == Z
    assert reader.candidate.reason == "latest_descendant"
    reader.fill()
    shown = [(r.session_id, r.id) for r in reader.rows()]
    assert all(sid != G for sid, _ in shown)
    assert set(shown) == set(rows)
    assert ("detail", G) in client.calls()  # the hint's own answer was tried first, and refused


def test_path_segments_that_do_not_prove_are_never_adopted() -> None:
    client, _ = grandchild_chain()
    client.details[Z]["source"] = "cli"  # Z no longer continues Y: only Y proves
    reader = TaskReader(client.client(), X)
    reader.refresh()
    assert reader.path == (X, Y)
    assert reader.candidate.id == Y


def test_a_hint_path_that_names_unrelated_or_invalid_ids_changes_nothing() -> None:
    client, _ = grandchild_chain()
    client.add(PARENT, parent=None)
    client.paths[X] = [X, "bad\x00id", PARENT, G]
    reader = TaskReader(client.client(), X)
    snap = reader.refresh()
    assert reader.path == (X,)
    assert [w.code for w in snap.warnings] == ["legacy_backend", "partial_history"]
    assert ("detail", "bad\x00id") not in client.calls()
