"""Terminal escape injection: a corpus of hostile sequences through every output path.

Each corpus string is planted in every backend field that reaches a terminal (content,
reasoning, commentary, tool arguments, results, names and ids, roles, kinds, image alt
text, projected display fields, error details, mismatching ids, recovered goals and task
ids) and rendered by `show`, `follow` and `recover` with colour forced, with colour off,
with Markdown (the TTY renderer) and as JSON. With colour the only escape sequences are SGR
(`ESC [ digits ; m`); once those are stripped, and always without colour, no ESC, C1
control, bidi control, BEL, CR or other control character is left. JSON is pure ASCII and
carries the bytes intact.
"""

from __future__ import annotations

import io
import json
import re
from typing import Any

import pytest
from typer.testing import CliRunner

from hermes_task.cli.app import app
from hermes_task.core.documents import (
    BackendInfo,
    Candidate,
    Coverage,
    Row,
    SegmentInfo,
    TaskInfo,
    ToolCall,
    TranscriptDoc,
    Usage,
    WarningItem,
)
from hermes_task.core.sanitize import clean_line
from hermes_task.render import Target, terminal_rows
from hermes_task.render.rows import View
from tests.support import tally
from tests.support.dashboard import serving
from tests.support.replay import BASE_URL, TOKEN
from tests.support.scripted import Scripted, capture

CORPUS = {
    "osc52_clipboard": "\x1b]52;c;ZXZpbA==\x07",
    "osc8_link": "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\",
    "csi_clear_screen": "\x1b[2J\x1b[H",
    "csi_alt_screen": "\x1b[?1049h",
    "csi_sgr_from_data": "\x1b[31;1mred\x1b[0m",
    "csi_cursor_up_erase": "\x1b[1A\x1b[2K",
    "dcs": "\x1bP1$r0m\x1b\\",
    "ris_reset": "\x1bc",
    "c1_csi_8bit": "\x9b2J",
    "c1_osc_8bit": "\x9d52;c;ZXZpbA==\x9c",
    "c1_dcs_8bit": "\x90q\x9c",
    "bidi_override": "\u202eevil\u202c",
    "bidi_isolate": "\u2067x\u2069",
    "bel": "ring\x07",
    "cr_overwrite": "safe\rEVIL",
    "backspace": "abc\x08\x08\x08",
    "nul_and_del": "a\x00b\x7f",
    "zero_width_and_bom": "a\u200bb\ufeff",
}
SGR = re.compile(r"\x1b\[[0-9;]*m")
FORBIDDEN = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ud800-\udfff]"
)
ROW_PATHS = (
    "content",
    "reasoning",
    "commentary",
    "tool_arguments",
    "tool_results",
    "tool_names",
    "tool_call_ids",
    "roles",
    "kinds",
    "image_alt",
    "display_projections",
)
ENV = {"HERMES_DASHBOARD_TOKEN": TOKEN, "COLUMNS": "100", "XDG_CONFIG_HOME": "/nonexistent"}


def assert_clean(text: str, where: str) -> None:
    """Only SGR escapes; nothing else that a terminal would act on."""
    found = FORBIDDEN.search(SGR.sub("", text))
    assert found is None, (
        f"{where}: {found.group()!r} in {text[max(0, found.start() - 40) : found.end() + 40]!r}"
    )


def hostile_rows(session_id: str, payload: str) -> list[dict[str, Any]]:
    """One row per output path, each carrying `payload`."""
    p = payload
    rows: list[dict[str, Any]] = [
        {"role": "user", "content": f"content {p} end"},
        {"role": "assistant", "content": "thinking", "reasoning": f"reasoning {p}"},
        {"role": "assistant", "content": "", "display_commentary": [f"commentary {p}"]},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": f"call{p}",
                    "type": "function",
                    "function": {"name": f"tool{p}", "arguments": f'{{"a": "{p}"}}'},
                }
            ],
        },
        {"role": "tool", "content": f"result {p}", "tool_name": f"tool{p}", "tool_call_id": f"call{p}"},
        {"role": f"role{p}", "content": "x", "display_kind": f"kind{p}"},
        {
            "role": "user",
            "content": [{"type": "text", "text": f"part {p}"}, {"type": "image_url", "alt": f"alt{p}"}],
        },
        {
            "role": "assistant",
            "content": "raw",
            "display_content": f"shown {p}",
            "display_reasoning": f"why {p}",
        },
    ]
    return [{"id": 9000 + i, "session_id": session_id, **row} for i, row in enumerate(rows)]


