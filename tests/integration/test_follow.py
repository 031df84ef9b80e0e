"""`follow` against every real backend, as a subprocess.

Tests that end a child start their own server on a copy of the seeded home, so the shared
`backend`'s `running` child stays running for every other test; the shared one is only read.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from typing import Any

import pytest
from tests.support.cli_runner import cli_env, hermes_task

pytestmark = pytest.mark.integration


class Follow:
    """A running `hermes-task follow --json` whose NDJSON lines are read as they arrive."""

    def __init__(self, server: Any, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "hermes_task", "follow", *args, "--json", "--url", server.url],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            env=cli_env(server.token),
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.events: list[dict[str, Any]] = []
        self.pump = threading.Thread(target=self._pump, daemon=True)
        self.pump.start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def rows_until(self, count: int, timeout: float = 30.0) -> list[dict[str, Any]]:
        """Read events until `count` rows arrived (they are flushed per line, while running)."""
        deadline = time.monotonic() + timeout
        while sum(e["type"] == "row" for e in self.events) < count:
            line = self.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            assert line is not None, f"follow ended early: {self.events}"
            self.events.append(json.loads(line))
        return [e for e in self.events if e["type"] == "row"]

    def state_seen(self, timeout: float = 30.0) -> None:
        """Read events until the first `state` one: the follow's first read is done."""
        deadline = time.monotonic() + timeout
        while not any(e["type"] == "state" for e in self.events):
            line = self.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            assert line is not None, f"follow ended early: {self.events}"
            self.events.append(json.loads(line))

    def finish(self, timeout: float = 60.0) -> tuple[int, list[dict[str, Any]], str]:
        code = self.proc.wait(timeout=timeout)
        while (line := self.lines.get(timeout=10)) is not None:
            self.events.append(json.loads(line))
        assert self.proc.stderr is not None
        return code, self.events, self.proc.stderr.read()

    def close(self) -> None:
        """Kill the process if it still runs, and close its pipes."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)
        self.pump.join(timeout=10)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


def keys(events: list[dict[str, Any]]) -> list[tuple[str, int]]:
    return [(e["session_id"], e["id"]) for e in events if e["type"] == "row"]


def test_rows_arrive_once_as_they_are_written_until_the_task_ends(fresh: Any) -> None:
    running = fresh.manifest["running"]
    sid, seeded = running["id"], running["rows"]
    plain = Follow(fresh, sid, "--interval", "0.5")
    strict = Follow(fresh, sid, "--interval", "0.5", "--exit-status")
    try:
        plain.rows_until(seeded)
        strict.rows_until(seeded)
        assert fresh.append_rows(sid, 3) == seeded + 3
        plain.rows_until(seeded + 3)  # printed while the task still runs
        assert fresh.append_rows(sid, 2) == seeded + 5
        assert fresh.end_session(sid, "agent_close")["end_reason"] == "agent_close"
        for follow in (plain, strict):
            code, events, stderr = follow.finish()
            assert code == 0, stderr
            assert stderr == ""
            rows = keys(events)
            assert len(rows) == seeded + 5
            assert len(set(rows)) == len(rows)
            assert {k[0] for k in rows} == {sid}
            assert events[0]["type"] == "state"
            assert events[0]["state"] == "running"
            assert events[-1] == {
                "type": "result",
                "state": "ended",
                "end_reason": "agent_close",
                "exit_code": 0,
                "last_read_age": None,
                "unreported": None,
            }
            states = [e["state"] for e in events if e["type"] == "state"]
            assert states == ["running", "ended"]
            warnings = [e["code"] for e in events if e["type"] == "warning"]
            assert warnings == ([] if fresh.features.order else ["legacy_backend"])
    finally:
        plain.close()
        strict.close()


def test_exit_status_is_8_when_the_child_did_not_close_itself(fresh: Any) -> None:
    sid = fresh.manifest["running"]["id"]
    follow = Follow(fresh, sid, "--interval", "0.5", "--exit-status")
    try:
        follow.rows_until(fresh.manifest["running"]["rows"])
        fresh.end_session(sid, "startup_orphan_reap")
        code, events, _ = follow.finish()
    finally:
        follow.close()
    assert code == 8
    assert events[-1] == {
        "type": "result",
        "state": "ended",
        "end_reason": "startup_orphan_reap",
        "exit_code": 8,
        "last_read_age": None,
        "unreported": None,
    }


def test_timeout_on_the_shared_running_child_exits_9(backend: Any) -> None:
    sid = backend.manifest["running"]["id"]
    started = time.monotonic()
    run = hermes_task(backend, "follow", sid, "--json", "--interval", "0.5", "--timeout", "2")
    assert time.monotonic() - started >= 2.0  # it waited out --timeout (a lower bound: never flaky)
    assert run.code == 9, run.stderr
    events = [json.loads(line) for line in run.stdout.splitlines()]
    assert events[-1] == {
        "type": "result",
        "state": "running",
        "end_reason": None,
        "exit_code": 9,
        "last_read_age": None,
        "unreported": None,
    }
    rows = keys(events)
    assert len(rows) >= backend.manifest["running"]["rows"]
    assert len(set(rows)) == len(rows)


def test_root_of_a_rotated_chain_ends_or_pauses_on_partial_history(backend: Any) -> None:
    c1 = backend.manifest["c1"]
    run = hermes_task(
        backend, "follow", c1["root"], "--no-store", "--json", "--exit-status", "--interval", "0.5"
    )
    events = [json.loads(line) for line in run.stdout.splitlines()]
    if backend.features.hint_follows_delegates:
        # latest-descendant walks to the tip (any child), and each hop is proven.
        assert run.code == 0, run.stderr
        # The ended state comes after the rows of the final read, right before the result.
        assert events[-2]["type"] == "state"
        assert events[-2]["lineage"] == [c1["root"], c1["mid"], c1["tip"]]
        assert events[-1] == {
            "type": "result",
            "state": "ended",
            "end_reason": "agent_close",
            "exit_code": 0,
            "last_read_age": None,
            "unreported": None,
        }
    else:
        # the hint does not move for delegated chains, and the store is off: paused on
        # partial history (tests/integration/test_store.py follows the same chain with it).
        assert run.code == 9
        assert [e["code"] for e in events if e["type"] == "warning"] == [
            "partial_history",
            "store_unavailable",
        ]
        assert events[-1] == {
            "type": "result",
            "state": "unknown",
            "end_reason": "compression",
            "exit_code": 9,
            "last_read_age": None,
            "unreported": None,
        }
        assert {k[0] for k in keys(events)} == {c1["root"]}
        # Not seen ending: 9 without --exit-status too, never 0.
        plain = hermes_task(backend, "follow", c1["root"], "--no-store", "--json", "--interval", "0.5")
        assert plain.code == 9, plain.stderr


def test_a_proven_tip_continues_the_same_output_without_duplicates(backend: Any) -> None:
    c1 = backend.manifest["c1"]
    run = hermes_task(backend, "follow", c1["root"], "--tip", c1["tip"], "--json", "--exit-status")
    assert run.code == 0, run.stderr
    events = [json.loads(line) for line in run.stdout.splitlines()]
    rows = keys(events)
    assert len(set(rows)) == len(rows)
    states = [e for e in events if e["type"] == "state"]
    assert states[-1]["lineage"] == [c1["root"], c1["mid"], c1["tip"]]
    assert states[-1]["candidate"] == {
        "id": c1["tip"],
        "status": "proven",
        "reason": None,
        "source": "tip_option",
    }
    if backend.features.merges_ancestors:
        assert {k[0] for k in rows} == {c1["root"], c1["mid"], c1["tip"]}
    else:  # the tip is proven before the first page: its own rows only
        assert {k[0] for k in rows} == {c1["tip"]}
    assert events[-1] == {
        "type": "result",
        "state": "ended",
        "end_reason": "agent_close",
        "exit_code": 0,
        "last_read_age": None,
        "unreported": None,
    }


def test_an_unknown_child_ends_after_the_start_timeout_with_exit_4(backend: Any) -> None:
    unknown = "20000101_000000_000000"
    args = ("follow", unknown, "--json", "--interval", "0.5")
    for bound in (("--start-timeout", "1.5"), ("--timeout", "1.5")):  # never 9: not known running
        run = hermes_task(backend, *args, *bound)
        assert run.code == 4, (bound, run.stderr)
        events = [json.loads(line) for line in run.stdout.splitlines()]
        assert [e["type"] for e in events] == ["error", "error", "result"]  # the 404 is reported once
        assert events[0]["code"] == "not_found"
        assert events[0]["retryable"] is True
        assert events[1]["code"] == "not_found"
        assert unknown in events[1]["message"]
        assert events[2] == {
            "type": "result",
            "state": "unknown",
            "end_reason": None,
            "exit_code": 4,
            "last_read_age": None,
            "unreported": None,
        }


def test_an_unknown_profile_stops_the_follow_at_once(backend: Any) -> None:
    run = hermes_task(
        backend, "follow", backend.manifest["c1"]["root"], "--json", "--profile", "nosuchprofile"
    )
    assert run.code == 4  # at once: a retry loop would run into the harness's own timeout
    events = [json.loads(line) for line in run.stdout.splitlines()]
    assert [e["type"] for e in events] == ["error", "result"]
    assert events[0]["code"] == "profile_not_found"
    assert events[0]["retryable"] is False
