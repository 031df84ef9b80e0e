"""`hermes-task older` through the CLI on rows captured from both real backends.

The `long` child's 241 captured rows are served by a page model of each contract (0.19.x:
oldest-first offsets, `order` ignored; current: newest-first `order=latest`); the model is
first checked against the captured offset=50 page, so it answers like the real server.
Everything else replays the captures.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner, Result

from hermes_task.cli.app import app
from tests.support.cli_runner import invoke
from tests.support.dashboard import Call, Dashboard, serving
from tests.support.replay import BASE_URL, TOKEN, Replay

ENV = {"HERMES_DASHBOARD_TOKEN": TOKEN, "NO_COLOR": "1", "COLUMNS": "100", "XDG_CONFIG_HOME": "/nonexistent"}


class LongModel(Dashboard):
    """The in-memory dashboard holding the `long` child's captured rows, paged by the
    backend's contract; its detail and every other request replay the captures."""

    def __init__(self, backend: str) -> None:
        self.replay = Replay(backend)
        self.legacy = self.replay.manifest["backend"]["contract"] == "legacy"
        super().__init__(
            contract="legacy" if self.legacy else "current",
            token=TOKEN,
            serves=frozenset({"messages"}),
            fallback=self.replay,
        )
        self.long = self.replay.manifest["long"]
        self.put(self.long["id"])
        self.rows[self.long["id"]] = self.replay.by_name["messages:long:limit=500"]["body"]["messages"]
        if not self.legacy:
            self.envelope = {"profile": "default"}
        self.fail_offsets: set[str] = set()
        self.before.append(self._fail)

    def _fail(self, call: Call) -> httpx.Response | None:
        if call.kind == "messages" and call.params["offset"] in self.fail_offsets:
            return httpx.Response(500, json={"detail": "Internal Server Error"})
        return None

    @property
    def transcript(self) -> list[dict[str, Any]]:
        return self.rows[self.long["id"]]

    @property
    def long_reads(self) -> list[tuple[str, str]]:
        """(offset, limit) of every page of the `long` child asked."""
        sid = self.long["id"]
        return [(c.params["offset"], c.params["limit"]) for c in self.log if c[:2] == ("messages", sid)]

    def page(self, offset: int, limit: int, order: str) -> Any:
        query: dict[str, str | int] = {
            "limit": limit,
            "offset": offset,
            "order": order,
            "inline_images": "false",
            "include_compacted": "true",
        }
        headers = {"x-hermes-session-token": TOKEN}
        return (
            self.http().get(f"/api/sessions/{self.long['id']}/messages", params=query, headers=headers).json()
        )


@pytest.fixture(params=["official", "iot"])
def model(request: pytest.FixtureRequest) -> Iterator[LongModel]:
    server = LongModel(request.param)
    with serving(server.handle):
        yield server


def run(*args: str) -> Result:
    return invoke("older", *args)


def ids(rows: list[dict[str, Any]]) -> list[int]:
    return [row["id"] for row in rows]


def test_the_page_model_answers_like_the_captured_server(model: LongModel) -> None:
    captured = model.replay.by_name["messages:long:offset=50"]["body"]
    assert model.page(50, 50, "latest")["messages"] == captured["messages"]
    assert model.page(50, 50, "latest")["pagination"] == captured["pagination"]
    assert len(model.transcript) == model.long["rows"] == 241


def test_all_reads_every_row_once_in_server_order_goal_first(model: LongModel) -> None:
    result = run(model.long["id"], "--all", "--json")
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    data = json.loads(result.stdout)
    assert data["kind"] == "transcript"
    assert ids(data["rows"]) == ids(model.transcript)
    assert data["rows"][0]["text"] == model.long["goal"]
    assert data["rows"][-1]["text"] == "Summarised 119 modules."
    assert data["coverage"] == {"unique_rows": 241, "has_older": False, "at_start": True}
    legacy = model.legacy
    assert [w["code"] for w in data["warnings"]] == (["legacy_backend"] if legacy else [])
    assert data["backend"]["contract"] == ("legacy" if legacy else "current")
    assert data["backend"]["capabilities"]["order"] is not legacy
    assert data["backend"]["capabilities"]["pagination"] is True
    # the newest page, then the segment streamed oldest-first from offset 0 (one page of 500)
    if legacy:
        assert model.long_reads == [("191", "50"), ("241", "50"), ("0", "500")]
    else:
        assert model.long_reads == [("0", "50"), ("0", "500")]


