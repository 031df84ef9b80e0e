"""`hermes-task schema`, the committed schemas/*.json, and real documents validated by them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from msgspec import to_builtins
from typer.testing import CliRunner

from hermes_task.cli.app import app
from hermes_task.core.documents import TaskEntry, TasksDoc, TasksSummary
from hermes_task.core.events import ErrorEvent, ResultEvent, RowEvent, StateEvent, WarningEvent
from hermes_task.core.ui_strings import TaskStatus, WarningCode
from hermes_task.render import jsontext as schemas
from tests.support.dashboard import serving
from tests.support.replay import BASE_URL, TOKEN, Replay

ROOT = Path(__file__).resolve().parents[2]
ENV = {"HERMES_DASHBOARD_TOKEN": TOKEN, "NO_COLOR": "1", "COLUMNS": "100", "XDG_CONFIG_HOME": "/nonexistent"}


def as_json(doc: Any) -> Any:
    """What the CLI prints for `doc`, read back: its JSON data after a round trip."""
    return json.loads(json.dumps(to_builtins(doc)))


def validator(name: str) -> Any:
    """A draft 2020-12 validator of the committed schema (jsonschema is a test dependency)."""
    jsonschema = pytest.importorskip(
        "jsonschema", reason="jsonschema is a test dependency: pip install jsonschema"
    )
    schema = json.loads((ROOT / "schemas" / f"{name}.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@pytest.mark.parametrize("name", schemas.NAMES)
def test_committed_schema_is_current_and_printed_by_the_cli(name: str) -> None:
    committed = (ROOT / "schemas" / f"{name}.json").read_text(encoding="utf-8")
    assert committed == schemas.render(name), "schemas/ is stale: run .venv/bin/python tools/regen.py"
    result = CliRunner().invoke(app, ["schema", name])
    assert result.exit_code == 0
    assert result.stderr == ""
    assert result.stdout == committed
    assert committed.isascii()


def test_schema_without_a_name_lists_the_documents() -> None:
    result = CliRunner().invoke(app, ["schema"])
    assert result.exit_code == 0
    assert [line.split()[0] for line in result.stdout.splitlines()] == list(schemas.NAMES)
    assert (
        result.stdout.splitlines()[0]
        == "transcript  `show --json` and `older --json`: one transcript document."
    )


def test_schema_refuses_an_unknown_name() -> None:
    result = CliRunner().invoke(app, ["schema", "rows"], env={"NO_COLOR": "1"})
    assert result.exit_code == 2
    assert result.stdout == ""


def _objects(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        if node.get("type") == "object" and "properties" in node:
            yield node
        for value in node.values():
            yield from _objects(value)
    elif isinstance(node, list):
        for value in node:
            yield from _objects(value)


@pytest.mark.parametrize("name", schemas.NAMES)
def test_every_property_is_required_and_objects_are_closed(name: str) -> None:
    objects = list(_objects(schemas.schema(name)))
    assert objects
    for obj in objects:
        assert sorted(obj["required"]) == sorted(obj["properties"]), obj.get("title")
        assert obj["additionalProperties"] is False


def test_events_schema_is_a_union_discriminated_by_type() -> None:
    body = schemas.schema("events")
    assert body["discriminator"]["propertyName"] == "type"
    assert sorted(body["discriminator"]["mapping"]) == ["error", "result", "row", "state", "task", "warning"]


@pytest.fixture(params=["official", "iot"])
def replay(request: pytest.FixtureRequest) -> Iterator[Replay]:
    rep = Replay(request.param)
    with serving(rep):
        yield rep


def show_json(*args: str) -> tuple[int, dict[str, Any]]:
    result = CliRunner().invoke(app, ["show", *args, "--json", "--url", BASE_URL], env=ENV)
    data: dict[str, Any] = json.loads(result.stdout)
    return result.exit_code, data


def test_real_transcripts_validate_and_a_broken_one_does_not(replay: Replay) -> None:
    c1 = replay.manifest["c1"]
    code, doc = show_json(c1["root"], "--tip", c1["tip"])
    assert code == 0
    check = validator("transcript")
    check.validate(doc)
    assert doc["rows"]
    broken = {**doc, "rows": [{k: v for k, v in doc["rows"][0].items() if k != "text"}]}
    assert not check.is_valid(broken)
    assert not check.is_valid({**doc, "extra": 1})
    assert not check.is_valid({**doc, "schema_version": 2})


def test_a_real_failure_validates_against_the_error_schema(replay: Replay) -> None:
    code, doc = show_json("20000101_000000_000000")
    assert code == 4
    validator("error").validate(doc)
    assert doc["error"]["code"] == "not_found"
    assert not validator("transcript").is_valid(doc)


def test_follow_events_built_from_real_rows_validate(replay: Replay) -> None:
    c1 = replay.manifest["c1"]
    _, doc = show_json(c1["root"], "--tip", c1["tip"])
    check = validator("events")
    events = [
        StateEvent(**doc["task"]),
        *(RowEvent(**row) for row in doc["rows"]),
        WarningEvent(code=WarningCode.gap, message="rows between are not loaded"),
        ErrorEvent(code="network", message="could not reach the dashboard", retryable=True),
        ResultEvent(state="ended", end_reason="agent_close", exit_code=0),
    ]
    for event in events:
        line = as_json(event)
        check.validate(line)
    assert not check.is_valid({"type": "progress"})
    assert not check.is_valid({"type": "result", "state": "ended", "end_reason": None})
    assert not check.is_valid({**as_json(events[1]), "type": "state"})


def test_real_follow_lines_validate(replay: Replay) -> None:
    c1 = replay.manifest["c1"]
    result = CliRunner().invoke(
        app, ["follow", c1["root"], "--tip", c1["tip"], "--json", "--url", BASE_URL], env=ENV
    )
    assert result.exit_code == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert lines[-1]["type"] == "result"
    # An ended task's state comes after the rows of the final read, right before the result.
    assert lines[-2]["type"] == "state"
    assert lines[-2]["state"] == "ended"
    assert {line["type"] for line in lines[:-2]} <= {"row", "warning"}
    check = validator("events")
    for line in lines:
        check.validate(line)


def test_a_real_follow_failure_validates(replay: Replay) -> None:
    root = replay.manifest["plain"]["root"]
    replay.overrides[(f"/api/sessions/{root}", "")] = httpx.Response(401, json={"detail": "Unauthorized"})
    result = CliRunner().invoke(app, ["follow", root, "--json", "--url", BASE_URL], env=ENV)
    assert result.exit_code == 3
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [line["type"] for line in lines] == ["error", "result"]
    check = validator("events")
    for line in lines:
        check.validate(line)


def test_tasks_document_validates() -> None:
    entry = TaskEntry(
        call_id="call_1",
        goal="do it",
        task_index=0,
        delegation_id="deleg_1",
        subagent_id="sa-0-x",
        child_session_id=None,
        status=TaskStatus.completed,
        terminal=True,
        unavailable_reason="no_durable_child_reference",
        children=[],
    )
    doc = TasksDoc(parent_id="p", tasks=[entry], summary=TasksSummary(total=1, terminal=1, state="finished"))
    check = validator("tasks")
    check.validate(as_json(doc))
    bad = as_json(doc)
    bad["tasks"][0]["status"] = "done"
    assert not check.is_valid(bad)


def test_config_document_validates(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["config", "show", "--json"], env={"XDG_CONFIG_HOME": str(tmp_path)})
    assert result.exit_code == 0
    validator("config").validate(json.loads(result.stdout))
