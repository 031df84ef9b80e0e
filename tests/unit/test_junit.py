"""`recover --junit FILE` (render/report.py, cli/recover.py) on the in-memory dashboard: one
testsuite per conversation, a testcase per task (completed passes; failed, timeout and
ended_unreported fail with their error and their child's last rows; running is an error);
the file parsed (xml.etree) and held to the JUnit schema's shape (tests/support/junit.py),
hostile text escaped and XML-safe, written atomically (also when the watch ends by timeout, a
failure or SIGTERM), and a target that cannot be written refused before any read."""

from __future__ import annotations

import json
import math
import os
import stat
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_task.cli import recover as reports_module
from hermes_task.cli import recover as watch_cli
from hermes_task.core.documents import TaskEntry, TaskTokens
from hermes_task.core.sanitize import clean, clean_line
from hermes_task.core.ui_strings import TaskStatus
from hermes_task.failures import ExitStatus, Interrupted
from hermes_task.reading.tasktree import Unread
from hermes_task.render.report import case_of, document, kind_of, suites_of, xml_text
from tests.support.clock import Clock
from tests.support.conversations import Conversations
from tests.support.dashboard import serving
from tests.support.hostile import markup_text, unsafe_text
from tests.support.junit import outcome, validate
from tests.unit import test_unreported as unreported
from tests.unit.test_recover_cli import CHILD_A, MISSING, P, _tree, run
from tests.unit.test_watch import background, complete

hostile = markup_text | unsafe_text | st.text()


@pytest.fixture
def clock(clock: Clock, monkeypatch: pytest.MonkeyPatch) -> Clock:
    # Differs from conftest's: the watch's back-off jitter is fixed at 1.0 (its sleeps exact).
    monkeypatch.setattr(watch_cli, "JITTER", lambda: 1.0)
    return clock


def cases(root: ET.Element) -> list[tuple[str | None, str | None, str]]:
    return [(c.get("classname"), c.get("name"), outcome(c)) for c in root.iter("testcase")]


# -- recover --junit ------------------------------------------------------------------------------


def test_one_testcase_per_task_failures_with_their_error_and_last_rows(
    fake: Conversations, tmp_path: Path
) -> None:
    _tree(fake)
    out = tmp_path / "report.xml"
    result = run(P, "--recursive", "--junit", str(out), "--exit-status", "--json")
    assert result.exit_code == 8, result.stderr
    assert json.loads(result.stdout)["kind"] == "tasks"  # stdout is the format's alone
    root = validate(out.read_text(encoding="utf-8"))
    assert [s.get("name") for s in root.findall("testsuite")] == [P, CHILD_A, "20261130_170004_eeeeee"]
    assert cases(root) == [
        (P, "1.1 Audit module A", "pass"),
        (P, "1.2 Audit module B", "failure"),
        (P, "1.3 Audit module C", "pass"),
        (CHILD_A, "1.1 Read a.py", "pass"),
        (CHILD_A, "1.2 Read the tests of a.py", "failure"),
        ("20261130_170004_eeeeee", "1.1 Loop back", "pass"),
    ]
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("6", "2", "0")
    failed = root.findall("testsuite/testcase")[1]
    failure = failed.find("failure")
    assert failure is not None
    assert (failure.get("type"), failure.get("message")) == ("failed", "done")
    assert failure.text == f"status: failed\nsummary: done\nchild session: {MISSING}\nresult source: parent"
    out_text = failed.findtext("system-out")
    assert out_text is not None
    assert out_text.startswith(f"transcript could not be read: session not found: {MISSING}")
    timed_out = root.findall("testsuite")[1].findall("testcase")[1]
    assert timed_out.findtext("system-out") == (
        "transcript not read: the backend persisted no child session id for this task and the local "
        "store proposed none that the dashboard confirmed\n"
    )