def test_default_is_one_older_page_and_more_pages_go_further(model: LongModel) -> None:
    data = json.loads(run(model.long["id"], "--json").stdout)
    assert ids(data["rows"]) == ids(model.transcript)[-100:]
    assert data["coverage"] == {"unique_rows": 100, "has_older": True, "at_start": False}
    data = json.loads(run(model.long["id"], "--pages", "3", "--json").stdout)
    assert ids(data["rows"]) == ids(model.transcript)[-200:]
    assert data["coverage"] == {"unique_rows": 200, "has_older": True, "at_start": False}
    data = json.loads(run(model.long["id"], "--pages", "9", "--json").stdout)
    assert ids(data["rows"]) == ids(model.transcript)
    assert data["coverage"] == {"unique_rows": 241, "has_older": False, "at_start": True}


def test_min_text_reads_pages_until_enough_prose_arrived(model: LongModel) -> None:
    # Older pages of `long` alternate "Reading module N." (prose) and read_file results
    # (tool rows): 25 prose rows per 50-row page, so 30 prose rows take two pages.
    result = run(model.long["id"], "--min-text", "30", "--json", "--debug")
    assert result.exit_code == 0
    assert result.stderr.splitlines()[-1] == (
        "debug: older stop=target batches=1 pages=2 new=100 text=50 restarts=0 unique=150"
    )
    data = json.loads(result.stdout)
    assert ids(data["rows"]) == ids(model.transcript)[-150:]
    older = data["rows"][:100]
    assert sum(1 for r in older if r["role"] == "assistant" and r["text"]) == 50
    assert sum(1 for r in older if r["role"] == "tool") == 50  # kept and shown, not counted


def test_pages_and_all_together_are_a_usage_error(model: LongModel) -> None:
    result = run(model.long["id"], "--pages", "2", "--all", "--json")
    assert result.exit_code == 2
    assert json.loads(result.stdout) == {
        "schema_version": 1,
        "kind": "error",
        "error": {
            "code": "usage",
            "message": "invalid usage: --pages and --all cannot be used together",
            "retryable": False,
            "hint": None,
        },
        "rows": [],
        "task": None,
    }
    assert result.stderr == "error: invalid usage: --pages and --all cannot be used together\n"
    assert model.replay.seen == []  # nothing was requested


def test_all_and_min_text_together_are_a_usage_error(model: LongModel) -> None:
    result = run(model.long["id"], "--all", "--min-text", "5", "--json")
    assert result.exit_code == 2
    assert json.loads(result.stdout)["error"]["code"] == "usage"
    assert result.stderr == "error: invalid usage: --min-text and --all cannot be used together\n"
    assert model.replay.seen == []


def test_pages_must_be_positive(model: LongModel) -> None:
    result = run(model.long["id"], "--pages", "0")
    assert result.exit_code == 2
    assert "Invalid value for '--pages'" in result.stderr
    assert result.stdout == ""


def test_an_older_page_failure_reports_the_rows_already_verified(model: LongModel) -> None:
    model.fail_offsets.add("141" if model.legacy else "49")
    result = run(model.long["id"], "--json")
    assert result.exit_code == 7
    data = json.loads(result.stdout)
    assert data["error"] == {
        "code": "server_error",
        "message": "the dashboard failed with a server error: HTTP 500",
        "retryable": True,
        "hint": "try again; see the dashboard's log",
    }
    assert ids(data["rows"]) == ids(model.transcript)[-50:]
    assert result.stderr == (
        "error: the dashboard failed with a server error: HTTP 500\nhint: try again; see the dashboard's log\n"
    )


