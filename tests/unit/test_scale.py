"""Big orchestrations (issue 29) on the in-memory dashboard: the deterministic bounds that keep
`recover`, `recover --watch` and `follow --parent` fast with hundreds of tasks. Counts of
requests, never times: no session is read twice in a one-shot run, independent reads go side
by side but never more than the limit, the output does not depend on which answer came first,
a new parent row costs the parent's reads, and `follow --parent` spends its reads where rows
appeared (the figures themselves are docs/benchmarks.md's, from bench/bench_scale.py)."""

from __future__ import annotations

import io
import itertools
import json
import random
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from hermes_task.cli.options import Environment
from hermes_task.reading.api import MAX_IN_FLIGHT
from hermes_task.reading.family import MAX_READS_PER_CYCLE
from hermes_task.reading.tasktree import MAX_CHECKS_PER_CYCLE
from tests.support.cli_runner import invoke
from tests.support.clock import Clock
from tests.support.conversations import Conversations
from tests.support.dashboard import Call
from tests.unit.conftest import SCHEMA
from tests.unit.test_recover_cli import ENV

P = "20261202_090000_aaaaaa"
DELEG = "deleg_5ca1e000"


def kid(i: int) -> str:
    return f"20261202_09{i // 100:02d}{i % 100:02d}_{i:06x}"


def goal(i: int) -> str:
    return f"Check shard {i:03d} of the suite"


def background(fake: Conversations, n: int, tmp_path: Path, *, at: float = 100.0) -> Path:
    """P dispatched n goals as one background unit (the real backends' shape: no child ids in
    the transcript); each child is in the dashboard (its goal row) and in the local store."""
    fake.session(P)
    goals = [goal(i) for i in range(n)]
    args = json.dumps({"tasks": [{"goal": g} for g in goals]})
    call = {"id": "call_1", "type": "function", "function": {"name": "delegate_task", "arguments": args}}
    fake.add(P, "assistant", "", tool_calls=[call], timestamp=at)
    payload = {
        "status": "dispatched",
        "mode": "background",
        "count": n,
        "delegation_id": DELEG,
        "goals": goals,
    }
    fake.add(P, "tool", json.dumps(payload), tool_call_id="call_1", tool_name="delegate_task", timestamp=at)
    path = tmp_path / "state.db"
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA)
    config = json.dumps({"max_iterations": 90, "_delegate_from": P})
    for i, text in enumerate(goals):
        fake.session(kid(i), parent=P)
        fake.details[kid(i)]["started_at"] = at + 1 + i
        fake.add(kid(i), "user", text, timestamp=at + 1 + i)
        conn.execute(
            "INSERT INTO sessions (id, source, parent_session_id, model_config, started_at) VALUES (?,?,?,?,?)",
            (kid(i), "subagent", P, config, at + 1 + i),
        )
        conn.execute(
            "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?,?,?,?)",
            (kid(i), "user", text, at + 1.01 + i),
        )
    conn.commit()
    conn.close()
    return path


def recover(store: Path, *args: str, environment: Environment | None = None) -> Any:
    return invoke(
        "recover", P, "--json", *args, env={**ENV, "HERMES_TASK_STORE": str(store)}, environment=environment
    )


def asked(call: Call) -> tuple[str, str, tuple[tuple[str, str], ...]]:
    return call.kind, call.sid, tuple(sorted(call.params.items()))


# -- recover: one-shot, side by side, each session once -----------------------------------------


def test_recover_reads_no_session_twice(fake: Conversations, tmp_path: Path) -> None:
    """60 running tasks whose children the store proposes: each child is asked its detail once
    (the ownership proof, which its state check then takes) and its oldest row once (the
    goal); the parent its detail, its page and the fresh detail the seed checks a page with."""
    store = background(fake, 60, tmp_path)
    result = recover(store)
    assert result.exit_code == 0, result.stderr
    tasks = json.loads(result.stdout)["tasks"]
    assert [(t["child_session_id"], t["child_state"]) for t in tasks] == [
        (kid(i), "running") for i in range(60)
    ]
    repeated = {k: n for k, n in Counter(asked(c) for c in fake.log).items() if n > 1}
    assert repeated == {("detail", P, ()): 2}  # before and after its page, nothing else
    for i in range(60):
        assert [(c.kind, c.params.get("limit")) for c in fake.log if c.sid == kid(i)] == [
            ("detail", None),
            ("messages", "1"),
        ]


