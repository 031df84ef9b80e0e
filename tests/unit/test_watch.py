"""`recover --watch` (reading/watcher.py, render/watchout.py, cli/recover.py) on a fake dashboard
and a fake clock: NDJSON events, exit statuses 0 / 8 / 9 / 130 / 143, appended piped lines,
anchored reads (the history once, then three requests a cycle) and back-off."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from hermes_task.cli import recover as watch_cli
from hermes_task.cli.options import Environment
from hermes_task.core.ui_strings import TaskStatus, WarningCode
from hermes_task.failures import ExitStatus, Interrupted
from tests.support.cli_runner import ENVIRONMENT
from tests.support.clock import Clock
from tests.support.conversations import Conversations
from tests.unit.test_recover_cli import P, run
from tests.unit.test_schemas import validator

DELEG = "deleg_66c2a77e"
GOALS = ["Count TODOs", "Check the build"]


def background(dash: Conversations) -> None:
    dash.session(P)
    dash.add(P, "user", "Audit the repository in the background.")
    dash.spawn(P, "bg", GOALS, {"status": "dispatched", "mode": "background", "count": 2,
                                "delegation_id": DELEG, "goals": GOALS})  # fmt: skip


def complete(dash: Conversations, statuses: tuple[str, str]) -> Callable[[], None]:
    def write() -> None:
        text = [f"[ASYNC DELEGATION BATCH COMPLETE — {DELEG}]", "A background fan-out has finished.", "",
                "Role: leaf   Model: study-model   Total duration: 9.1s"]  # fmt: skip
        for i, (goal, status) in enumerate(zip(GOALS, statuses, strict=True)):
            icon = "✓" if status == "completed" else "✗"
            body = "Done." if status == "completed" else f"(no summary — status={status}: boom)"
            text += ["", f"--- {icon} TASK {i + 1}/2: {goal}  (status={status}, api_calls=3, 8.4s) ---", body]
        dash.add(P, "user", "\n".join(text))

    return write


def events(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines()]


@pytest.mark.parametrize(("statuses", "code", "verdict"), [(("completed", "completed"), 0, "completed"),
                                                            (("completed", "failed"), 8, "failed")])  # fmt: skip
def test_json_watch_reports_tasks_then_a_result_and_exits_by_the_verdict(
    fake: Conversations, clock: Clock, statuses: tuple[str, str], code: int, verdict: str
) -> None:
    background(fake)
    clock.hooks[2] = complete(fake, statuses)  # written while the watch sleeps after its 2nd read
    result = run(P, "--watch", "--exit-status", "--json")
    assert result.exit_code == code, result.stderr
    lines = events(result.stdout)
    assert [(e["type"], e.get("number"), e.get("status")) for e in lines] == [
        ("task", "1.1", "running"), ("task", "1.2", "running"),
        ("task", "1.1", "completed"), ("task", "1.2", statuses[1]),
        ("result", None, None),
    ]  # fmt: skip
    assert lines[-1] == {
        "type": "result",
        "state": "ended",
        "end_reason": verdict,
        "exit_code": code,
        "last_read_age": None,
        "unreported": [],
    }
    assert lines[3]["error"] == (None if code == 0 else "boom")
    check = validator("events")
    for event in lines:
        check.validate(event)
    assert lines[2]["summary"] == "Done."
    assert clock.sleeps == [2.0, 2.0]
    # The history once (detail, newest page, fresh detail), then three requests a cycle.
    assert len(fake.paths_asked()) == 9
    assert result.stderr == ""


def test_without_exit_status_a_failed_task_exits_0(fake: Conversations, clock: Clock) -> None:
    background(fake)
    clock.hooks[1] = complete(fake, ("failed", "failed"))
    result = run(P, "--watch", "--json")
    assert result.exit_code == 0
    assert events(result.stdout)[-1] == {
        "type": "result",
        "state": "ended",
        "end_reason": "failed",
        "exit_code": 0,
        "last_read_age": None,
        "unreported": [],
    }


def test_timeout_ends_the_watch_with_9_and_tasks_delegated_meanwhile_join(
    fake: Conversations, clock: Clock
) -> None:
    background(fake)

    def more() -> None:
        fake.spawn(
            P, "bg2", ["Lint"], {"status": "dispatched", "delegation_id": "deleg_77d3b88f", "goals": ["Lint"]}
        )

    clock.hooks[1] = more
    result = run(P, "--watch", "--exit-status", "--timeout", "5", "--json")
    assert result.exit_code == 9
    lines = events(result.stdout)
    assert [(e.get("number"), e.get("status")) for e in lines[:-1]] == [
        ("1.1", "running"), ("1.2", "running"), ("2.1", "running")]  # fmt: skip
    assert lines[-1] == {
        "type": "result",
        "state": "running",
        "end_reason": None,
        "exit_code": 9,
        "last_read_age": None,
        "unreported": [],
    }
    assert clock.sleeps == [2.0, 2.0, 1.0]


def test_a_known_failure_wins_over_the_timeout(fake: Conversations, clock: Clock) -> None:
    background(fake)
    text = (f"[ASYNC DELEGATION TASK FAILED — {DELEG}, task 2/2]\nOne subagent has failed.\n"
            "Task: Check the build\nStatus: error   Duration: 3.1s\nError: boom")  # fmt: skip
    fake.add(P, "user", text)
    result = run(P, "--watch", "--exit-status", "--timeout", "3", "--json")
    assert result.exit_code == 8
    assert events(result.stdout)[-1]["state"] == "running"


def test_piped_watch_appends_one_line_per_status_change(fake: Conversations, clock: Clock) -> None:
    background(fake)
    clock.hooks[1] = lambda: fake.add(P, "assistant", "Still working.")  # no task changes
    clock.hooks[2] = complete(fake, ("completed", "failed"))
    result = run(P, "--watch", "--exit-status")
    assert result.exit_code == 8
    no_usage = "\t" * 5  # fields 9-13: no child known, no usage
    assert result.stdout.splitlines() == [
        f"1.1\trunning\t\tCount TODOs\t\t{DELEG}\t\t{no_usage}",
        f"1.2\trunning\t\tCheck the build\t\t{DELEG}\t\t{no_usage}",
        f"1.1\tcompleted\t8.4\tCount TODOs\t\t{DELEG}\t\tDone.{no_usage}",
        f"1.2\tfailed\t8.4\tCheck the build\t\t{DELEG}\t\tboom{no_usage}",
    ]
    assert result.stderr == "every task ended (failed) · 2 of 2 tasks terminal\n"


def test_transient_failures_back_off_and_are_reported_once(
    fake: Conversations, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    background(fake)
    monkeypatch.setattr(watch_cli, "JITTER", lambda: 1.0)

    def down() -> None:
        fake.status = 503

    def up() -> None:
        fake.status = None
        complete(fake, ("completed", "completed"))()

    clock.hooks[1] = down
    clock.hooks[4] = up
    result = run(P, "--watch", "--json")
    assert result.exit_code == 0
    errors = [e for e in events(result.stdout) if e["type"] == "error"]
    assert [(e["code"], e["retryable"]) for e in errors] == [("server_error", True)]
    assert clock.sleeps == [2.0, 2.0, 4.0, 8.0]


def test_a_final_failure_ends_the_stream_with_result(fake: Conversations, clock: Clock) -> None:
    background(fake)
    clock.hooks[1] = lambda: setattr(fake, "status", 401)
    result = run(P, "--watch", "--json")
    assert result.exit_code == 3
    lines = events(result.stdout)
    assert [e["type"] for e in lines] == ["task", "task", "error", "result"]
    assert lines[-1] == {
        "type": "result",
        "state": "unknown",
        "end_reason": None,
        "exit_code": 3,
        "last_read_age": 2.0,
        "unreported": [],
    }


@pytest.mark.parametrize(
    ("raised", "code"),
    [(KeyboardInterrupt(), 130), (Interrupted(ExitStatus.TERMINATED, "SIGTERM"), 143),
     (Interrupted(ExitStatus.HANGUP, "SIGHUP"), 129)],
)  # fmt: skip
def test_an_interrupt_or_a_stop_signal_still_writes_the_result(
    fake: Conversations, clock: Clock, raised: BaseException, code: int
) -> None:
    background(fake)

    def interrupt() -> None:
        raise raised

    clock.hooks[1] = interrupt
    result = run(P, "--watch", "--json")
    assert result.exit_code == code
    assert events(result.stdout)[-1] == {
        "type": "result",
        "state": "unknown",
        "end_reason": None,
        "exit_code": code,
        "last_read_age": None,
        "unreported": [],
    }


def test_an_invalid_parent_id_is_an_error_event_and_a_result(clock: Clock) -> None:
    result = run(" 20261130_170000_aaaaaa", "--watch", "--json")
    assert result.exit_code == 2
    assert [e["type"] for e in events(result.stdout)] == ["error", "result"]


@pytest.mark.parametrize("args", [["--recursive"], ["--pages", "2"]])
def test_watch_reads_the_parent_only(fake: Conversations, args: list[str]) -> None:
    assert run(P, "--watch", *args).exit_code == 2


def test_timeout_needs_watch(fake: Conversations) -> None:
    background(fake)
    result = run(P, "--timeout", "5")
    assert result.exit_code == 2
    assert "--request-timeout" in result.stderr


def test_on_a_terminal_the_table_is_redrawn_and_ends_with_the_verdict(
    fake: Conversations, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    ENVIRONMENT.append(Environment(clock=clock, sleep=clock.sleep, isatty=lambda stream: True))
    background(fake)
    clock.hooks[1] = complete(fake, ("completed", "completed"))
    result = run(P, "--watch", "--exit-status")
    assert result.exit_code == 0
    lines = [line.rstrip() for line in result.stdout.splitlines()]
    assert lines[0].split()[:5] == ["#", "status", "time", "goal", "result"]
    assert [line.split("  ")[0] for line in lines[1:3]] == ["1.1", "1.2"]
    assert all("✓ completed" in line for line in lines[1:3])
    assert lines[-1] == "every task ended (completed) · 2 of 2 tasks terminal"
    assert result.stderr == ""


def test_piped_watch_notes_warnings_retries_and_each_ending_on_stderr() -> None:
    import io

    from rich.console import Console

    from hermes_task.core.documents import TaskEntry, WarningItem
    from hermes_task.failures import Code, HermesError
    from hermes_task.reading.polling import Ending, Outcome
    from hermes_task.render.watchout import JsonEvents, LinesWatch

    err = io.StringIO()
    console = Console(file=err, width=200, color_system=None)
    out: list[str] = []
    lines = LinesWatch(out.append, lambda: console, 2.0)
    entry = TaskEntry(
        call_id="c",
        goal="g",
        task_index=0,
        delegation_id=None,
        subagent_id=None,
        child_session_id=None,
        status=TaskStatus.running,
        terminal=False,
        unavailable_reason=None,
        number="1.1",
    )
    lines.task(entry)
    lines.task(entry)  # unchanged: no second line
    lines.warning(WarningItem(code=WarningCode.gap, message="rows may be missing"))
    lines.error(HermesError(Code.TIMEOUT, "read"), retrying=True, delay=4.0)
    lines.error(HermesError(Code.NOT_FOUND, "x"), retrying=True, delay=None)
    lines.error(HermesError(Code.AUTH_REJECTED, ""), retrying=False, delay=None)
    endings: list[Ending] = ["timeout", "interrupted", "failed"]
    for ending in endings:
        lines.result(Outcome(ending, "unknown", None, 9), [entry])
    assert [line.split("\t")[:2] for line in out] == [["1.1", "running"]]
    notes = err.getvalue().splitlines()
    assert notes[0] == "warning: rows may be missing"
    assert [note.split(": ", 1)[0] for note in notes[1:4]] == ["retrying", "retrying", "error"]
    assert notes[1].endswith("; next read in 4s")
    assert notes[2].endswith("; polling every 2s")
    assert notes[4:] == ["--timeout ran out · 0 of 1 task terminal", "watch stopped · 0 of 1 task terminal"]

    events: list[str] = []
    JsonEvents(events.append, events.append).warning(WarningItem(code=WarningCode.gap, message="m"))
    assert json.loads(events[0]) == {"type": "warning", "code": "gap", "message": "m"}