def transcript_from_json(data: dict[str, Any]) -> TranscriptDoc:
    """The document a `show --json` printed, rebuilt (an unknown or missing key fails)."""
    task = data["task"]
    return TranscriptDoc(
        schema_version=data["schema_version"],
        kind=data["kind"],
        task=TaskInfo(
            **{
                **task,
                "candidate": Candidate(**task["candidate"]),
                "segments": [SegmentInfo(**segment) for segment in task["segments"]],
                "usage": Usage(**task["usage"]),
            }
        ),
        backend=BackendInfo(**data["backend"]),
        rows=[
            Row(**{**row, "tool_calls": [ToolCall(**call) for call in row["tool_calls"]]})
            for row in data["rows"]
        ],
        coverage=Coverage(**data["coverage"]),
        warnings=[WarningItem(**item) for item in data["warnings"]],
    )


def _rich_script(backend: str, payload: str) -> Scripted:
    def edit(body: dict[str, Any]) -> None:
        body["messages"] = hostile_rows(body["session_id"], payload)
        body["pagination"]["returned"] = len(body["messages"])

    return Scripted(backend, None, corrupt=-1).replace("messages:rich", edit)


def _invoke(script: Scripted, args: list[str]) -> Any:
    with serving(script):
        return CliRunner().invoke(app, [*args, "--url", BASE_URL], env=ENV)


BACKENDS = ("official", "iot")
CASES = [pytest.param(b, name, id=f"{b}-{name}") for b in BACKENDS for name in CORPUS]
# error and recover output do not depend on the backend's contract: each case on one of them
ALTERNATE = [
    pytest.param(BACKENDS[i % 2], name, id=f"{BACKENDS[i % 2]}-{name}") for i, name in enumerate(CORPUS)
]


@pytest.mark.parametrize(("backend", "name"), CASES)
def test_show_and_follow_rows_are_clean_in_every_mode(backend: str, name: str) -> None:
    payload = CORPUS[name]
    rich = capture(backend)["manifest"]["rich"]["id"]
    # follow renders with the same row renderer: one backend per corpus case is enough
    follow_here = (list(CORPUS).index(name) % 2 == 0) == (backend == "official")
    for command in ("show", "follow") if follow_here else ("show",):
        coloured = _invoke(
            _rich_script(backend, payload),
            [command, rich, "--color", "always", "--reasoning"]
            if command == "show"
            else [command, rich, "--color", "always"],
        )
        assert coloured.exit_code == 0, coloured.stderr
        assert SGR.search(coloured.stdout), "colour was forced: SGR expected"
        assert_clean(coloured.stdout, f"{command} stdout (colour)")
        assert_clean(coloured.stderr, f"{command} stderr (colour)")
        plain = _invoke(
            _rich_script(backend, payload),
            [command, rich, "--color", "never", *(["--reasoning"] if command == "show" else [])],
        )
        assert plain.exit_code == 0, plain.stderr
        assert "\x1b" not in plain.stdout + plain.stderr
        assert_clean(plain.stdout, f"{command} stdout (no colour)")
        assert f"content {clean_line(payload)} end" in plain.stdout.replace("\n", " ")
        tally.count(f"escapes.{command} rows, colour forced", len(ROW_PATHS))
        tally.count(f"escapes.{command} rows, no colour", len(ROW_PATHS))
    shown = _invoke(_rich_script(backend, payload), ["show", rich, "--json"])
    assert shown.exit_code == 0
    assert shown.stdout.isascii()
    rows = json.loads(shown.stdout)["rows"]
    assert rows[0]["text"] == f"content {payload} end"  # JSON carries the bytes, escaped
    tally.count("escapes.show rows, JSON", len(ROW_PATHS))
    if follow_here:
        followed = _invoke(_rich_script(backend, payload), ["follow", rich, "--json"])
        assert followed.exit_code == 0
        assert followed.stdout.isascii()
        assert [json.loads(line)["type"] for line in followed.stdout.splitlines()][-1] == "result"
        tally.count("escapes.follow rows, NDJSON", len(ROW_PATHS))
    doc = transcript_from_json(json.loads(shown.stdout))
    for markdown in (True, False):
        sink = io.StringIO()
        painter = terminal_rows.Painter(color=True, width=100, markdown=markdown)
        terminal_rows.transcript(
            Target(sink.write, tty=True, color=True, columns=100), doc, View(reasoning=True), painter
        )
        assert SGR.search(sink.getvalue())
        assert_clean(sink.getvalue(), f"painter markdown={markdown}")
        tally.count(f"escapes.renderer rows, Markdown {'on' if markdown else 'off'}", len(ROW_PATHS))


