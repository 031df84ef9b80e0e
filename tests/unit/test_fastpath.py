"""`show`'s typer-free start path (cli/fastpath.py) calls `run_show` exactly as typer would,
or leaves the command line to typer; its table is typer's own `show` command."""

from __future__ import annotations

import errno
import inspect
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from hermes_task import __main__ as entry
from hermes_task.cli import fastpath, run_show
from hermes_task.cli import show as show_command
from hermes_task.cli.app import app
from hermes_task.cli.argspec import ARGUMENTS, OPTIONS
from hermes_task.cli.environment import Environment
from tests.support.cli_runner import CLI_ENV
from tests.support.regen import load_regen
from tests.support.replay import BASE_URL, Replay

ROOT = Path(__file__).resolve().parents[2]
regen = load_regen()


Call = tuple[dict[str, Any], dict[str, Any]]
SIGNATURE = inspect.signature(run_show.run_show)


def call_of(common: Any, **kwargs: Any) -> Call:
    """(the Common fields but the environment, every run_show parameter with defaults applied)."""
    bound = SIGNATURE.bind(common, **kwargs)
    bound.apply_defaults()
    del bound.arguments["common"]
    return {name: getattr(common, name) for name in fastpath.COMMON}, dict(bound.arguments)


def recording(patch: pytest.MonkeyPatch) -> list[Call]:
    """run_show replaced, on both paths, by a recorder of what it was called with."""
    seen: list[Call] = []

    def record(common: Any, **kwargs: Any) -> None:
        seen.append(call_of(common, **kwargs))

    patch.setattr(run_show, "run_show", record)
    patch.setattr(show_command, "run_show", record)
    return seen


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[Call]:
    return recording(monkeypatch)


def typer_call(argv: list[str], seen: list[Call]) -> Call | None:
    """What typer calls run_show with for `show ARGV` (None: it did not call it)."""
    before = len(seen)
    result = CliRunner().invoke(app, ["show", *argv], env=CLI_ENV, obj=Environment())
    if len(seen) == before:
        return None
    assert result.exit_code == 0, result.output
    return seen.pop()


def fast_call(argv: list[str], seen: list[Call]) -> Call | None:
    before = len(seen)
    if not fastpath.run(argv, Environment(variables={})):
        assert len(seen) == before
        return None
    return seen.pop()


VALUES = {
    "str": ["x", "", "a=b", "-x", "--json", "20261201_101010_abcdef", "é"],
    "int": ["0", "3", "12", "-1", "+2", " 4", "1_0", "x", "٣", ""],
    "float": ["0", "0.5", "10", "1e3", ".5", "5.", "0.0001", "0.001", "-1", "nan", "inf", ""],
    "choice": ["auto", "always", "never", "ALWAYS", "user", "tool", "Tool", "system", "assistant", "bogus"],
}


def option_tokens(flag: str) -> st.SearchStrategy[list[str]]:
    kind = OPTIONS[flag][1]
    if kind in ("flag", "flag_off"):
        return st.sampled_from([[flag], [flag], [f"{flag}=1"]])
    values = st.sampled_from(VALUES[kind])
    return st.one_of(values.map(lambda v: [flag, v]), values.map(lambda v: [f"{flag}={v}"]))


TOKENS = st.one_of(
    st.sampled_from(sorted(OPTIONS)).flatmap(option_tokens),
    st.sampled_from([["20261201_101010_abcdef"], ["child"], ["-"], ["--"], ["-qq"], ["--jso"], ["--help"]]),
)
LINES = st.lists(TOKENS, max_size=6).map(lambda parts: [t for part in parts for t in part])


@settings(max_examples=300, deadline=None)
@given(LINES)
def test_any_line_the_start_path_takes_typer_calls_the_same(argv: list[str]) -> None:
    with pytest.MonkeyPatch.context() as patch:
        seen = recording(patch)
        fast = fast_call(argv, seen)
        if fast is not None:
            assert typer_call(argv, seen) == fast


PLAIN = {
    "str": ["x", "a=b", "20261201_101010_abcdef", "é"],
    "int": ["0", "3", "12"],
    "float": ["0.001", "0.5", "10"],
}