def test_recover_recursive_reads_each_child_conversation_on_its_proof(
    fake: Conversations, tmp_path: Path
) -> None:
    """With --recursive each child's conversation starts from the detail its ownership proof
    read: per child the proof's detail, its goal row, its newest page and the fresh detail the
    seed checks a page with; nothing is asked twice but that fresh detail."""
    store = background(fake, 30, tmp_path)
    result = recover(store, "--recursive")
    assert result.exit_code == 0, result.stderr
    assert [t["child_session_id"] for t in json.loads(result.stdout)["tasks"]] == [kid(i) for i in range(30)]
    repeated = {k: n for k, n in Counter(asked(c) for c in fake.log).items() if n > 1}
    assert repeated == {("detail", s, ()): 2 for s in [P, *(kid(i) for i in range(30))]}
    for i in range(30):
        mine = [(c.kind, c.params.get("limit"), c.params.get("order")) for c in fake.log if c.sid == kid(i)]
        assert mine == [
            ("detail", None, None),
            ("messages", "1", "oldest"),
            ("messages", "50", "latest"),
            ("detail", None, None),
        ]


def test_recover_proves_children_side_by_side_never_more_than_the_limit(
    fake: Conversations, tmp_path: Path
) -> None:
    """The children's proofs are in flight together (a barrier of 8 parties only opens when
    that many are), and never more than 8 (the documented limit) at once."""
    assert MAX_IN_FLIGHT == 8  # docs/identity.md "Reads side by side"
    store = background(fake, 24, tmp_path)
    barrier = threading.Barrier(8, timeout=10)
    lock = threading.Lock()
    flight = [0, 0]  # now, most

    def hold(call: Call) -> httpx.Response | None:
        if call.kind == "detail" and call.sid != P:
            with lock:
                flight[0] += 1
                flight[1] = max(flight)
            barrier.wait()  # a sequential run never gets past the first one
            with lock:
                flight[0] -= 1
        return None

    fake.before.append(hold)
    result = recover(store)
    assert result.exit_code == 0, result.stderr
    assert flight[1] == 8
    assert all(t["child_session_id"] for t in json.loads(result.stdout)["tasks"])


def test_the_output_does_not_depend_on_which_answer_comes_first(fake: Conversations, tmp_path: Path) -> None:
    store = background(fake, 40, tmp_path)
    outputs = []
    for seed in (1, 2, 3):
        pick = random.Random(seed)  # noqa: S311 (the order of answers, not a secret)

        def jitter(call: Call, pick: random.Random = pick) -> httpx.Response | None:
            time.sleep(pick.random() / 500)  # answers come back in another order each run
            return None

        fake.before[:] = [fake.before[0], jitter]
        result = recover(store, "--debug")
        assert result.exit_code == 0, result.stderr
        outputs.append(result.stdout)
        assert "debug: fan-out child proofs: 40 jobs, at most 8 in flight" in result.stderr
    assert outputs[0] == outputs[1] == outputs[2]


# -- recover --watch: a new parent row costs the parent's reads ---------------------------------


def test_a_new_parent_row_costs_the_parents_reads_whatever_the_number_of_tasks(
    fake: Conversations, tmp_path: Path
) -> None:
    """300 running tasks: the first cycle proves each proposal once (its detail, then shared
    with its state check); a later cycle with a new parent row re-proves nothing: the parent's
    three reads and at most MAX_CHECKS_PER_CYCLE state checks, and no child row is read."""
    store = background(fake, 300, tmp_path)
    clock = Clock()
    marks: list[int] = []

    def mark() -> None:
        marks.append(len(fake.log))

    for n in range(1, 5):
        clock.hooks[n] = mark

    def mark_and_write() -> None:
        mark()
        fake.add(P, "assistant", "Still waiting for the shards.")

    clock.hooks[2] = mark_and_write
    result = recover(
        store, "--watch", "--timeout", "9", environment=Environment(clock=clock, sleep=clock.sleep)
    )
    assert result.exit_code == 9, result.stderr
    first = fake.log[: marks[0]]
    assert Counter(c.sid for c in first if c.kind == "detail" and c.sid != P) == {
        kid(i): 1 for i in range(300)
    }
    for before, after in itertools.pairwise(marks):
        cycle = fake.log[before:after]
        assert len(cycle) <= 3 + MAX_CHECKS_PER_CYCLE
        assert not [c for c in cycle if c.kind == "messages" and c.sid != P]
    with_row = fake.log[marks[1] : marks[2]]
    assert [c.kind for c in with_row if c.sid == P] == ["detail", "messages", "detail"]


# -- follow --parent: reads where rows appear ---------------------------------------------------


def fan_out(fake: Conversations, n: int, *, status: str = "running", ended: bool = False) -> list[str]:
    """P's results name n children (a current-contract fake, as a proposal-assigned id would)."""
    fake.session(P)
    goals = [goal(i) for i in range(n)]
    results = [{"task_index": i, "status": status, "child_session_id": kid(i)} for i in range(n)]
    fake.spawn(P, "fan", goals, {"results": results, "delegation_id": DELEG})
    for i, text in enumerate(goals):
        fake.session(kid(i), parent=P)
        fake.add(kid(i), "user", text)
        if ended:
            fake.add(kid(i), "assistant", f"Shard {i:03d} passed.")
            fake.details[kid(i)].update(ended_at=1796056500.0, end_reason="agent_close")
    return goals


