"""Regenerate the generated artefacts: completions/, schemas/ and the marked blocks of the docs.

    .venv/bin/python tools/regen.py           # write every artefact
    .venv/bin/python tools/regen.py --check   # exit 1 and name what is stale; write nothing
    .venv/bin/python tools/regen.py --matrix  # the support matrix from the last runs of every backend
    .venv/bin/python tools/regen.py --matrix --check  # exit 1 when the committed matrix differs

The docs are README.md and every docs/*.md (doc_files()); a block is replaced only between its
markers, never elsewhere, in whichever of those files holds it:
`<!-- help:main -->` ... `<!-- /help:main -->` holds `hermes-task --help`, `<!-- help:show -->`
holds `hermes-task show --help` (and so on for any command path), `<!-- exit-codes -->` and
`<!-- warnings -->` and `<!-- statuses -->` hold the tables generated from `failures.ExitStatus`
and the `WarningCode` and `TaskStatus` enums of `core/ui_strings.py`. docs/tui.svg is `hermes-task tui`'s screen as Textual exports it
(`tui_screenshot`: a scripted run of the loop's events). Help is rendered in a subprocess with a fixed terminal (COLUMNS=100,
TERM=dumb, NO_COLOR=1) so it is the same on every machine; trailing spaces are dropped.
The tests in tests/unit/test_completions.py, test_schemas.py and test_docs.py call these
functions and compare with the committed files.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"


def doc_files() -> list[Path]:
    """README.md and every docs/*.md: the files whose marked blocks are generated."""
    return [README, *sorted((ROOT / "docs").glob("*.md"))]


COMPLETION_FILES = {"bash": "hermes-task.bash", "zsh": "_hermes-task", "fish": "hermes-task.fish"}
REQUIRED_HELP = ("main", "show", "follow", "older", "parents", "recover", "search", "export")
HELP_ENV = {"COLUMNS": "100", "LINES": "50", "TERM": "dumb", "NO_COLOR": "1", "LANG": "C.UTF-8"}
MARKER = re.compile(r"<!-- (help:[a-z][a-z -]*|exit-codes|warnings|statuses) -->\n(.*?)<!-- /\1 -->\n?", re.S)
_RUN = "import sys; from hermes_task.cli.app import app; app(sys.argv[1:], prog_name='hermes-task')"


def generated_files() -> dict[Path, str]:
    """Every generated file under completions/ and schemas/, with its
    expected content."""
    from hermes_task.cli.app import completion_script
    from hermes_task.render import jsontext as schemas

    files = {
        ROOT / "completions" / name: completion_script(shell) for shell, name in COMPLETION_FILES.items()
    }
    files.update({ROOT / "schemas" / f"{name}.json": schemas.render(name) for name in schemas.NAMES})
    return files


def help_text(command: str) -> str:
    """`hermes-task [COMMAND] --help` as a user with a 100-column dumb terminal sees it."""
    args = [] if command == "main" else command.split()
    env = {"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "/"), **HELP_ENV}
    proc = subprocess.run(
        [sys.executable, "-c", _RUN, *args, "--help"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=60,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"hermes-task {command} --help exited {proc.returncode}: {proc.stderr.strip()}")
    lines = [line.rstrip() for line in proc.stdout.splitlines()]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines) + "\n"


def exit_codes_table() -> str:
    from hermes_task.core.ui_strings import EXIT_MEANINGS
    from hermes_task.failures import Code, ExitStatus, exit_status_for

    lines = ["| code | meaning | JSON `error.code` |", "|---|---|---|"]
    for status in ExitStatus:
        codes = ", ".join(f"`{c.value}`" for c in Code if exit_status_for(c) is status) or "—"
        lines.append(f"| {int(status)} | {EXIT_MEANINGS[status]} | {codes} |")
    return "\n".join(lines) + "\n"


def warnings_table() -> str:
    from hermes_task.core.ui_strings import WarningCode

    lines = ["| code | when |", "|---|---|"]
    lines += [f"| `{code}` | {code.when} |" for code in WarningCode]
    return "\n".join(lines) + "\n"


def statuses_table() -> str:
    """The statuses a parent records that end a task first, then the others."""
    from hermes_task.core.delegations import TERMINAL_STATUSES
    from hermes_task.core.ui_strings import TaskStatus

    lines = ["| status | shown as | terminal |", "|---|---|---|"]
    for status in sorted(TaskStatus, key=lambda s: s not in TERMINAL_STATUSES):
        ends = ("yes" if status.ends else "no") + (f": {status.note}" if status.note else "")
        lines.append(f"| `{status}` | {status.label} | {ends} |")
    return "\n".join(lines) + "\n"


def block(name: str) -> str:
    """The expected content between the markers `<!-- NAME -->` and `<!-- /NAME -->`."""
    if name == "exit-codes":
        return exit_codes_table()
    if name == "warnings":
        return warnings_table()
    if name == "statuses":
        return statuses_table()
    command = name.removeprefix("help:")
    shown = "hermes-task --help" if command == "main" else f"hermes-task {command} --help"
    return f"```text\n$ {shown}\n{help_text(command)}```\n"


def markers(text: str) -> list[str]:
    return [m.group(1) for m in MARKER.finditer(text)]


def render_readme(text: str, errors: list[str] | None = None) -> str:
    """`text` with every marked block regenerated; everything outside markers untouched.
    A block that cannot be rendered (a command that does not exist yet) is left as it is
    and named in `errors`; without an `errors` list it raises."""

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        try:
            content = block(name)
        except RuntimeError as exc:
            if errors is None:
                raise
            errors.append(f"{name}: {str(exc).splitlines()[0]}")
            return match.group(0)
        return f"<!-- {name} -->\n{content}<!-- /{name} -->\n"

    return MARKER.sub(replace, text)


SCREENSHOT = ROOT / "docs" / "tui.svg"
SCREENSHOT_SIZE = (120, 30)


def tui_screenshot() -> str:
    """docs/tui.svg: `hermes-task tui` as Textual itself exports it (`export_screenshot`), at
    120x30, over a scripted run of the watch loop's events (`core/events.py`: the screen's only
    input), so the picture is the screen's current code and the same on every machine."""
    import asyncio

    from hermes_task.render.livescreen import Loop, TaskScreenApp

    events = _screenshot_events()

    def start(_parent: str, emit: Any) -> Loop:
        for event in events:
            emit(event, None)
        return Loop(threading.Event())

    app = TaskScreenApp(start=start, parent_id=SHOT_PARENT, url="http://127.0.0.1:9119", interval=2.0)
    shot: list[str] = []

    async def take() -> None:
        async with app.run_test(size=SCREENSHOT_SIZE) as pilot:
            while len(app.rows.get("1.1", [])) < len(events) - 3:
                await pilot.pause(0.05)
            # the frame once it is still: two exports in a row alike (a pane's lines are laid
            # out after the rows arrive, a refresh or two later)
            last = ""
            for _ in range(50):
                await pilot.pause(0.1)
                now = app.export_screenshot(title="hermes-task tui")
                if now == last:
                    break
                last = now
            shot.append(last)

    asyncio.run(take())
    return shot[0]


SHOT_PARENT = "20261203_101500_a1b2c3"


def _screenshot_events() -> list[Any]:
    """A parent with three tasks: one running (its rows arriving), one completed, one whose
    child no store proposed; what the loop would report of it."""
    from hermes_task.core.documents import Row, TaskEntry, ToolCall
    from hermes_task.core.events import RowEvent, TaskRef, task_event
    from hermes_task.core.ui_strings import TaskStatus

    children = ["20261203_101502_d4e5f6", "20261203_101503_0a1b2c"]
    base: dict[str, Any] = {"call_id": "call_1", "delegation_id": None, "subagent_id": None, "call_number": 1}
    tasks = [
        TaskEntry(**base, goal="Write the parser for the config format", task_index=0,
                  child_session_id=children[0], status=TaskStatus.running, terminal=False,
                  unavailable_reason=None, number="1.1"),
        TaskEntry(**base, goal="Write the tests", task_index=1, child_session_id=children[1],
                  status=TaskStatus.completed, terminal=True, unavailable_reason=None, number="1.2",
                  duration_seconds=84.2, summary="41 tests written; all pass."),
        TaskEntry(**base, goal="Write the docs", task_index=2, child_session_id=None, status=TaskStatus.running,
                  terminal=False, unavailable_reason="no_durable_child_reference", number="1.3"),
    ]  # fmt: skip
    ref = TaskRef(number="1.1", child_session_id=children[0])
    call = ToolCall(
        id="call_7f3a", name="terminal", arguments='{"command": "pytest -q tests/test_parser.py"}'
    )
    rows = [
        Row(id=1, session_id=children[0], role="user", text="Write the parser for the config format"),
        Row(id=2, session_id=children[0], role="assistant", text="I'll start with the tokenizer, then the grammar.",
            tool_calls=[call]),
        Row(id=3, session_id=children[0], role="tool", tool_name="terminal", tool_call_id="call_7f3a",
            text='{"output": "12 passed, 2 failed", "exit_code": 1}'),
        Row(id=4, session_id=children[0], role="assistant",
            text="Two failures: nested tables. Fixing the grammar's table rule next."),
    ]  # fmt: skip
    return [*(task_event(t) for t in tasks), *(RowEvent(**_fields(r), task=ref) for r in rows)]


def _fields(row: Any) -> dict[str, Any]:
    from msgspec.structs import asdict

    return asdict(row)


def regen_matrix(*, check: bool) -> int:
    """`--matrix`: render the support matrix of the last integration runs that covered every
    backend (`.matrix-results/`, written by tests/conftest.py) into the
    `<!-- support-matrix -->` blocks of README.md and docs/backends.md
    (`python -m tests.support.matrix`, run from the repository root so `tests.support` imports);
    with `--check`, write nothing and fail when a committed block differs."""
    cmd = [sys.executable, "-m", "tests.support.matrix", *(["--check"] if check else [])]
    return subprocess.call(cmd, cwd=ROOT)


def main(argv: list[str]) -> int:
    if "--matrix" in argv:
        return regen_matrix(check="--check" in argv)
    check = "--check" in argv
    stale: list[str] = []
    errors: list[str] = []
    wanted = generated_files()
    wanted[SCREENSHOT] = tui_screenshot()
    for doc in doc_files():
        if doc.exists():
            failed: list[str] = []
            wanted[doc] = render_readme(doc.read_text(encoding="utf-8"), failed)
            errors += [f"{doc.relative_to(ROOT)} block {e}" for e in failed]
    for path, content in wanted.items():
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current == content:
            continue
        stale.append(str(path.relative_to(ROOT)))
        if not check:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content, encoding="utf-8")
    verb = "stale" if check else "regenerated"
    for name in stale:
        print(f"{verb}: {name}")
    for error in errors:
        print(f"error: {error}", file=sys.stderr)
    return 1 if (check and stale) or errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