@st.composite
def plain_lines(draw: st.DrawFn) -> list[str]:
    """What users type: the id and distinct options, each value written plainly."""
    flags = draw(st.lists(st.sampled_from(sorted(OPTIONS)), unique_by=lambda f: OPTIONS[f][0], max_size=8))
    parts: list[list[str]] = [["20261201_101010_abcdef"]]
    for flag in flags:
        _name, kind, repeatable, limit = OPTIONS[flag]
        if kind in ("flag", "flag_off"):
            parts.append([flag])
            continue
        choices = list(limit) if kind == "choice" else PLAIN[kind]
        for value in draw(st.lists(st.sampled_from(choices), min_size=1, max_size=3 if repeatable else 1)):
            parts.append([f"{flag}={value}"] if draw(st.booleans()) else [flag, value])
    order = draw(st.permutations(parts))
    return [token for part in order for token in part]


@settings(max_examples=200, deadline=None)
@given(plain_lines())
def test_plain_lines_take_the_start_path_and_typer_agrees(argv: list[str]) -> None:
    with pytest.MonkeyPatch.context() as patch:
        seen = recording(patch)
        fast = fast_call(argv, seen)
        assert fast is not None, argv
        assert typer_call(argv, seen) == fast


def test_a_plain_line_is_parsed_into_typed_values(calls: list[Call]) -> None:
    argv = ["ID", "--tip", "T1", "--tip=T2", "--around", "7", "--role", "tool", "--tail=0"]
    argv += ["--color", "never", "--request-timeout", "2.5", "--no-pager", "-q", "--json"]
    fast = fast_call(argv, calls)
    assert fast is not None
    common, own = fast
    assert own == {
        "child_id": "ID",
        "tip": ["T1", "T2"],
        "around": [7],
        "reasoning": False,
        "full": False,
        "utc": False,
        "no_hint": False,
        "tail": 0,
        "role": ["tool"],
    }
    assert common["color"] == "never"
    assert type(common["color"]).__name__ == "ColorMode"
    assert (common["request_timeout"], common["pager"], common["quiet"], common["json"]) == (
        2.5,
        False,
        True,
        True,
    )
    assert typer_call(argv, calls) == fast


@pytest.mark.parametrize(
    "argv",
    [
        [],  # CHILD_ID is missing
        ["A", "B"],  # one CHILD_ID only
        ["ID", "--tail", "-1"],  # typer's callback says why
        ["ID", "--tail", "+1"],
        ["ID", "--request-timeout", "0"],  # below the least value
        ["ID", "--color", "ALWAYS"],  # click folds the case
        ["ID", "--role", "bogus"],
        ["ID", "--json=1"],  # a flag takes no value
        ["ID", "--url"],  # the value is missing
        ["ID", "--url", "--json"],  # click would take --json as the URL
        ["ID", "--json", "--json"],  # named twice
        ["ID", "--pager", "--no-pager"],
        ["ID", "--help"],
        ["ID", "-h"],
        ["ID", "--", "--json"],
        ["ID", "-qq"],
        ["ID", "--jso"],
    ],
)
def test_anything_unusual_is_left_to_typer(argv: list[str], calls: list[Call]) -> None:
    assert fastpath.parse(argv) is None
    assert fast_call(argv, calls) is None


def test_a_shell_completing_goes_to_typer(calls: list[Call]) -> None:
    env = Environment(variables={"_HERMES_TASK_COMPLETE": "complete_bash"})
    assert fastpath.run(["ID"], env) is False
    assert calls == []


def test_the_console_script_takes_the_start_path_for_show(monkeypatch: pytest.MonkeyPatch) -> None:
    taken: list[list[str]] = []

    def run(argv: list[str]) -> bool:
        taken.append(list(argv))
        return True

    monkeypatch.setattr(fastpath, "run", run)
    monkeypatch.setattr(sys, "argv", ["hermes-task", "show", "ID", "--json"])
    entry.main()
    assert taken == [["ID", "--json"]]