def test_a_failed_tasks_system_out_is_its_childs_last_rows(fake: Conversations, tmp_path: Path) -> None:
    fake.session(P)
    fake.add(P, "user", "Audit.")
    fake.spawn(P, "call_p", ["Audit A"], {"results": [
        {"task_index": 0, "status": "failed", "error": "boom\nsecond line", "duration_seconds": 8.25,
         "child_session_id": CHILD_A}]})  # fmt: skip
    fake.session(CHILD_A, parent=P)
    for i in range(30):
        fake.add(CHILD_A, "assistant", f"step {i}")
    out = tmp_path / "r.xml"
    assert run(P, "--junit", str(out)).exit_code == 0  # without --exit-status the verdict is not the exit
    (case,) = validate(out.read_text(encoding="utf-8")).iter("testcase")
    assert case.get("time") == "8.250"
    failure = case.find("failure")
    assert failure is not None
    assert failure.get("message") == "boom"
    text = case.findtext("system-out") or ""
    assert text.startswith(f"the last 20 of 30 rows read of child session {CHILD_A}:\n\n▌ assistant  #")
    assert [line for line in text.splitlines() if line.startswith("  step ")] == [
        f"  step {i}" for i in range(10, 30)
    ]


def test_ended_unreported_fails_and_running_is_an_error(tmp_path: Path) -> None:
    dash = unreported.Family()
    with serving(dash.handle):
        unreported.dispatch(dash)
        dash.end(unreported.A)
        db = unreported.store(tmp_path)
        out = tmp_path / "r.xml"
        result = unreported.recover(db, "--junit", str(out), "--exit-status")
    assert result.exit_code == 9
    root = validate(out.read_text(encoding="utf-8"))
    first, second = root.iter("testcase")
    failure, error = first.find("failure"), second.find("error")
    assert failure is not None
    assert error is not None
    assert (failure.get("type"), failure.get("message")) == ("ended_unreported", "ended_unreported")
    assert (error.get("type"), error.get("message")) == ("running", "still running when read")
    assert (first.findtext("system-out") or "").startswith(
        f"the last 1 of 1 rows read of child session {unreported.A}"
    )
    assert (root.get("failures"), root.get("errors")) == ("1", "1")


def test_a_parent_that_cannot_be_read_is_an_error_testcase(fake: Conversations, tmp_path: Path) -> None:
    out = tmp_path / "r.xml"
    result = run(P, "--junit", str(out))
    assert result.exit_code == 4
    (case,) = validate(out.read_text(encoding="utf-8")).iter("testcase")
    error = case.find("error")
    assert (case.get("name"), error is not None and error.get("type")) == (f"read {P}", "not_found")


@pytest.mark.parametrize("where", ["missing", "directory", "readonly"])
def test_a_target_that_cannot_be_written_is_refused_before_any_read(
    fake: Conversations, tmp_path: Path, where: str
) -> None:
    _tree(fake)
    target = {
        "missing": tmp_path / "no" / "r.xml",
        "directory": tmp_path,
        "readonly": tmp_path / "ro" / "r.xml",
    }[where]
    if where == "readonly":
        target.parent.mkdir()
        target.parent.chmod(stat.S_IRUSR | stat.S_IXUSR)
        if os.access(target.parent, os.W_OK):  # root writes anywhere: nothing to refuse
            pytest.skip("running as root")
    result = run(P, "--junit", str(target))
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: invalid usage: --junit {target}")
    assert fake.paths_asked() == []


