"""Big orchestrations (issue 29) on the reference backends (official, iot): the request bounds
of `recover`, `recover --watch` and `follow --parent`, counted from `--debug` lines, against
parents seeded through Hermes' own `SessionDB` (`Backend.fan_out`, tests/support/seeding/
fanout.py: one background unit of N goals, the children in the backend's local store).

- `recover` proves the store's proposals side by side (the `fan-out` debug lines), and asks no
  session twice: each child one detail (its ownership proof, then its state check's) and one
  oldest row (its goal);
- a watch's cycle after a new parent row reads the parent and at most the bounded state checks,
  and no child row;
- `follow --parent` probes its running children (one detail each) and reads the page of the one
  a row was written to, which it prints; a finished parent is drained with one read per child.
Counts, never times (the times are docs/benchmarks.md's)."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from typing import Any

import pytest
from tests.support.cli_runner import backend_store_env, cli_env, hermes_task

pytestmark = [pytest.mark.integration, pytest.mark.client_side]

START = re.compile(r"^debug: start (\S+) GET \S+ id=(\S+)(.*)$")


def goals(n: int, label: str) -> list[str]:
    return [f"Check {label} shard {i:02d}" for i in range(n)]


def requests(stderr: str) -> list[tuple[str, str, str]]:
    """(route kind, session id, query) of every request, from the `debug: start` lines."""
    return [m.groups() for line in stderr.splitlines() if (m := START.match(line))]  # type: ignore[misc]


def test_recover_proves_proposals_side_by_side_and_reads_no_session_twice(backend: Any) -> None:
    unit = backend.fan_out(goals(24, "recover"))
    run = hermes_task(backend, "recover", unit["parent"], "--json", "--debug")
    assert run.code == 0, run.stderr
    tasks = run.json()["tasks"]
    assert [t["child_session_id"] for t in tasks] == unit["children"]
    assert {t["child_state"] for t in tasks} == {"running"}
    assert "debug: fan-out child proofs: 24 jobs, at most 8 in flight" in run.stderr
    asked = requests(run.stderr)
    for child in unit["children"]:
        mine = [(kind, query.strip()) for kind, sid, query in asked if sid == child]
        assert mine == [("detail", ""), ("messages", "limit=1 offset=0 order=oldest")]
    repeated = {k: n for k, n in Counter(asked).items() if n > 1}
    assert set(repeated) <= {("detail", unit["parent"], "")}  # before and after its page
    assert all(n == 2 for n in repeated.values())


def test_a_new_parent_row_costs_the_watch_the_parents_reads_only(backend: Any) -> None:
    unit = backend.fan_out(goals(20, "watch"))
    parent = unit["parent"]
    cmd = [sys.executable, "-m", "hermes_task", "recover", parent, "--watch", "--json", "--debug",
           "--timeout", "12", "--url", backend.url]  # fmt: skip
    env = cli_env(backend.token, **backend_store_env(backend))
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) as proc:
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.extend(proc.stderr or []), daemon=True)
        reader.start()
        while not any("debug: watch wait" in line for line in lines) and proc.poll() is None:
            time.sleep(0.1)
        backend.append_rows(parent, 2)  # two new parent rows after the first cycle
        assert proc.stdout is not None
        out = proc.stdout.read()  # stderr is the reader thread's alone
        proc.wait(timeout=60)
        reader.join(5)
    assert proc.returncode == 9, "".join(lines)
    assert json.loads(out.splitlines()[-1])["type"] == "result"
    cycles = "".join(lines).split("debug: watch wait")
    later = [requests(cycle) for cycle in cycles[1:-1]]
    assert len(later) >= 3
    fresh = 0
    for cycle in later:
        assert len(cycle) <= 3 + 8  # the parent, and at most MAX_CHECKS_PER_CYCLE state checks
        assert not [r for r in cycle if r[0] == "messages" and r[1] != parent]  # no child row
        fresh += any(r[0] == "messages" and r[1] == parent and "order=oldest" not in r[2] for r in cycle)
    assert fresh >= 1


def test_follow_parent_probes_children_and_reads_only_the_one_with_a_row(backend: Any) -> None:
    unit = backend.fan_out(goals(8, "follow"))
    children = unit["children"]
    cmd = [sys.executable, "-m", "hermes_task", "follow", "--parent", unit["parent"], "--json", "--debug",
           "--url", backend.url]  # fmt: skip
    env = cli_env(backend.token, **backend_store_env(backend))
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) as proc:
        assert proc.stdout is not None
        debug: list[str] = []
        reader = threading.Thread(target=lambda: debug.extend(proc.stderr or []), daemon=True)
        reader.start()
        texts: list[tuple[str, str]] = []

        def rows() -> None:
            for line in proc.stdout or []:
                event = json.loads(line)
                if event["type"] == "row":
                    texts.append((event["task"]["child_session_id"], event["text"]))

        out = threading.Thread(target=rows, daemon=True)
        out.start()
        deadline = time.monotonic() + 60
        while len(texts) < len(children) and time.monotonic() < deadline:
            time.sleep(0.1)  # every child's goal row: each was read once
        backend.append_rows(children[5], 1)
        while len(texts) == len(children) and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(4.5)  # two more cycles with nothing new
        # SIGTERM, not SIGINT: where the suite runs as a background job (tools/check.sh runs the
        # backends side by side with `&`), the shell starts it with SIGINT ignored, and Python
        # (so the command) keeps that; SIGTERM ends the command as Ctrl-C does (exit 143).
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()  # never a hung suite: the assertion below says what happened
        out.join(5)
        reader.join(5)
    assert proc.returncode == 143, "".join(debug)[-2000:]
    assert sorted(c for c, _ in texts[: len(children)]) == sorted(children)
    assert [c for c, _ in texts[len(children) :]] == [children[5]]  # the appended row, printed once
    cycles = [requests(c) for c in "".join(debug).split("debug: watch wait")]
    paged: set[str] = set()
    first = 0  # the cycle by the end of which every child's newest page was read
    while len(paged) < len(children):
        paged |= {sid for kind, sid, query in cycles[first] if kind == "messages" and "order=latest" in query}
        first += 1
    later = cycles[first:-1]  # the last one was cut by the signal
    assert len(later) >= 2
    for cycle in later:  # the parent's reads, one probe (a detail) per running child, and the
        mine = Counter(kind for kind, sid, _ in cycle if sid not in (unit["parent"], children[5]))
        assert mine == {"detail": len(children) - 1}  # newest page of the one with a new row only
    assert sum(kind == "messages" for c in later for kind, sid, _ in c if sid == children[5]) == 1


def test_a_finished_parent_is_drained_with_one_read_per_child(backend: Any) -> None:
    unit = backend.fan_out(goals(12, "drain"), finished=True)
    run = hermes_task(backend, "follow", "--parent", unit["parent"], "--json", "--debug", "--exit-status")
    assert run.code == 0, run.stderr
    events = [json.loads(line) for line in run.stdout.splitlines()]
    printed = Counter(e["task"]["child_session_id"] for e in events if e["type"] == "row")
    assert printed == dict.fromkeys(unit["children"], 2)  # its goal and its answer, once each
    asked = requests(run.stderr)
    for child in unit["children"]:
        mine = Counter((kind, query.strip()) for kind, sid, query in asked if sid == child)
        # the proposal's proof (detail, goal row), then one read: detail, newest page, fresh detail
        assert mine[("detail", "")] <= 3
        assert sum(n for (kind, _), n in mine.items() if kind == "messages") <= 3
    assert run.stderr.count("debug: watch wait") <= 1  # 12 children: read in the first cycle