@pytest.mark.parametrize(
    ("raised", "status", "said"), [(KeyboardInterrupt, 130, ""), (EOFError, 1, "\nerror: aborted\n")]
)
def test_an_interrupt_outside_the_shell_ends_as_typer_ends_it(
    monkeypatch: pytest.MonkeyPatch, raised: type[BaseException], status: int, said: str
) -> None:
    def interrupted(common: Any, **kwargs: Any) -> None:
        raise raised

    monkeypatch.setattr(run_show, "run_show", interrupted)
    monkeypatch.setattr(show_command, "run_show", interrupted)
    stderr = io.StringIO()
    with pytest.raises(SystemExit) as exc:
        fastpath.run(["ID"], Environment(variables={}, stderr_stream=stderr))
    result = CliRunner().invoke(app, ["show", "ID"], env=CLI_ENV, obj=Environment())
    assert (exc.value.code, stderr.getvalue()) == (result.exit_code, result.stderr) == (status, said)


def test_a_closed_pipe_outside_the_shell_exits_1_quietly(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def closed(common: Any, **kwargs: Any) -> None:
        raise BrokenPipeError(errno.EPIPE, "Broken pipe")

    monkeypatch.setattr(run_show, "run_show", closed)
    with (tmp_path / "out").open("w") as out, pytest.raises(SystemExit) as exc:
        fastpath.run(["ID"], Environment(variables={}, stdout_stream=out))
    assert exc.value.code == 1

    def failing(common: Any, **kwargs: Any) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(run_show, "run_show", failing)
    with pytest.raises(OSError, match="No space"):
        fastpath.run(["ID"], Environment(variables={}))


def test_show_through_the_start_path_prints_what_typer_prints() -> None:
    """End to end against the captured exchanges: same stdout, stderr and status, and the
    start path never imported typer."""
    c1 = Replay("official").manifest["c1"]
    argv = [c1["root"], "--tip", c1["tip"], "--json", "--url", BASE_URL]
    probe = """
import io, json, sys
import httpx
from tests.support.replay import Replay
from hermes_task.cli import fastpath
from hermes_task.cli.environment import Environment
out, err = io.StringIO(), io.StringIO()
env = Environment(variables=json.loads(sys.argv.pop(1)), stdout_stream=out, stderr_stream=err,
                  transport=httpx.MockTransport(Replay("official")))
try:
    taken = fastpath.run(sys.argv[1:], env)
    code = 0
except SystemExit as exc:
    taken, code = True, exc.code
json.dump({"taken": taken, "code": code, "out": out.getvalue(), "err": err.getvalue(),
           "typer": "typer" in sys.modules}, sys.stdout)
"""
    proc = subprocess.run(
        # the same local store as the in-process run below (conftest's: it proposes nothing)
        [
            sys.executable,
            "-c",
            probe,
            json.dumps({**CLI_ENV, "HERMES_TASK_STORE": os.environ["HERMES_TASK_STORE"]}),
            *argv,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
    )
    fast = json.loads(proc.stdout)
    result = CliRunner().invoke(
        app,
        ["show", *argv],
        env=CLI_ENV,
        obj=Environment(transport=httpx.MockTransport(Replay("official"))),
    )
    assert fast["taken"] is True
    assert fast["typer"] is False
    assert (fast["code"], fast["out"], fast["err"]) == (result.exit_code, result.stdout, result.stderr)
    assert json.loads(fast["out"])["task"]["tip_id"] == c1["tip"]


def test_the_table_is_typers_show_command() -> None:
    assert (ROOT / "src/hermes_task/cli/argspec.py").read_text() == regen.argspec_text()
    assert ARGUMENTS == ("child_id",)


def test_the_table_refuses_what_the_start_path_cannot_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    import typer

    from hermes_task.cli import app as app_module

    def command(**option: Any) -> Any:
        def show(child: str, value: float = typer.Option(0.5, "--value", **option)) -> None: ...

        return typer.main.get_command_from_info(
            typer.models.CommandInfo(callback=show), pretty_exceptions_short=True, rich_markup_mode=None
        )

    for option in ({"envvar": "X"}, {"callback": lambda v: v}, {"min": 1, "max": 2}):
        monkeypatch.setattr(app_module, "build_command", lambda _name, o=option: command(**o))
        with pytest.raises(ValueError, match="value"):
            regen.argspec_text()