@pytest.mark.parametrize(("backend", "name"), ALTERNATE)
def test_errors_and_ids_from_the_backend_are_clean(backend: str, name: str) -> None:
    payload = CORPUS[name]
    rich = capture(backend)["manifest"]["rich"]["id"]
    refused = Scripted(backend, None, corrupt=-1).replace(
        "detail:rich", status=400, body={"detail": f"bad {payload}"}
    )
    for args in (["--color", "always"], ["--json"]):
        result = _invoke(refused, ["show", rich, *args])
        assert result.exit_code == 6, result.stderr
        assert result.stderr.startswith(("error: ", "\x1b["))
        assert_clean(result.stderr, "400 detail on stderr")
        # the detail is shown, visibly spelled: rich alone drops BEL, BS and CR, and
        # `assert_clean` looks past SGR, so the check above passes on an unsanitised detail
        assert f"bad {clean_line(payload)}" in SGR.sub("", result.stderr)
        if "--json" in args:
            assert result.stdout.isascii()
            assert json.loads(result.stdout)["error"]["code"] == "bad_request"
        tally.count(f"escapes.error detail, {'JSON' if '--json' in args else 'colour forced'}")
    renamed = Scripted(backend, None, corrupt=-1).replace(
        "detail:rich", lambda body: body.update(id=f"{rich}{payload}")
    )
    result = _invoke(renamed, ["show", rich, "--color", "always"])
    assert result.exit_code == 5, result.stderr
    assert_clean(result.stderr, "mismatching id on stderr")
    assert f"got {rich}{clean_line(payload)}" in SGR.sub("", result.stderr)
    tally.count("escapes.mismatching id, colour forced")


def _hostile_parent(backend: str, payload: str) -> Scripted:
    def plant(value: Any) -> Any:
        if isinstance(value, dict):
            return {
                k: (f"{k}{payload}" if k in ("goal", "delegation_id") and isinstance(v, str) else plant(v))
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [plant(v) for v in value]
        return value

    def edit(body: dict[str, Any]) -> None:
        for row in body["messages"]:
            for call in row.get("tool_calls") or []:
                call["function"]["arguments"] = json.dumps(plant(json.loads(call["function"]["arguments"])))
            if row["role"] == "tool" and isinstance(row.get("content"), str):
                try:
                    row["content"] = json.dumps(plant(json.loads(row["content"])))
                except ValueError:
                    row["content"] = f"{row['content']} {payload}"

    return Scripted(backend, None, corrupt=-1).replace("messages:parent", edit)


@pytest.mark.parametrize(("backend", "name"), ALTERNATE)
def test_recovered_goals_and_task_ids_are_clean(backend: str, name: str) -> None:
    payload = CORPUS[name]
    parent = capture(backend)["manifest"]["parent"]
    coloured = _invoke(_hostile_parent(backend, payload), ["recover", parent, "--color", "always"])
    assert coloured.exit_code == 0, coloured.stderr
    assert "goal" in coloured.stdout
    assert_clean(coloured.stdout, "recover stdout")
    assert f"goal{clean_line(payload)}" in SGR.sub("", coloured.stdout)  # shown, visibly spelled
    assert_clean(coloured.stderr, "recover stderr")
    as_json = _invoke(_hostile_parent(backend, payload), ["recover", parent, "--json"])
    assert as_json.exit_code == 0
    assert as_json.stdout.isascii()
    goals = [t["goal"] for t in json.loads(as_json.stdout)["tasks"]]
    assert f"goal{payload}" in goals
    tally.count("escapes.recover goals and ids, colour forced")
    tally.count("escapes.recover goals and ids, JSON")