def test_the_file_is_replaced_whole_and_no_temporary_file_is_left(
    fake: Conversations, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tree(fake)
    out = tmp_path / "r.xml"
    out.write_text("old", encoding="utf-8")
    assert run(P, "--junit", str(out)).exit_code == 0
    validate(out.read_text(encoding="utf-8"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.xml"]
    assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~current_umask()
    out.write_text("old", encoding="utf-8")

    def broken(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken)
    result = run(P, "--junit", str(out))
    assert result.exit_code == 2
    assert f"--junit {out}: No space left on device" in result.stderr
    assert out.read_text(encoding="utf-8") == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.xml"]


def current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# -- recover --watch --junit ----------------------------------------------------------------------


def test_a_watch_with_one_failed_task_writes_one_failure_and_one_pass(
    fake: Conversations, clock: Clock, tmp_path: Path
) -> None:
    background(fake)
    clock.hooks[2] = complete(fake, ("completed", "failed"))
    out = tmp_path / "r.xml"
    result = run(P, "--watch", "--exit-status", "--junit", str(out))
    assert result.exit_code == 8, result.stderr
    root = validate(out.read_text(encoding="utf-8"))
    assert cases(root) == [(P, "1.1 Count TODOs", "pass"), (P, "1.2 Check the build", "failure")]
    failure = root.find("testsuite/testcase/failure")
    assert failure is not None
    assert (failure.get("type"), failure.get("message")) == ("failed", "boom")


def test_a_watch_that_timed_out_makes_running_tasks_errors(
    fake: Conversations, clock: Clock, tmp_path: Path
) -> None:
    background(fake)
    out = tmp_path / "r.xml"
    result = run(P, "--watch", "--exit-status", "--timeout", "5", "--junit", str(out))
    assert result.exit_code == 9
    errors = [c.find("error") for c in validate(out.read_text(encoding="utf-8")).iter("testcase")]
    assert [(e.get("type"), e.get("message")) for e in errors if e is not None] == [
        ("running", "still running when --timeout ran out")
    ] * 2


@pytest.mark.parametrize(
    ("raised", "code", "name"),
    [(Interrupted(ExitStatus.TERMINATED, "SIGTERM"), 143, "SIGTERM"), (Interrupted(ExitStatus.HANGUP, "SIGHUP"), 129, "SIGHUP"),
     (KeyboardInterrupt(), 130, "Ctrl-C")],
)  # fmt: skip
def test_a_watch_stopped_by_a_signal_still_writes_the_file(
    fake: Conversations, clock: Clock, tmp_path: Path, raised: BaseException, code: int, name: str
) -> None:
    background(fake)

    def stop() -> None:
        raise raised

    clock.hooks[1] = stop
    out = tmp_path / "r.xml"
    result = run(P, "--watch", "--json", "--junit", str(out))
    assert result.exit_code == code
    assert [json.loads(line)["type"] for line in result.stdout.splitlines()][-1] == "result"
    root = validate(out.read_text(encoding="utf-8"))
    for case in root.iter("testcase"):
        error = case.find("error")
        assert error is not None
        assert error.get("message") == f"still running when the watch was stopped ({name})"
        assert (
            case.findtext("system-out") == f"transcript not read: not read: the watch was stopped ({name})\n"
        )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.xml"]


def test_a_watch_that_failed_says_so_in_an_error_testcase(
    fake: Conversations, clock: Clock, tmp_path: Path
) -> None:
    background(fake)
    clock.hooks[1] = lambda: setattr(fake, "status", 401)
    out = tmp_path / "r.xml"
    assert run(P, "--watch", "--junit", str(out)).exit_code == 3
    root = validate(out.read_text(encoding="utf-8"))
    assert [(c.get("name"), outcome(c)) for c in root.iter("testcase")][-1] == (f"read {P}", "error")
    assert root.findall("testsuite/testcase/error")[-1].get("type") == "auth_rejected"


def test_a_stop_while_the_last_rows_are_read_still_writes_the_file(
    fake: Conversations, clock: Clock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    background(fake)
    clock.hooks[2] = complete(fake, ("failed", "failed"))
    real = reports_module.JunitFile.write

    def write(self: Any, tasks: Any, **kwargs: Any) -> Any:
        def read(task: Any, conversation: str) -> Any:
            raise Interrupted(ExitStatus.TERMINATED, "SIGTERM")

        return real(self, tasks, **{**kwargs, "read": read})

    monkeypatch.setattr(reports_module.JunitFile, "write", write)
    out = tmp_path / "r.xml"
    result = run(P, "--watch", "--exit-status", "--json", "--junit", str(out))
    assert result.exit_code == 143
    assert [json.loads(line)["type"] for line in result.stdout.splitlines()].count("result") == 1
    for case in validate(out.read_text(encoding="utf-8")).iter("testcase"):
        assert case.findtext("system-out") == "transcript not read: the command was stopped\n"


# -- the document, whatever the backend said ------------------------------------------------------


def entry(**fields: Any) -> TaskEntry:
    base: dict[str, Any] = {
        "call_id": "c", "goal": "g", "task_index": 0, "delegation_id": None, "subagent_id": None,
        "child_session_id": None, "status": TaskStatus.completed, "terminal": True, "unavailable_reason": None,
        "number": "1.1",
    }  # fmt: skip
    return TaskEntry(**{**base, **fields})


@pytest.mark.parametrize(
    ("status", "kind"),
    [("completed", "pass"), ("failed", "failure"), ("error", "failure"), ("timeout", "failure"),
     ("interrupted", "failure"), ("cancelled", "failure"), ("ended_unreported", "failure"),
     ("running", "error"), ("unknown", "error")],
)  # fmt: skip
def test_each_status_is_read_as_ci_reads_it(status: str, kind: str) -> None:
    assert kind_of(entry(status=TaskStatus[status])) == kind
    case = case_of(entry(status=TaskStatus[status]), P, "still running when read", lambda t, c: "rows")
    assert (case.kind, case.type or None, case.out) == (
        kind,
        None if kind == "pass" else status,
        None if kind == "pass" else "rows",
    )
    if status == "unknown":
        assert case.message == "no outcome known (unknown)"


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    goal=hostile, summary=hostile, error=hostile, ident=hostile, out=hostile, time=st.floats(allow_nan=True)
)
def test_hostile_text_is_escaped_and_xml_safe(
    goal: str, summary: str, error: str, ident: str, out: str, time: float
) -> None:
    tasks = [
        entry(goal=goal, summary=summary, status=TaskStatus.completed, duration_seconds=time),
        entry(goal=goal, summary=summary, error=error, status=TaskStatus.failed, child_session_id=ident,
              delegation_id=ident, tokens=TaskTokens(input=1, output=2)),
        entry(goal=goal, status=TaskStatus.running, children=[entry(goal=goal, status=TaskStatus.timeout, error=error)],
              child_session_id=ident),
    ]  # fmt: skip
    suites = suites_of(ident, tasks, "still running when read", lambda task, conversation: out)
    text = document(suites)
    root = validate(text)
    assert [s.get("name") for s in root.findall("testsuite")] == [xml_text(clean_line(ident))] * (
        2 if ident else 1
    )
    first, failed, running = root.findall("testsuite")[0].findall("testcase")
    name = clean_line(f"1.1 {goal or '(no goal recorded)'}".strip().split("\n", 1)[0])
    name = name if len(name) <= 200 else name[:199] + "…"
    assert first.get("name") == failed.get("name") == xml_text(name)
    assert first.get("classname") == xml_text(clean_line(ident))
    assert first.get("time") == (f"{time if time > 0 else 0.0:.3f}" if math.isfinite(time) else None)
    failure = failed.find("failure")
    assert failure is not None
    facts = ["status: failed", *(f"{k}: {v}" for k, v in (("error", error), ("summary", summary)) if v)]
    facts += [f"{k}: {ident}" for k in ("child session", "delegation") if ident]
    assert failure.text == xml_text("\n".join(facts))
    assert failed.findtext("system-out") == xml_text(out)
    assert "\ufffe" not in text
    assert "\uffff" not in text
    assert outcome(running) == "error"


def test_the_forbidden_characters_are_spelled_out() -> None:
    assert xml_text("a\x00b\x1bc\ufffed\uffff\ud800e\tf\ng") == "a^@b^[c<U+FFFE>d<U+FFFF><U+D800>e\tf\ng"
    assert clean("\ufffe") == "\ufffe"  # what xml_text adds to `clean`
    assert Unread("x", "y").message == "y"


def test_a_tasks_proven_usage_is_in_its_testcase() -> None:
    from tests.unit.test_table import USAGE, entry

    usage = "usage: 12,345 in · 1,500 out · 9 API calls · ~$0.0421 estimated · 3 segments"
    passed = case_of(entry(1, usage=USAGE), P, "", lambda _e, _c: "")
    failed = case_of(
        entry(2, usage=USAGE, status=TaskStatus.failed, error="boom"), P, "", lambda _e, _c: "rows"
    )
    root = validate(document([(P, [passed, failed])]))
    first, second = root.iter("testcase")
    assert first.findtext("system-out") == usage
    assert first.find("failure") is None
    assert usage in (second.findtext("failure") or "").split("\n")
    assert second.findtext("system-out") == "rows"
    # without a proven usage, a passing testcase is empty as before
    bare = case_of(entry(3), P, "", lambda _e, _c: "")
    assert validate(document([(P, [bare])])).find("testsuite/testcase/system-out") is None
