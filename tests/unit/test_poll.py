"""The follow loop (`hermes_task.reading.polling`) on a fake dashboard and a fake clock.

The fake client answers like the two real backends (current: `order=latest`, merged
lineage pages; legacy: oldest-first pages, no `order`), and lets a test change the store
between cycles (from the fake sleep) or in the middle of a cycle (a hook after a request).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from hermes_task.failures import Code, HermesError
from hermes_task.reading.polling import MAX_FILL_PAGES, Follower, Outcome, PollConfig, ending_exit_code
from hermes_task.reading.reader import TaskReader
from tests.support.dashboard import Call, Dashboard, refused, status, timed_out

PARENT = "20260101_000000_parent"
X = "20260101_000001_aaaaaa"
Y = "20260101_000002_bbbbbb"
Z = "20260101_000003_cccccc"


class Lineage(Dashboard):
    """The in-memory dashboard with this suite's vocabulary: subagent segments of PARENT whose
    rows are assistant rows, compression rotations that merge the lineage into the tip's pages
    (current) or not (legacy 0.19.x), and the tip named by `latest-descendant`."""

    def __init__(self, *, legacy: bool = False) -> None:
        super().__init__(contract="legacy" if legacy else "current", first_row_id=101)
        self.legacy = legacy
        self.clock: Clock | None = None
        self.cost = 0.0  # seconds each request takes on `clock`
        self.before.append(self._spend)

    def _spend(self, call: Call) -> None:
        if self.clock is not None:
            self.clock.now += self.cost

    def add(self, sid: str, *, parent: str | None = PARENT, started: float = 1.0) -> None:
        self.put(
            sid,
            source="subagent",
            parent_session_id=parent,
            model_config=json.dumps({"max_iterations": 50, "_delegate_from": PARENT}),
            started_at=started,
            ended_at=None,
            end_reason=None,
        )
        self.merged[sid] = [sid]

    def append(self, sid: str, n: int) -> list[tuple[str, int]]:
        return [self.row(sid, role="assistant", content=f"row {self.next_id}") for _ in range(n)]

    def end(self, sid: str, reason: str, at: float = 5.0) -> None:
        self.details[sid]["end_reason"] = reason
        self.details[sid]["ended_at"] = at

    def rotate(self, old: str, new: str) -> None:
        """A compression rotation: `old` ends by compression, `new` continues it."""
        self.end(old, "compression")
        self.add(new, parent=old, started=self.details[old]["started_at"] + 1)
        if not self.legacy:
            self.merged[new] = [*self.merged[old], new]
        self.descendants[old] = new


class Clock:
    """A fake monotonic clock; `sleep` advances it and runs the step scheduled for that sleep."""

    def __init__(self, steps: Sequence[Callable[[], object]] | None = None) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []
        self.steps = list(steps or [])

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        assert seconds >= 0
        self.sleeps.append(seconds)
        self.now += seconds
        if self.steps:
            self.steps.pop(0)()


class Recorder:
    """A Reporter that records what it is told."""

    def __init__(self) -> None:
        self.events: list[tuple[Any, ...]] = []
        self.on_state: Callable[[Any], None] | None = None
        self.on_final: Callable[[], None] | None = None

    def note(self, line: str) -> None:
        """The follower's debug lines: "follow final read" comes right after the cycle that
        saw the ending, before the final read."""
        if line == "follow final read" and self.on_final is not None:
            self.on_final()

    def state(self, task: Any) -> None:
        self.events.append(("state", task.tip_id, task.state, task.end_reason))
        if self.on_state is not None:
            self.on_state(task)

    def warning(self, item: Any) -> None:
        self.events.append(("warning", item.code))

    def rows(self, rows: Any) -> None:
        self.events.append(("rows", [(r.session_id, r.id) for r in rows]))

    def error(self, error: HermesError, *, retrying: bool, delay: float | None) -> None:
        self.events.append(("error", error.code.value, retrying, delay))

    def result(self, outcome: Outcome) -> None:
        self.events.append(("result", outcome.ending, outcome.state, outcome.end_reason, outcome.exit_code))

    @property
    def row_keys(self) -> list[tuple[str, int]]:
        return [key for event in self.events if event[0] == "rows" for key in event[1]]

    def kinds(self) -> list[str]:
        return [event[0] for event in self.events]


def follow(
    client: Lineage,
    clock: Clock,
    *,
    tips: tuple[str, ...] = (),
    hint: bool = True,
    recorder: Recorder | None = None,
    **config: Any,
) -> tuple[Outcome, Recorder]:
    recorder = recorder or Recorder()
    reader = TaskReader(client.client(), X, tips=tips, hint=hint)
    follower = Follower(
        reader,
        recorder,
        PollConfig(**config),
        clock=clock,
        sleep=clock.sleep,
        jitter=lambda: 1.0,
        debug=recorder.note,
    )
    return follower.run(), recorder


def running(legacy: bool = False, rows: int = 3) -> tuple[Lineage, list[tuple[str, int]]]:
    client = Lineage(legacy=legacy)
    client.add(X)
    return client, client.append(X, rows)


# -- the whole life of a task -----------------------------------------------------------------


@pytest.mark.parametrize("legacy", [False, True], ids=["current", "legacy"])
def test_running_rows_ended_final_read_with_two_transient_failures_succeeds(legacy: bool) -> None:
    client, first = running(legacy)
    added: list[tuple[str, int]] = []
    clock = Clock([lambda: added.extend(client.append(X, 2)), lambda: client.end(X, "agent_close")])
    recorder = Recorder()

    def arm() -> None:  # the cycle that saw the ending is over: its final read fails twice
        client.faults[:] = [refused(), refused(), status(500), status(500)]  # each retried once
        added.extend(client.append(X, 1))  # flushed at close: only the final read sees it

    recorder.on_final = arm
    outcome, recorder = follow(client, clock, recorder=recorder)

    assert outcome.exit_code == 0
    assert recorder.row_keys == first + added
    assert recorder.events[-1] == ("result", "ended", "ended", "agent_close", 0)
    errors = [e for e in recorder.events if e[0] == "error"]
    assert errors == [("error", "network", True, 2.0), ("error", "server_error", True, 4.0)]
    assert clock.sleeps == [2.0, 2.0, 2.0, 4.0]


def test_four_final_read_failures_end_with_final_read_failed_and_keep_rows() -> None:
    client, first = running()
    clock = Clock([lambda: client.end(X, "agent_close")])
    recorder = Recorder()
    recorder.on_final = lambda: client.faults.extend([timed_out()] * 8)  # 4 reads, each retried
    outcome, recorder = follow(client, clock, recorder=recorder)

    assert outcome.exit_code == 7
    assert outcome.failure is not None
    assert outcome.failure.code is Code.FINAL_READ_FAILED
    assert recorder.row_keys == first
    errors = [e for e in recorder.events if e[0] == "error"]
    assert errors == [
        ("error", "timeout", True, 2.0),
        ("error", "timeout", True, 4.0),
        ("error", "timeout", True, 8.0),
        ("error", "final_read_failed", False, None),
    ]
    assert recorder.events[-1] == ("result", "failed", "ended", "agent_close", 7)


def test_a_non_transient_failure_is_final_and_keeps_rows() -> None:
    client, first = running()
    clock = Clock([lambda: client.faults.append(status(401, {"error": "session_expired"}))])
    outcome, recorder = follow(client, clock)
    assert outcome.exit_code == 3
    assert recorder.row_keys == first
    assert recorder.events[-2:] == [
        ("error", "auth_expired", False, None),
        ("result", "failed", "running", None, 3),
    ]


# -- generation fences ------------------------------------------------------------------------


@pytest.mark.parametrize("legacy", [False, True], ids=["current", "legacy"])
def test_a_cycle_that_straddles_a_rotation_reports_each_row_once(legacy: bool) -> None:
    client, first = running(legacy)
    later: list[tuple[str, int]] = []

    def rotate_mid_cycle() -> None:
        later.extend(client.append(X, 1))

        # after the messages read of X, X rotates: the fresh detail sees the compression
        def rotate() -> None:
            client.rotate(X, Y)
            later.extend(client.append(Y, 2))

        client.after[("messages", X)] = rotate

    clock = Clock([rotate_mid_cycle, lambda: client.end(Y, "agent_close")])
    outcome, recorder = follow(client, clock)

    assert outcome.exit_code == 0
    keys = recorder.row_keys
    assert keys == first + later
    assert len(keys) == len(set(keys))
    first_y = next(i for i, e in enumerate(recorder.events) if e[0] == "rows" and e[1][-1][0] == Y)
    proven = next(i for i, e in enumerate(recorder.events) if e[0] == "state" and e[1] == Y)
    assert proven < first_y  # the new segment's rows only after its proof
    assert recorder.events[-1] == ("result", "ended", "ended", "agent_close", 0)


def test_a_messages_answer_for_an_unproven_session_is_never_reported() -> None:
    client, first = running()
    client.add(Z, parent=None)
    client.append(Z, 4)
    clock = Clock([lambda: client.redirect.update({X: Z})])
    outcome, recorder = follow(client, clock)

    assert outcome.exit_code == 5
    assert recorder.row_keys == first
    assert all(key[0] != Z for key in recorder.row_keys)
    assert recorder.events[-2:] == [
        ("error", "identity_mismatch", False, None),
        ("result", "failed", "running", None, 5),
    ]


def test_a_messages_answer_for_a_proven_newer_segment_is_disposed_and_reread() -> None:
    client, first = running()
    extra: list[tuple[str, int]] = []

    def rotate() -> None:
        client.rotate(X, Y)
        extra.extend(client.append(Y, 2))
        client.redirect[X] = Y  # the server redirects the old id to its tip
        client.descendants.pop(X)  # and no hint: only the redirect tells

    clock = Clock([rotate, lambda: client.end(Y, "agent_close")])
    outcome, recorder = follow(client, clock)
    assert outcome.exit_code == 0
    assert recorder.row_keys == first + extra
    assert ("messages", Y) in client.calls()  # the redirected page was read again for Y itself


# -- transient failures and timing ------------------------------------------------------------


def test_404_is_reported_once_and_polled_at_the_interval_until_found() -> None:
    client, first = running()
    client.missing.add(X)
    clock = Clock([lambda: None, lambda: client.missing.discard(X), lambda: client.end(X, "agent_close")])
    outcome, recorder = follow(client, clock, interval=3.0)

    assert outcome.exit_code == 0
    assert recorder.kinds()[:2] == ["error", "state"]
    assert recorder.events[0] == ("error", "not_found", True, None)
    assert recorder.row_keys == first
    assert clock.sleeps == [3.0, 3.0, 3.0]


def test_the_interval_counts_from_the_start_of_a_cycle() -> None:
    client, _ = running()
    client.cost = 0.25
    clock = Clock([lambda: None, lambda: client.end(X, "agent_close")])
    client.clock = clock
    follow(client, clock, interval=2.0)
    reads_per_cycle = 3  # detail, newest page, fresh detail (the anchor's detail is the first)
    assert clock.sleeps[0] == pytest.approx(2.0 - 0.25 * reads_per_cycle)
    assert clock.sleeps[1] == pytest.approx(2.0 - 0.25 * reads_per_cycle)


def test_network_failures_back_off_exponentially_to_the_cap_and_report_once() -> None:
    client, _ = running()
    client.faults[:] = [refused()] * 12  # 6 reads, each retried once by the client
    clock = Clock([lambda: None] * 6 + [lambda: client.end(X, "agent_close")])
    # No read succeeded yet: --start-timeout bounds the streak (one meaning in every loop).
    outcome, recorder = follow(client, clock, start_timeout=600.0)
    assert outcome.exit_code == 0
    assert clock.sleeps[:6] == [2.0, 4.0, 8.0, 16.0, 30.0, 30.0]
    assert [e for e in recorder.events if e[0] == "error"] == [("error", "network", True, 2.0)]


def test_a_dashboard_down_from_the_start_ends_a_follow_after_start_timeout() -> None:
    """One meaning of --start-timeout in every live loop (issue 35): before any read
    succeeded, a streak of any transient failure ends the run with that failure's own code,
    never waiting out --timeout (or forever without one)."""
    client, _ = running()
    client.faults[:] = [refused()] * 1000
    clock = Clock()
    outcome, _ = follow(client, clock, start_timeout=60.0)
    assert (outcome.ending, outcome.exit_code) == ("failed", 7)
    assert outcome.failure is not None
    assert "no read succeeded within --start-timeout 60s" in outcome.failure.detail
    assert sum(clock.sleeps) == pytest.approx(60.0)


def test_backoff_jitter_stays_between_half_and_the_full_delay() -> None:
    client, _ = running()
    client.faults[:] = [status(500)] * 6  # 3 reads, each retried once by the client
    clock = Clock([lambda: None] * 3 + [lambda: client.end(X, "agent_close")])
    reader = TaskReader(client.client(), X)
    follower = Follower(reader, Recorder(), PollConfig(), clock=clock, sleep=clock.sleep, jitter=lambda: 0.0)
    follower.run()
    assert clock.sleeps[:3] == [2.0, 2.0, 4.0]  # 1.0 is raised to the interval


def test_timeout_bounds_the_whole_follow_and_exits_9() -> None:
    client, first = running()
    clock = Clock()
    outcome, recorder = follow(client, clock, timeout=5.0, interval=2.0)
    assert outcome.exit_code == 9
    assert sum(clock.sleeps) == pytest.approx(5.0)
    assert clock.sleeps == [2.0, 2.0, 1.0]
    assert recorder.row_keys == first
    assert recorder.events[-1] == ("result", "timeout", "running", None, 9)


def test_timeout_while_the_final_read_keeps_failing_is_final_read_failed() -> None:
    client, _ = running()
    clock = Clock([lambda: client.end(X, "agent_close")])
    recorder = Recorder()
    recorder.on_final = lambda: client.faults.extend([refused()] * 9)
    outcome, recorder = follow(client, clock, recorder=recorder, timeout=5.0)
    assert outcome.exit_code == 7
    assert recorder.events[-2][:2] == ("error", "final_read_failed")


def test_an_unknown_id_ends_after_the_start_timeout_with_exit_4() -> None:
    client = Lineage()
    clock = Clock()
    outcome, recorder = follow(client, clock, interval=2.0, start_timeout=7.0)
    assert outcome.exit_code == 4
    assert outcome.failure is not None
    assert outcome.failure.code is Code.NOT_FOUND
    assert outcome.failure.retryable is False
    assert "--start-timeout 7s" in outcome.failure.detail
    assert clock.sleeps == [2.0, 2.0, 2.0, 1.0]  # the last read happens at the start timeout
    assert [e[0] for e in recorder.events] == ["error", "error", "result"]
    assert recorder.events[0] == ("error", "not_found", True, None)
    assert recorder.events[1][:3] == ("error", "not_found", False)
    assert recorder.events[-1] == ("result", "failed", "unknown", None, 4)


def test_a_profile_that_does_not_exist_stops_the_follow_at_once() -> None:
    client, _ = running()
    client.faults.append(status(404, {"detail": "Profile 'typo' does not exist."}))
    clock = Clock()
    outcome, recorder = follow(client, clock)
    assert outcome.exit_code == 4
    assert clock.sleeps == []
    assert recorder.events == [
        ("error", "profile_not_found", False, None),
        ("result", "failed", "unknown", None, 4),
    ]


def test_a_start_timeout_of_zero_gives_up_at_the_first_404() -> None:
    outcome, _ = follow(Lineage(), clock := Clock(), start_timeout=0.0)
    assert outcome.exit_code == 4
    assert clock.sleeps == []


def test_an_unknown_id_under_a_shorter_timeout_is_not_found_not_still_running() -> None:
    outcome, recorder = follow(Lineage(), Clock(), timeout=5.0, start_timeout=60.0)
    assert outcome.exit_code == 4
    assert recorder.events[-1] == ("result", "failed", "unknown", None, 4)


def test_a_404_streak_that_ends_in_time_resets_the_start_timeout() -> None:
    client, _ = running()
    client.missing.add(X)
    steps = [lambda: None, lambda: client.missing.discard(X), lambda: client.missing.add(X)]
    steps += [lambda: None, lambda: client.missing.discard(X), lambda: client.end(X, "agent_close")]
    outcome, _ = follow(client, Clock(steps), interval=2.0, start_timeout=5.0)
    assert outcome.exit_code == 0


def test_timeout_after_every_read_of_the_final_stretch_failed_exits_7() -> None:
    client, first = running()
    clock = Clock([lambda: client.faults.extend([refused()] * 20)])
    outcome, recorder = follow(client, clock, timeout=20.0)
    assert outcome.exit_code == 7
    assert outcome.failure is not None
    assert outcome.failure.code is Code.NETWORK
    assert "--timeout ran out" in outcome.failure.detail
    assert recorder.row_keys == first
    assert recorder.events[-1] == ("result", "failed", "running", None, 7)


def test_timeout_after_a_failure_then_a_success_is_still_running() -> None:
    client, _ = running()
    clock = Clock([lambda: client.faults.append(refused())])
    outcome, _ = follow(client, clock, timeout=9.0)
    assert outcome.exit_code == 9


def test_the_ended_state_comes_after_the_rows_of_the_final_read() -> None:
    client, first = running()
    late: list[tuple[str, int]] = []
    clock = Clock([lambda: client.end(X, "agent_close")])
    recorder = Recorder()
    recorder.on_final = lambda: late.extend(client.append(X, 2))  # flushed at close
    outcome, recorder = follow(client, clock, recorder=recorder)
    assert outcome.exit_code == 0
    assert late
    assert recorder.row_keys == first + late
    ended = recorder.events.index(("state", X, "ended", "agent_close"))
    assert ended == len(recorder.events) - 2  # right before the result
    assert all(e[0] != "rows" for e in recorder.events[ended:])


def test_an_unreadable_tip_keeps_the_verified_rows_flowing_then_ends_not_found() -> None:
    client, first = running()
    later: list[tuple[str, int]] = []
    clock = Clock([lambda: later.extend(client.append(X, 1))] + [lambda: None] * 10)
    outcome, recorder = follow(client, clock, tips=(Z,), interval=2.0, start_timeout=6.0)
    assert recorder.row_keys == first + later
    assert recorder.events[0][0] == "state"
    assert ("error", "not_found", True, None) in recorder.events
    assert outcome.exit_code == 4
    assert recorder.events[-1] == ("result", "failed", "running", None, 4)


def test_ctrl_c_reports_a_result_with_130() -> None:
    client, _ = running()

    def interrupt() -> None:
        raise KeyboardInterrupt

    outcome, recorder = follow(client, Clock([interrupt]))
    assert outcome.exit_code == 130
    assert recorder.events[-1] == ("result", "interrupted", "running", None, 130)


# -- endings ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("end_reason", "exit_status", "code"),
    [
        ("agent_close", True, 0),
        ("startup_orphan_reap", True, 8),
        ("orphaned_compression", True, 8),
        ("cli_close", True, 8),
        ("startup_orphan_reap", False, 0),
        ("agent_close", False, 0),
    ],
)
def test_exit_status_maps_the_ending(end_reason: str, exit_status: bool, code: int) -> None:
    client, _ = running()
    client.end(X, end_reason)
    outcome, recorder = follow(client, Clock(), exit_status=exit_status)
    assert outcome.exit_code == code
    assert ending_exit_code(end_reason, exit_status=exit_status) == code
    assert recorder.events[-1] == ("result", "ended", "ended", end_reason, code)


def test_an_ended_row_without_end_reason_is_unsuccessful() -> None:
    assert ending_exit_code(None, exit_status=True) == 8


@pytest.mark.parametrize(("exit_status", "code"), [(True, 9), (False, 9)])
def test_partial_history_pauses_with_one_warning(exit_status: bool, code: int) -> None:
    """The task was not seen ending: 9 with or without --exit-status, never 0."""
    client, first = running()
    client.end(X, "compression")
    outcome, recorder = follow(client, Clock(), exit_status=exit_status)
    assert outcome.exit_code == code
    assert outcome.ending == "partial_history"
    assert recorder.row_keys == first
    assert [e for e in recorder.events if e[0] == "warning"] == [("warning", "partial_history")]
    assert recorder.events[-1] == ("result", "partial_history", "unknown", "compression", code)


def test_a_tip_not_yet_flushed_is_retried_and_continues_without_duplicates() -> None:
    client, first = running()
    client.rotate(X, Y)
    client.descendants.pop(X)  # the hint does not know it: only --tip does
    y_rows = client.append(Y, 2)
    client.missing.add(Y)
    later: list[tuple[str, int]] = []
    clock = Clock(
        [
            lambda: client.missing.discard(Y),
            lambda: later.extend(client.append(Y, 1)),
            lambda: client.end(Y, "agent_close"),
        ]
    )
    outcome, recorder = follow(client, clock, tips=(Y,), exit_status=True)
    assert outcome.exit_code == 0
    # X's verified rows are reported while Y is retried (and X is, for now, partial history).
    assert recorder.kinds()[:4] == ["state", "warning", "rows", "error"]
    assert recorder.events[3] == ("error", "not_found", True, None)
    assert recorder.row_keys == first + y_rows + later
    assert recorder.events[-2:] == [
        ("state", Y, "ended", "agent_close"),
        ("result", "ended", "ended", "agent_close", 0),
    ]


def test_the_latest_descendant_hint_continues_a_paused_segment() -> None:
    client, first = running()
    clock = Clock([lambda: client.end(X, "compression")])
    rest: list[tuple[str, int]] = []

    def arm(task: Any) -> None:
        if task.end_reason == "compression" and not rest:  # paused: a newer segment appears
            client.add(Y, parent=X, started=2.0)
            client.merged[Y] = [X, Y]
            client.descendants[X] = Y
            rest.extend(client.append(Y, 2))
            client.end(Y, "agent_close")

    recorder = Recorder()
    recorder.on_state = arm
    outcome, recorder = follow(client, clock, recorder=recorder, exit_status=True)
    assert outcome.exit_code == 0
    assert recorder.row_keys == first + rest
    assert ("warning", "partial_history") in recorder.events
    assert client.calls().count(("messages", Y)) == 2  # the segment proven late gets its own final read


# -- output -----------------------------------------------------------------------------------


def test_warnings_are_reported_when_they_appear_not_every_cycle() -> None:
    client, _ = running(legacy=True)
    clock = Clock([lambda: None, lambda: None, lambda: client.end(X, "agent_close")])
    _, recorder = follow(client, clock)
    assert [e for e in recorder.events if e[0] == "warning"] == [("warning", "legacy_backend")]
    assert [e[0] for e in recorder.events].count("state") == 2  # running, then ended


@pytest.mark.parametrize("legacy", [False, True], ids=["current", "legacy"])
def test_a_gap_is_filled_in_order_before_the_rows_are_reported(legacy: bool) -> None:
    client, first = running(legacy)
    burst: list[tuple[str, int]] = []
    clock = Clock([lambda: burst.extend(client.append(X, 137)), lambda: client.end(X, "agent_close")])
    outcome, recorder = follow(client, clock)
    assert outcome.exit_code == 0
    assert recorder.row_keys == first + burst
    assert ("warning", "gap") not in recorder.events


def test_a_gap_wider_than_the_fill_bound_is_reported() -> None:
    client, first = running()
    burst: list[tuple[str, int]] = []
    clock = Clock(
        [
            lambda: burst.extend(client.append(X, 50 * (MAX_FILL_PAGES + 3))),
            lambda: client.end(X, "agent_close"),
        ]
    )
    outcome, recorder = follow(client, clock)
    assert outcome.exit_code == 0
    assert recorder.events.count(("warning", "gap")) == 1
    keys = recorder.row_keys
    assert len(keys) == len(set(keys))
    assert keys[: len(first)] == first
    assert keys[len(first) :] == burst[-len(keys) + len(first) :]  # the newest rows, in order


def test_rows_of_the_first_page_only_are_reported_at_start() -> None:
    client, rows = running(rows=120)
    client.end(X, "agent_close")
    _, recorder = follow(client, Clock())
    assert recorder.row_keys == rows[-50:]


@pytest.mark.parametrize("mode", ["legacy", "merged", "unmerged"])
def test_rows_written_to_the_old_segment_just_before_a_rotation_are_reported_first(mode: str) -> None:
    # legacy: 0.19.0 (no merge, no order); merged: iot subagent chains (the tip page holds the
    # ancestors' rows); unmerged: tool-source chains and upstream 0.20 (a current backend whose
    # tip page holds the tip's rows only).
    client, first = running(mode == "legacy")
    late: list[tuple[str, int]] = []
    after: list[tuple[str, int]] = []
    rotated_at: list[int] = []

    def rotate() -> None:
        late.extend(client.append(X, 3))  # written after the last poll, then X rotates
        client.rotate(X, Y)
        if mode == "unmerged":
            client.merged[Y] = [Y]
        after.extend(client.append(Y, 2))
        rotated_at.append(len(client.calls()))

    clock = Clock([rotate, lambda: client.end(Y, "agent_close")])
    outcome, recorder = follow(client, clock)

    assert outcome.exit_code == 0
    assert recorder.row_keys == first + late + after  # every row once, X's last rows before Y's
    x_pages = [c for c in client.calls()[rotated_at[0] :] if c == ("messages", X)]
    assert len(x_pages) == (0 if mode == "merged" else 1)  # never a segment read twice