def test_terminal_output_is_the_whole_window_with_a_footer(model: LongModel) -> None:
    result = run(model.long["id"], "--all")
    assert result.exit_code == 0
    out = result.stdout
    assert (
        out.index(model.long["goal"])
        < out.index("Reading module 000.")
        < out.index("Summarised 119 modules.")
    )
    assert out.count("Reading module 042.") == 1
    assert "241 rows shown" in out
    assert "older rows exist" not in out
    expected = "warning: legacy backend (hermes-agent 0.19.x): archived rows are not visible over HTTP\n"
    assert result.stderr == (expected if model.legacy else "")


def test_terminal_footer_points_at_older_rows_when_some_remain(model: LongModel) -> None:
    """The footer names a command that shows more than this one did: one batch more."""
    sid = model.long["id"]
    footer = run(sid).stdout.splitlines()[-1]
    assert footer.endswith(f"· older rows exist: hermes-task older {sid} --pages 2")
    footer = run(sid, "--pages", "2").stdout.splitlines()[-1]
    assert footer.endswith(f"· older rows exist: hermes-task older {sid} --pages 3")
    footer = run(sid, "--pages", "2", "--min-text", "3").stdout.splitlines()[-1]
    assert footer.endswith(f"· older rows exist: hermes-task older {sid} --pages 3 --min-text 3")
    shown = invoke("show", sid).stdout.splitlines()[-1]
    assert shown.endswith(f"· older rows exist: hermes-task older {sid}")


def test_a_task_with_nothing_older_says_so() -> None:
    from tests.support.conversations import Conversations
    from tests.unit.test_recover_cli import P

    child = "20261130_170001_bbbbbb"
    dash = Conversations()
    dash.session(P)
    dash.session(child, parent=P)
    dash.add(child, "user", "Count the TODO markers")
    dash.add(child, "assistant", "Found 3.")
    with serving(dash.handle):
        result = invoke("older", child)
        as_json = invoke("older", child, "--json")
    assert result.exit_code == 0
    assert "Found 3." in result.stdout
    assert "older rows exist" not in result.stdout
    assert result.stderr == f"note: nothing older: the newest page holds every row of task {child}\n"
    assert as_json.stderr == ""
    assert json.loads(as_json.stdout)["coverage"]["has_older"] is False


def test_debug_shows_requests_and_the_stop_reason_without_content(model: LongModel) -> None:
    result = run(model.long["id"], "--all", "--json", "--debug")
    assert result.exit_code == 0
    lines = result.stderr.splitlines()
    starts = [line for line in lines if line.startswith("debug: start messages")]
    found = [re.search(r"offset=(\d+)", line) for line in starts]
    offsets = [match.group(1) if match else None for match in found]
    assert offsets == (["191", "241", "0"] if model.legacy else ["0", "0"])
    assert lines[-1] == "debug: older streamed pages=1 unique=241 held_max=291"
    assert "Reading module" not in result.stderr
    assert TOKEN not in result.stderr
    assert json.loads(result.stdout)["coverage"]["at_start"] is True


def test_progress_on_a_terminal_stderr_never_touches_stdout(
    model: LongModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hermes_task.cli.options import Environment

    result = CliRunner().invoke(
        app,
        ["older", model.long["id"], "--all", "--json", "--url", BASE_URL],
        env=ENV,
        obj=Environment(isatty=lambda stream: True),
    )
    assert result.exit_code == 0
    assert ids(json.loads(result.stdout)["rows"]) == ids(model.transcript)


def test_an_invalid_child_id_is_a_usage_error(model: LongModel) -> None:
    result = run("..", "--json")
    assert result.exit_code == 2
    assert json.loads(result.stdout)["error"]["code"] == "invalid_id"
    assert model.replay.seen == []
