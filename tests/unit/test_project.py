"""Row projection rules (seed "Rendering and verification")."""

from __future__ import annotations

import json
from typing import Any

from hermes_task.core.projection import counts_as_text, project
from hermes_task.core.wire import WireMessage
from tests.support.wirebody import decoded


def msg(**over: Any) -> WireMessage:
    body: dict[str, Any] = {"id": 1, "session_id": "s", "role": "assistant", "content": "hello"}
    body.update(over)
    return decoded(body, WireMessage)


def test_hidden_rows_are_absent() -> None:
    assert project(msg(display_kind="hidden", role="user", content="[System: x]")) is None


def test_display_content_is_authoritative_even_when_empty_or_null() -> None:
    row = project(msg(content="raw", display_content=""))
    assert row is not None
    assert row.text == ""
    row = project(msg(content="raw", display_content=None))
    assert row is not None
    assert row.text is None
    row = project(
        msg(content="[steer] raw", display_content="Skip tests/", display_kind="steer", role="user")
    )
    assert row is not None
    assert (row.text, row.kind) == ("Skip tests/", "steer")


def test_display_reasoning_is_authoritative_and_suppresses_raw_sidecars() -> None:
    row = project(msg(display_reasoning=None, reasoning="raw thinking"))
    assert row is not None
    assert row.reasoning is None
    row = project(msg(display_reasoning="All files scanned.", reasoning="raw"))
    assert row is not None
    assert row.reasoning == "All files scanned."


def test_reasoning_fallbacks_read_text_and_summaries_never_encrypted_data() -> None:
    details = json.dumps(
        [
            {"type": "reasoning.summary", "summary": "Looked at src/."},
            {"type": "reasoning.encrypted", "data": "gAAAAB-secret"},
        ]
    )
    codex = [
        {
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": "Plan: grep."}],
            "encrypted_content": "zzz",
        }
    ]
    row = project(msg(reasoning_details=details, codex_reasoning_items=codex))
    assert row is not None
    assert row.reasoning == "Looked at src/.\n\nPlan: grep."
    assert "secret" not in (row.reasoning or "")
    dup = project(msg(reasoning="same", reasoning_content="same"))
    assert dup is not None
    assert dup.reasoning == "same"


def test_commentary_is_public_prose_even_on_an_empty_row() -> None:
    row = project(msg(content="", display_commentary=["Scanning the last file now."]))
    assert row is not None
    assert row.commentary == ["Scanning the last file now."]
    assert counts_as_text(row)


def test_commentary_is_never_recovered_from_raw_codex_items() -> None:
    row = project(msg(content="", codex_message_items='[{"phase": "commentary", "text": "secret plan"}]'))
    assert row is not None
    assert row.commentary == []


def test_tool_calls_keep_ids_and_arguments_and_missing_arguments_stay_null() -> None:
    calls = [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "terminal", "arguments": '{"command": "ls"}'},
        },
        {"id": "call_2", "type": "function", "function": {"name": "read_file"}},
    ]
    row = project(msg(tool_calls=calls))
    assert row is not None
    assert [(c.id, c.name, c.arguments) for c in row.tool_calls] == [
        ("call_1", "terminal", '{"command": "ls"}'),
        ("call_2", "read_file", None),
    ]


def test_images_become_alt_text_and_json_looking_text_stays_literal() -> None:
    parts = [
        {"type": "text", "text": "what is in this picture?"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
    ]
    row = project(msg(role="user", content=parts))
    assert row is not None
    assert row.text == "what is in this picture?\n[image]"
    literal = '{"status": "ok"}'
    row = project(msg(content=literal))
    assert row is not None
    assert row.text == literal


def test_archived_rows_are_marked_and_unknown_roles_pass_through() -> None:
    row = project(msg(active=0, compacted=1))
    assert row is not None
    assert row.archived
    row = project(msg(role="agent"))
    assert row is not None
    assert row.role == "agent"
    assert counts_as_text(row)
    tool = project(msg(role="tool", content="output", tool_call_id="call_1", tool_name="terminal"))
    assert tool is not None
    assert not counts_as_text(tool)


def test_a_row_flagged_compressed_summary_is_compaction_boilerplate_whatever_its_text() -> None:
    flagged = project(msg(role="user", content="Earlier turns, summarised.", _compressed_summary=True))
    assert flagged is not None
    assert flagged.kind == "compaction_summary"
    assert not counts_as_text(flagged)
    for value in (False, "true", 1, None):
        plain = project(msg(role="user", content="Earlier turns, summarised.", _compressed_summary=value))
        assert plain is not None
        assert plain.kind is None
        assert counts_as_text(plain)
    typed = project(msg(role="user", content="x", display_kind="steer", _compressed_summary=True))
    assert typed is not None
    assert typed.kind == "steer"
    restated = "[STILL IN PROGRESS — restated after the compaction boundary] Count TODO markers"
    shown = project(
        msg(
            role="user",
            content="[CONTEXT COMPACTION — REFERENCE ONLY] x",
            display_content=restated,
            _compressed_summary=True,
        )
    )
    assert shown is not None
    assert shown.text == restated
    assert shown.kind is None  # the server's projection is what is displayed (iot)
