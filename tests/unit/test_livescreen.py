"""`hermes-task tui`'s screen (render/livescreen.py, cli/tui.py) driven by Textual's own
`run_test` and Pilot on the in-memory dashboard: the watch loop runs in its thread exactly as
the command runs it (`tui.build`), the test writes rows and completions into the fake
while the screen runs, and reads back what the screen holds and shows."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import cast

import pytest
from rich.text import Text
from textual.pilot import Pilot
from textual.widgets import DataTable, Static

from hermes_task.cli.options import Common, Environment
from hermes_task.cli.session import Session
from hermes_task.cli.tui import build
from hermes_task.core.documents import ParentEntry, Row, TaskEntry, WarningItem
from hermes_task.core.events import ErrorEvent, FollowEvent, ResultEvent, RowEvent, WarningEvent
from hermes_task.core.ui_strings import RECOVER, UNAVAILABLE, TaskStatus, WarningCode
from hermes_task.failures import Code, HermesError
from hermes_task.reading.polling import Outcome
from hermes_task.render.livescreen import (
    EventFeed,
    Loop,
    ParentsScreen,
    TaskScreenApp,
    TextScreen,
    Transcript,
)
from tests.support.cli_runner import invoke
from tests.support.conversations import Conversations
from tests.support.regen import load_tool
from tests.unit.test_family import DELEG, GOALS, A, B, complete, family, write
from tests.unit.test_layering import PROBE_ENV
from tests.unit.test_recover_cli import ENV, P

SRC = Path(__file__).resolve().parents[2] / "src"
Scenario = Callable[[TaskScreenApp, Pilot[int]], Awaitable[None]]


SESSIONS: list[Session] = []


@pytest.fixture(autouse=True)
def _close_sessions() -> Iterator[None]:
    """Each test's sessions closed after it, as `hermes-task tui`'s shell closes its own (the
    store's connection is not left to the collector: a ResourceWarning on Python 3.13)."""
    yield
    while SESSIONS:
        SESSIONS.pop().close()


def session_of(common: Common) -> Session:
    SESSIONS.append(Session(common))
    return SESSIONS[-1]


def screen(dash: Conversations, parent: str | None = P, *, exit_status: bool = False) -> TaskScreenApp:
    """The screen as `hermes-task tui` builds it, its loop's waits cut short (20 ms)."""
    variables = {**ENV, "HERMES_TASK_STORE": os.environ["HERMES_TASK_STORE"]}
    env = Environment(variables=variables, sleep=lambda seconds: time.sleep(min(seconds, 0.02)))
    return build(session_of(Common(env=env)), parent, interval=0.5, exit_status=exit_status)


def drive(app: TaskScreenApp, scenario: Scenario, size: tuple[int, int] = (120, 40)) -> int | None:
    """Run `scenario` against the screen; the app's return value (its exit status on `q`)."""

    async def main() -> None:
        async with app.run_test(size=size) as pilot:
            await scenario(app, pilot)

    try:
        asyncio.run(main())
    finally:
        if app.loop is not None:
            app.loop.stop()
    return app.return_value


async def until(pilot: Pilot[int], ready: Callable[[], bool], what: str, timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        assert time.monotonic() < deadline, f"never: {what}"
        await pilot.pause(0.05)


def pane(app: TaskScreenApp) -> list[str]:
    """The transcript's lines, as plain text."""
    return [line.text for line in app.query_one("#transcript", Transcript).lines]


def title(app: TaskScreenApp) -> str:
    content = app.query_one("#pane-title", Static).render()
    return str(content)


def cell(app: TaskScreenApp, number: str, column: str) -> Text:
    table: DataTable[Text] = app.query_one("#tasks", DataTable)
    value = table.get_cell(number, column)
    assert isinstance(value, Text)
    return value


def rows_of(app: TaskScreenApp, number: str) -> list[str | None]:
    return [row.text for row in app.rows.get(number, [])]


def test_rows_arrive_in_the_selected_tasks_pane_and_j_k_g_G_select(fake: Conversations) -> None:
    family(fake, GOALS, [A, B, None])

    async def scenario(app: TaskScreenApp, pilot: Pilot[int]) -> None:
        await until(pilot, lambda: len(app.tasks) == 3 and bool(rows_of(app, "1.2")), "three tasks read")
        assert app.selected == "1.1"
        write(fake, A, "first from A")()
        await until(pilot, lambda: any("first from A" in line for line in pane(app)), "A's row shown")
        assert title(app).splitlines()[0] == A  # the child id, whole
        await pilot.press("j")
        assert app.selected == "1.2"
        assert title(app).splitlines()[0] == B
        assert any("Write the tests" in line for line in pane(app))  # B's goal row
        assert not any("first from A" in line for line in pane(app))
        await pilot.press("G")
        assert app.selected == "1.3"
        text = "\n".join(pane(app))
        assert (
            RECOVER["unavailable"].format(reason=UNAVAILABLE["no_durable_child_reference"])
            in text.replace("\n", " ")
            or UNAVAILABLE["no_durable_child_reference"][:40] in text
        )
        await pilot.press("k")
        assert app.selected == "1.2"
        await pilot.press("g")
        assert app.selected == "1.1"
        await pilot.press("q")

    assert drive(screen(fake), scenario) == 0


def test_follow_stops_when_scrolled_up_and_f_turns_it_back_on(fake: Conversations) -> None:
    family(fake, GOALS, [A, B, None])
    for i in range(60):
        fake.add(A, "assistant", f"backlog {i}")

    async def scenario(app: TaskScreenApp, pilot: Pilot[int]) -> None:
        log = app.query_one("#transcript", Transcript)
        await until(pilot, lambda: "backlog 59" in rows_of(app, "1.1"), "the backlog read")
        await until(pilot, lambda: log.max_scroll_y > 0 and log.scroll_y == log.max_scroll_y, "at the end")
        assert app.follow
        await pilot.press("tab")
        assert log.has_focus
        await pilot.press("pageup")
        assert not app.follow
        held = log.scroll_y
        write(fake, A, "while scrolled up")()
        await until(pilot, lambda: "while scrolled up" in rows_of(app, "1.1"), "the new row read")
        await pilot.pause(0.1)
        assert log.scroll_y == held  # not pulled down
        await pilot.press("f")
        assert app.follow
        write(fake, A, "followed again")()
        await until(pilot, lambda: any("followed again" in line for line in pane(app)), "the row shown")
        await until(pilot, lambda: log.scroll_y == log.max_scroll_y, "at the end again")
        await pilot.press("escape")
        assert app.query_one("#tasks", DataTable).has_focus
        await pilot.press("q")

    assert drive(screen(fake), scenario) == 0


def test_a_status_changing_mid_run_the_filters_and_the_exit_status(fake: Conversations) -> None:
    family(fake, GOALS, [A, B, None])

    async def scenario(app: TaskScreenApp, pilot: Pilot[int]) -> None:
        await until(pilot, lambda: len(app.tasks) == 3, "three tasks")
        assert cell(app, "1.2", "status").plain == "running"
        assert cell(app, "1.2", "status").style == "cyan"
        complete(fake, GOALS, ["completed", "failed", "completed"])()
        await until(pilot, lambda: app.tasks["1.2"].status == "failed", "1.2 failed")
        await until(pilot, lambda: app.result is not None, "the watch's end")
        assert cell(app, "1.2", "status").plain == "✗ failed"
        assert cell(app, "1.2", "status").style == "red"
        header = str(app.query_one("#header", Static).render())
        assert "verdict so far: failed" in header
        assert "every task ended (failed)" in header
        await pilot.press("e")
        assert app.shown == ["1.2"]
        await pilot.press("e")
        assert app.shown == ["1.1", "1.2", "1.3"]
        await pilot.press("s")  # the first status present: completed
        assert app.shown == ["1.1", "1.3"]
        await pilot.press("s")
        assert app.shown == ["1.2"]
        await pilot.press("s")
        assert app.shown == ["1.1", "1.2", "1.3"]
        await pilot.press("q")

    assert drive(screen(fake, exit_status=True), scenario) == 8


def test_q_with_exit_status_while_a_task_runs_exits_9_and_without_it_0(fake: Conversations) -> None:
    family(fake, GOALS, [A, B, None])

    async def scenario(app: TaskScreenApp, pilot: Pilot[int]) -> None:
        await until(pilot, lambda: len(app.tasks) == 3, "three tasks")
        await pilot.press("q")

    assert drive(screen(fake, exit_status=True), scenario) == 9
    assert drive(screen(fake), scenario) == 0


def test_search_n_and_N_and_reasoning(fake: Conversations) -> None:
    family(fake, GOALS, [A, B, None])
    for i in range(30):
        fake.add(A, "assistant", f"row {i}" + (" needle" if i in (3, 20) else ""))

    async def scenario(app: TaskScreenApp, pilot: Pilot[int]) -> None:
        log = app.query_one("#transcript", Transcript)
        await until(pilot, lambda: "row 29" in rows_of(app, "1.1"), "rows read")
        await pilot.press("slash")
        await pilot.press(*"needle")
        await pilot.press("enter")
        assert len(app.matches) == 2
        assert not app.follow
        first = log.scroll_y
        assert "needle" in pane(app)[app.matches[0]] or "needle" in "".join(
            pane(app)[app.matches[0] : app.matches[0] + 3]
        )
        await pilot.press("n")
        assert app.match == 1
        assert log.scroll_y >= first
        await pilot.press("N")
        assert app.match == 0
        await pilot.press("q")

    assert drive(screen(fake), scenario) == 0


def test_c_shows_the_cli_commands_and_y_copies_the_child_id(fake: Conversations) -> None:
    family(fake, GOALS, [A, B, None])
    copied: list[str] = []

    async def scenario(app: TaskScreenApp, pilot: Pilot[int]) -> None:
        app.copy_to_clipboard = copied.append  # type: ignore[method-assign,assignment]
        await until(pilot, lambda: len(app.tasks) == 3, "three tasks")
        await pilot.press("y")
        assert copied == [A]
        await pilot.press("c")
        modal = app.screen
        assert isinstance(modal, TextScreen)
        shown = str(modal.query_one("#lines", Static).render())
        assert shown.splitlines()[:3] == [
            f"hermes-task show {A}",
            f"hermes-task follow {A}",
            f"hermes-task older {A}",
        ]
        await pilot.press("escape")
        await pilot.press("G")  # 1.3: no child
        await pilot.press("y")
        assert copied == [A]
        await pilot.press("question_mark")
        assert isinstance(app.screen, TextScreen)
        await pilot.press(*"copy")
        assert str(app.screen.query_one("#lines", Static).render()).splitlines() == [
            "y               copy the child id (OSC 52)"
        ]
        await pilot.press("escape")
        await pilot.press("q")

    assert drive(screen(fake), scenario) == 0


def test_o_loads_older_rows_as_older_pages_them(fake: Conversations) -> None:
    family(fake, ["Write the parser"], [A])
    for i in range(200):
        fake.add(A, "assistant", f"old {i}")

    async def scenario(app: TaskScreenApp, pilot: Pilot[int]) -> None:
        await until(pilot, lambda: "old 199" in rows_of(app, "1.1"), "the newest rows")
        before = rows_of(app, "1.1")
        assert before[0] != "Write the parser"  # the follow's first read: the newest rows only
        await pilot.press("o")
        await until(pilot, lambda: len(rows_of(app, "1.1")) > len(before), "older rows")
        after = rows_of(app, "1.1")
        assert after[-len(before) :] == before  # older rows go first, the known ones unchanged
        assert len(after) == len(set(after))
        await pilot.press("q")

    assert drive(screen(fake), scenario) == 0


def test_hostile_text_is_shown_literally_never_as_markup_or_escapes(fake: Conversations) -> None:
    goal = "[bold]x[/] \x1b]52;c;ZXZpbA==\x07[link=http://evil]y[/link]"
    family(fake, [goal], [A])
    fake.add(A, "assistant", "[red]not red[/] \x1b[2J cleared?")

    async def scenario(app: TaskScreenApp, pilot: Pilot[int]) -> None:
        await until(pilot, lambda: len(rows_of(app, "1.1")) >= 2, "rows read")
        goal_cell = cell(app, "1.1", "goal")
        assert goal_cell.plain.startswith("[bold]x[/]")
        assert "\x1b" not in goal_cell.plain
        assert not goal_cell.spans
        text = "\n".join(pane(app))
        assert "[red]not red[/]" in text
        assert "\x1b" not in text
        await pilot.press("q")

    assert drive(screen(fake), scenario, size=(220, 40)) == 0


def test_without_a_parent_the_parents_list_opens_the_chosen_one(fake: Conversations) -> None:
    family(fake, GOALS, [A, B, None])
    entry = ParentEntry(
        id=P, source="cli", started_at=1796056440.0, ended_at=None, end_reason=None, state="open",
        title="[b]Fan[/b] out", first_words=None, delegated_children=2, more_children=False,
        last_delegated_at=None, delegated_by=None,
    )  # fmt: skip
    app = screen(fake, None)
    app.list_parents = lambda: ([entry], [])

    async def scenario(app: TaskScreenApp, pilot: Pilot[int]) -> None:
        await until(pilot, lambda: bool(getattr(app.screen, "entries", None)), "the parents listed")
        table: DataTable[Text] = app.screen.query_one("#parents", DataTable)
        assert table.get_cell(P, "title").plain == "[b]Fan[/b] out"
        await pilot.press("enter")
        await until(pilot, lambda: len(app.tasks) == 3, "the chosen parent's tasks")
        assert app.parent_id == P
        await pilot.press("q")

    assert drive(app, scenario) == 0


def test_help_version_and_show_import_no_textual_module() -> None:
    env = {**PROBE_ENV, "PYTHONPATH": str(SRC)}
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "hermes_task", "--help"],
        capture_output=True, text=True, timeout=60, env=env, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    imported = [line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if "|" in line]
    assert "hermes_task.cli.app" in imported  # the report was read
    assert not [m for m in imported if m.split(".")[0] == "textual"]
    probe = "import sys\nfrom hermes_task.__main__ import main\nsys.argv = ['hermes-task', *sys.argv[1:]]\n"
    probe += "try:\n    main()\nexcept SystemExit:\n    pass\nprint(' '.join(sys.modules), file=sys.stderr)\n"
    for args in (
        ["--help"],
        ["--version"],
        ["tui", "--help"],
        ["show", "20260101_000000_abcdef", "--url", "http://127.0.0.1:9"],
    ):
        proc = subprocess.run(
            [sys.executable, "-c", probe, *args],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
            check=False,
        )
        modules = proc.stderr.splitlines()[-1].split()
        assert "hermes_task.cli.app" in modules, (args, proc.stderr)
        assert not [m for m in modules if m.split(".")[0] == "textual"], args


def test_without_textual_the_command_says_how_to_install_it_in_one_line() -> None:
    env = {**PROBE_ENV, "PYTHONPATH": str(SRC)}
    # find_spec is the command's check: run it where textual cannot be found (an isolated path)
    script = (
        "import importlib.util, sys\n"
        "real = importlib.util.find_spec\n"
        "importlib.util.find_spec = lambda name, *a: None if name == 'textual' else real(name, *a)\n"
        "from hermes_task.__main__ import main\n"
        "sys.argv = ['hermes-task', 'tui', '" + P + "']\n"
        "main()\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env=env, check=False
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == "error: hermes-task tui needs Textual: pip install 'hermes-task[tui]'\n"


def test_the_event_feed_hands_the_loops_reports_over_as_events() -> None:
    """The screen's reporter: what `follow --parent --json` writes, as events, each with the
    task it concerns (a child's warning or error) and the parent's own with none."""
    got: list[tuple[FollowEvent, str | None]] = []
    feed = EventFeed(lambda event, task: got.append((event, task)))
    entry = recover_entry()
    feed.task(entry)
    feed.rows([Row(id=7, session_id=A, role="assistant", text="hi")], entry)
    feed.child_warning(entry, WarningItem(code=WarningCode.partial_history, message="older rows missing"))
    feed.child_error(entry, HermesError(Code.NETWORK, "down"), retrying=True)
    feed.warning(WarningItem(code=WarningCode.store_unavailable, message="no store"))
    feed.error(HermesError(Code.NOT_FOUND, "gone", retryable=False), retrying=False, delay=None)
    feed.result(Outcome("ended", "ended", "completed", 0), [entry])
    kinds = [(type(event).__name__, task) for event, task in got]
    assert kinds == [
        ("TaskEvent", None), ("RowEvent", None), ("WarningEvent", "1.1"), ("ErrorEvent", "1.1"),
        ("WarningEvent", None), ("ErrorEvent", None), ("ResultEvent", None),
    ]  # fmt: skip
    row = got[1][0]
    assert isinstance(row, RowEvent)
    assert row.task is not None
    assert (row.task.number, row.task.child_session_id, row.text) == ("1.1", A, "hi")
    assert got[2][0] == WarningEvent(code=WarningCode.partial_history, message="task 1.1: older rows missing")
    error = got[5][0]
    assert isinstance(error, ErrorEvent)
    assert (error.code, error.retryable) == ("not_found", False)


def recover_entry() -> TaskEntry:
    return TaskEntry(
        call_id="fan", goal="Write the parser", task_index=0, delegation_id=DELEG, subagent_id=None,
        child_session_id=A, status=TaskStatus.running, terminal=False, unavailable_reason=None, number="1.1",
    )  # fmt: skip


def test_the_readmes_screenshot_is_the_screens_current_export() -> None:
    """docs/tui.svg is what tools/regen.py makes of the current screen (Textual's own export)."""
    regen = load_tool("regen")
    assert regen.tui_screenshot() == regen.SCREENSHOT.read_text(encoding="utf-8"), (
        "docs/tui.svg is stale: run .venv/bin/python tools/regen.py"
    )


def headless(monkeypatch: pytest.MonkeyPatch, scenario: Scenario) -> None:
    """`hermes-task tui` run in-process: the screen's `run` is Textual's own, headless, with
    `scenario` as its autopilot (no terminal here)."""
    real = TaskScreenApp.run

    def run(self: TaskScreenApp, **_kwargs: object) -> int | None:
        async def pilot(driven: Pilot[object]) -> None:
            await scenario(self, cast(Pilot[int], driven))

        return real(self, headless=True, size=(120, 40), auto_pilot=pilot)

    monkeypatch.setattr(TaskScreenApp, "run", run)


def test_the_command_runs_the_screen_and_exits_with_its_status(
    fake: Conversations, monkeypatch: pytest.MonkeyPatch
) -> None:
    family(fake, GOALS, [A, B, None])

    async def scenario(app: TaskScreenApp, pilot: Pilot[int]) -> None:
        await until(pilot, lambda: len(app.tasks) == 3, "three tasks")
        await pilot.press("q")

    headless(monkeypatch, scenario)
    result = invoke("tui", P, "--interval", "0.5", "--exit-status", env=ENV)
    assert result.exit_code == 9, result.stderr  # a task still runs
    result = invoke("tui", P, env=ENV)
    assert result.exit_code == 0, result.stderr


def test_an_invalid_parent_id_is_a_usage_error_before_the_screen_opens(fake: Conversations) -> None:
    result = invoke("tui", "", env=ENV)
    assert result.exit_code == 2
    assert result.stderr.startswith("error: ")
    assert result.stdout == ""


def test_wrap_and_reasoning_redraw_the_pane(fake: Conversations) -> None:
    family(fake, GOALS, [A, B, None])
    fake.add(A, "assistant", "visible answer " + "word " * 60, reasoning="the hidden chain of thought")

    async def scenario(app: TaskScreenApp, pilot: Pilot[int]) -> None:
        await until(
            pilot, lambda: any("visible answer" in (r or "") for r in rows_of(app, "1.1")), "rows read"
        )
        await pilot.pause(0.1)
        joined = "\n".join(pane(app))
        assert "the hidden chain of thought" not in joined
        assert "reasoning hidden" in joined
        wrapped = len(pane(app))
        await pilot.press("r")
        assert app.reasoning
        assert any("the hidden chain of thought" in line for line in pane(app))
        await pilot.press("r")
        await pilot.press("w")
        assert not app.wrap
        assert len(pane(app)) < wrapped  # the long row is one line now
        await pilot.press("w")
        assert len(pane(app)) == wrapped
        await pilot.press("q")

    assert drive(screen(fake), scenario) == 0


def test_the_parents_list_says_when_the_store_proposes_none_or_fails(fake: Conversations) -> None:
    """`list_parents` as `parents` runs it: this store knows no delegation; then a failing list."""
    family(fake, GOALS, [A, B, None])

    def state(app: TaskScreenApp) -> str:
        return str(app.screen.query_one("#parents-state", Static).render())

    async def empty(app: TaskScreenApp, pilot: Pilot[int]) -> None:
        await until(pilot, lambda: "reading" not in state(app), "the list read")
        assert state(app).startswith("no chat in the store called delegate_task")
        await pilot.press("q")

    assert drive(screen(fake, None), empty) == 0

    def failing() -> tuple[list[ParentEntry], list[WarningItem]]:
        raise HermesError(Code.STORE_UNAVAILABLE, "no store [bold]here[/]")

    app = screen(fake, None)
    app.list_parents = failing

    async def failed(app: TaskScreenApp, pilot: Pilot[int]) -> None:
        await until(pilot, lambda: "reading" not in state(app), "the failure shown")
        assert state(app).startswith("error: ")
        assert state(app).endswith(": no store [bold]here[/]")  # as text, never markup
        assert app.loop is None  # nothing opened
        await pilot.press("q")

    assert drive(app, failed) == 0


def test_o_on_a_task_without_a_child_reads_nothing(fake: Conversations) -> None:
    family(fake, GOALS, [A, B, None])

    async def scenario(app: TaskScreenApp, pilot: Pilot[int]) -> None:
        await until(pilot, lambda: len(app.tasks) == 3, "three tasks")
        await pilot.press("G")
        await pilot.press("o")  # no child: nothing to page
        assert not app.rows["1.3"]
        await pilot.press("q")

    assert drive(screen(fake), scenario) == 0


@pytest.mark.parametrize("quiet", [False, True])
def test_quiet_keeps_the_setups_warning_off_the_screen(fake: Conversations, quiet: bool) -> None:
    family(fake, GOALS, [A, B, None])
    variables = {**ENV, "HERMES_TASK_STORE": "/nonexistent/state.db"}  # no store here: a setup warning
    env = Environment(variables=variables, sleep=lambda seconds: time.sleep(min(seconds, 0.02)))
    app = build(session_of(Common(env=env, quiet=quiet)), P, interval=0.5, exit_status=False)

    async def scenario(app: TaskScreenApp, pilot: Pilot[int]) -> None:
        await until(pilot, lambda: len(app.tasks) == 3, "three tasks")
        await pilot.pause(0.3)
        warned = [note for note in app.notes if "local Hermes store was not used" in note]
        assert bool(warned) is not quiet, app.notes
        await pilot.press("q")

    assert drive(app, scenario) == 0


def test_sigterm_ends_the_screen_with_143_and_stops_the_loop(fake: Conversations) -> None:
    family(fake, GOALS, [A, B, None])

    async def scenario(app: TaskScreenApp, pilot: Pilot[int]) -> None:
        await until(pilot, lambda: len(app.tasks) == 3, "three tasks")
        handlers = getattr(asyncio.get_running_loop(), "_signal_handlers", {})
        assert signal.SIGTERM in handlers  # the screen's own: a real SIGTERM is safe to send
        os.kill(os.getpid(), signal.SIGTERM)
        await until(pilot, lambda: app.return_value is not None, "the screen's end")

    app = screen(fake, exit_status=True)
    assert drive(app, scenario) == 143
    assert app.loop is not None
    assert app.loop.stop_event.is_set()


# -- --recursive: the tasks each task delegated in turn ------------------------------------------

G = "20261130_170003_dddddd"  # A's first child: a grandchild of the parent
NESTED = "deleg_5d1e0a77"


def nested_family(fake: Conversations) -> None:
    """The parent's three tasks; A delegated two of its own: G (running), and one whose
    child is the parent chat itself (a loop back: read once, where it is)."""
    family(fake, GOALS, [A, B, None])
    results = [{"task_index": 0, "status": "running", "child_session_id": G},
               {"task_index": 1, "status": "running", "child_session_id": P}]  # fmt: skip
    fake.spawn(A, "call_a", ["Read a.py", "Loop back"], {"results": results, "delegation_id": NESTED})
    fake.session(G, parent=A)
    fake.add(G, "user", "Read a.py")


def complete_nested(fake: Conversations, statuses: list[str]) -> None:
    text = [f"[ASYNC DELEGATION BATCH COMPLETE — {NESTED}]", "Finished.", ""]
    for i, (goal, status) in enumerate(zip(["Read a.py", "Loop back"], statuses, strict=True)):
        text += ["", f"--- ✓ TASK {i + 1}/2: {goal}  (status={status}, 1.0s) ---", "ok"]
    fake.add(A, "user", "\n".join(text))


def recursive_screen(fake: Conversations, *, exit_status: bool = False) -> TaskScreenApp:
    variables = {**ENV, "HERMES_TASK_STORE": os.environ["HERMES_TASK_STORE"]}
    env = Environment(variables=variables, sleep=lambda seconds: time.sleep(min(seconds, 0.02)))
    return build(session_of(Common(env=env)), P, interval=0.5, exit_status=exit_status, recursive=True)


def test_recursive_nests_each_childs_tasks_under_it_live_and_selectable(fake: Conversations) -> None:
    nested_family(fake)
    order = ["1.1", "1.1/1.1", "1.1/1.2", "1.2", "1.3"]

    async def scenario(app: TaskScreenApp, pilot: Pilot[int]) -> None:
        await until(pilot, lambda: app.shown == order, "the nested tasks under 1.1")
        assert [cell(app, key, "#").plain for key in order] == ["1.1", "  ↳ 1.1", "  ↳ 1.2", "1.2", "1.3"]
        assert cell(app, "1.1/1.1", "child session").plain == G
        assert cell(app, "1.1/1.1", "status").plain == "running"
        await pilot.press("j")
        assert app.selected == "1.1/1.1"
        assert title(app).splitlines()[:2] == [G, "task 1.1/1.1 · running"]
        write(fake, G, "from the grandchild")()
        await until(pilot, lambda: any("from the grandchild" in line for line in pane(app)), "G's row shown")
        await pilot.press("j")  # the loop back: its child is the parent chat, not read again
        assert app.selected == "1.1/1.2"
        assert "this task's child is the parent chat's conversation" in " ".join(pane(app))
        complete(fake, GOALS, ["completed", "completed", "completed"])()
        await until(pilot, lambda: app.tasks["1.2"].terminal, "the parent's tasks completed")
        await pilot.pause(0.5)
        assert app.result is None  # the nested tasks still run: the watch goes on
        assert "verdict so far: running" in str(app.query_one("#header", Static).render())
        complete_nested(fake, ["completed", "failed"])
        await until(pilot, lambda: app.tasks["1.1/1.2"].status == "failed", "a nested task failed")
        assert cell(app, "1.1/1.2", "status").plain == "✗ failed"
        await until(pilot, lambda: app.result is not None, "the watch's end")
        assert "every task ended (failed)" in str(app.query_one("#header", Static).render())
        await pilot.press("e")
        assert app.shown == ["1.1/1.2"]
        await pilot.press("q")

    assert drive(recursive_screen(fake, exit_status=True), scenario) == 8


def test_without_recursive_no_nested_task_is_read(fake: Conversations) -> None:
    nested_family(fake)

    async def scenario(app: TaskScreenApp, pilot: Pilot[int]) -> None:
        await until(pilot, lambda: bool(rows_of(app, "1.1")) and len(app.tasks) == 3, "three tasks")
        await pilot.pause(0.5)
        assert app.shown == ["1.1", "1.2", "1.3"]
        await pilot.press("q")

    assert drive(screen(fake), scenario) == 0
    assert not any(p.startswith(f"/api/sessions/{G}") for p in fake.paths_asked())


def test_q_while_a_nested_task_runs_exits_9_with_exit_status(fake: Conversations) -> None:
    nested_family(fake)
    complete(fake, GOALS, ["completed", "completed", "completed"])()

    async def scenario(app: TaskScreenApp, pilot: Pilot[int]) -> None:
        await until(pilot, lambda: "1.1/1.1" in app.tasks, "the nested tasks")
        await pilot.press("q")

    assert drive(recursive_screen(fake, exit_status=True), scenario) == 9


def test_q_after_a_watch_failure_exits_with_its_code_with_exit_status_else_0() -> None:
    """As `recover --watch --exit-status` would: the watch's own result (here a failure, 4)."""

    def start(_parent: str, emit: Callable[[FollowEvent, str | None], None]) -> Loop:
        emit(ErrorEvent(code="not_found", message="session not found", retryable=False), None)
        emit(ResultEvent(state="unknown", end_reason=None, exit_code=4), None)
        return Loop(threading.Event())

    async def scenario(app: TaskScreenApp, pilot: Pilot[int]) -> None:
        await until(pilot, lambda: app.result is not None, "the failure")
        await pilot.press("q")

    for wanted, code in ((True, 4), (False, 0)):
        app = TaskScreenApp(start=start, parent_id=P, exit_status=wanted)
        assert drive(app, scenario) == code


def test_q_on_the_parents_list_exits_0_even_with_exit_status(fake: Conversations) -> None:
    """No parent opened: nothing was watched, so nothing is still running (not 9)."""
    app = screen(fake, None, exit_status=True)
    app.list_parents = lambda: ([], [])

    async def scenario(app: TaskScreenApp, pilot: Pilot[int]) -> None:
        await until(pilot, lambda: isinstance(app.screen, ParentsScreen), "the parents list")
        await pilot.press("q")

    assert drive(app, scenario) == 0