def follow_parent(clock: Clock, stdout: io.StringIO | None = None, *args: str) -> Any:
    environment = Environment(clock=clock, sleep=clock.sleep, stdout_stream=stdout)
    return invoke("follow", "--parent", P, "--json", *args, env=ENV, environment=environment)


def complete(fake: Conversations, goals: list[str]) -> Callable[[], None]:
    def write() -> None:
        text = [f"[ASYNC DELEGATION BATCH COMPLETE — {DELEG}]", "Finished.", ""]
        for i, g in enumerate(goals):
            text += ["", f"--- ✓ TASK {i + 1}/{len(goals)}: {g}  (status=completed, 2.0s) ---", "ok"]
        fake.add(P, "user", "\n".join(text))

    return write


def test_follow_parent_probes_running_children_and_reads_only_those_with_rows(fake: Conversations) -> None:
    """50 running children: after their first reads, a cycle with no new row costs the parent's
    three reads and one detail (the probe) per child; a child with a new row costs its page
    and the fresh detail on top (the probe is its detail read), and nothing else is read."""
    fan_out(fake, 50)
    clock = Clock()
    marks: list[int] = []

    def mark() -> None:
        marks.append(len(fake.log))

    for n in range(1, 6):
        clock.hooks[n] = mark

    def mark_and_write() -> None:
        mark()
        fake.add(kid(17), "assistant", "Shard 017: 42 passed.")

    clock.hooks[3] = mark_and_write
    result = follow_parent(clock, None, "--timeout", "11")
    assert result.exit_code == 9, result.stderr
    idle = fake.log[marks[1] : marks[2]]  # the third cycle: every child read before, no new row
    assert len(idle) == 3 + 50
    assert Counter(c.kind for c in idle if c.sid != P) == {"detail": 50}
    changed = fake.log[marks[2] : marks[3]]  # the row written before it
    assert len(changed) == 3 + 50 + 2
    assert [c.kind for c in changed if c.sid == kid(17)] == ["detail", "messages", "detail"]
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["text"] for r in rows if r["type"] == "row" and r["task"]["child_session_id"] == kid(17)] == [
        goal(17),
        "Shard 017: 42 passed.",
    ]


@pytest.mark.parametrize("written", [0, 23, 49])
def test_a_row_of_any_of_50_children_is_printed_in_the_next_cycle(fake: Conversations, written: int) -> None:
    """Latency does not grow with the children: whichever child the row is written to, it is
    on stdout when the next cycle ends (checked while the next sleep starts)."""
    fan_out(fake, 50)
    clock = Clock()
    out = io.StringIO()
    seen: list[bool] = []
    text = f"Shard {written:03d}: a late row."
    clock.hooks[2] = lambda: fake.add(kid(written), "assistant", text)
    clock.hooks[3] = lambda: seen.append(text in out.getvalue())
    result = follow_parent(clock, out, "--timeout", "7")
    assert result.exit_code == 9, result.stderr
    assert seen == [True]


def test_a_finished_parent_of_100_tasks_is_drained_in_a_few_cycles(fake: Conversations) -> None:
    """Every task is terminal and every child ended: each child is read once (the read after
    the parent's verdict), MAX_READS_PER_CYCLE a cycle, and the stream ends; no child is read
    after its last read (an ended child leaves the cycle)."""
    goals = fan_out(fake, 100, ended=True)
    complete(fake, goals)()
    clock = Clock()
    result = follow_parent(clock, None, "--exit-status")
    assert result.exit_code == 0, result.stderr
    assert MAX_READS_PER_CYCLE == 32  # docs/commands.md: 100 children in 4 cycles (3 waits)
    assert len(clock.sleeps) == 3
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    printed = Counter(r["task"]["child_session_id"] for r in rows if r["type"] == "row")
    assert printed == {kid(i): 2 for i in range(100)}
    for i in range(100):
        assert [c.kind for c in fake.log if c.sid == kid(i)] == ["detail", "messages", "detail"]


def test_a_child_seen_ended_gets_its_final_read_at_once_then_leaves_the_cycle(fake: Conversations) -> None:
    fan_out(fake, 3)
    clock = Clock()

    def end() -> None:
        fake.add(kid(1), "assistant", "Shard 001 passed.")
        fake.details[kid(1)].update(ended_at=1796056500.0, end_reason="agent_close")

    clock.hooks[2] = end
    marks: list[int] = []
    clock.hooks[3] = lambda: marks.append(len(fake.log))
    result = follow_parent(clock, None, "--timeout", "9")
    assert result.exit_code == 9, result.stderr
    asked_after = [c.kind for c in fake.log[marks[0] :] if c.sid == kid(1)]
    assert asked_after == []  # done: nothing more for it after the cycle that saw it end
    # the probe (its read's detail), page, fresh detail; at once the final read: page, fresh
    # detail (its first detail is that cycle's fresh one, held for the cycle)
    in_that_cycle = [c.kind for c in fake.log if c.sid == kid(1)][-5:]
    assert in_that_cycle == ["detail", "messages", "detail", "messages", "detail"]
