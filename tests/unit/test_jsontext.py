"""`render/jsontext`: msgspec's JSON, ASCII-escaped as the contract promises (`ensure_ascii`).

Held to what the text means, never to another encoder's bytes: every value reads back
(`json.loads`) as the document's data, the text is printable ASCII, documents are indented
by two spaces and events are one compact line.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec import Struct, field
from msgspec.structs import asdict

from hermes_task.core.documents import (
    BackendInfo,
    Candidate,
    Coverage,
    ErrorBody,
    ErrorDoc,
    Row,
    SegmentInfo,
    TaskInfo,
    ToolCall,
    TranscriptDoc,
)
from hermes_task.core.events import ResultEvent, RowEvent
from hermes_task.render.jsontext import ROWS_OPEN, ascii_only, document, event, row_element, rows_close


class Leaf(Struct, frozen=True, kw_only=True):
    name: str
    value: Any = None


class Node(Struct, frozen=True, kw_only=True):
    kind: str
    items: list[Any] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)


scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()  # every code point: controls, DEL, C1, bidi overrides, astral, lone surrogates
)


def trees(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return (
        st.lists(children, max_size=4)
        | st.dictionaries(st.text(max_size=8), children, max_size=4)
        | st.builds(Leaf, name=st.text(max_size=8), value=children)
        | st.builds(
            Node,
            kind=st.text(max_size=8),
            items=st.lists(children, max_size=3),
            meta=st.dictionaries(st.text(max_size=5), children, max_size=3),
        )
    )


values = st.recursive(scalars, trees, max_leaves=25)
# What JSON text may hold: printable ASCII, and (between tokens) the newline of the indent.
PRINTABLE = re.compile(r"[ -~\n]*")


@settings(max_examples=400, deadline=None)
@given(values)
def test_a_document_reads_back_as_its_data_in_printable_ascii(value: Any) -> None:
    text = document(value)
    assert PRINTABLE.fullmatch(text)
    assert text.endswith("\n")
    assert json.loads(text) == msgspec.to_builtins(value)


@settings(max_examples=400, deadline=None)
@given(values)
def test_an_event_is_one_compact_line_that_reads_back_as_its_data(value: Any) -> None:
    text = event(value)
    assert text.endswith("\n")
    assert "\n" not in text[:-1]
    assert PRINTABLE.fullmatch(text)
    assert json.loads(text) == msgspec.to_builtins(value)


@settings(max_examples=400, deadline=None)
@given(st.text().filter(lambda s: not re.search("[\ud800-\udfff]", s)))
def test_escaping_keeps_the_value_and_leaves_only_ascii(text: str) -> None:
    raw = msgspec.json.encode({"k": text})
    escaped = ascii_only(raw)
    assert escaped.isascii()
    assert b"\x7f" not in escaped
    assert json.loads(escaped) == {"k": text}
    assert ascii_only(escaped) == escaped  # nothing left to escape


@pytest.mark.parametrize(
    ("text", "spelled"),
    [
        ("é", r"\u00e9"),
        ("\x7f", r"\u007f"),  # DEL: ASCII, but not printable
        ("\x85", r"\u0085"),  # C1 NEL
        ("\u202e", r"\u202e"),  # bidi override
        ("😀", r"\ud83d\ude00"),  # astral: a surrogate pair, as JSON spells it
        ("\ud800", r"\ud800"),  # a lone surrogate, which UTF-8 cannot carry
    ],
)
def test_characters_outside_printable_ascii_are_escaped(text: str, spelled: str) -> None:
    out = event(Leaf(name=f"a{text}b"))
    assert out == '{"name":"a' + spelled + 'b","value":null}\n'
    assert json.loads(out)["name"] == f"a{text}b"
    shown = document(Leaf(name=text))
    assert spelled in shown
    assert json.loads(shown)["name"] == text


def test_a_document_keeps_the_field_order_and_a_two_space_indent() -> None:
    row = Row(
        id=1, session_id="s", role="user", text="hi", tool_calls=[ToolCall(id=None, name="t", arguments=None)]
    )
    text = document(row)
    assert list(json.loads(text)) == list(Row.__struct_fields__)
    assert text.startswith('{\n  "id": 1,\n  "session_id": "s",\n')
    assert '  "tool_calls": [\n    {\n      "id": null,\n' in text
    assert '  "commentary": [],\n' in text


def test_an_event_names_its_type_first() -> None:
    row = Row(id=1, session_id="s", role="user", text="hi", timestamp=1)
    line = event(RowEvent(**asdict(row)))
    assert line.startswith('{"type":"row","id":1,"session_id":"s",')
    assert line.endswith(',"task":null}\n')
    assert json.loads(line)["timestamp"] == 1.0
    assert event(ResultEvent(state="ended", end_reason=None, exit_code=0)) == (
        '{"type":"result","state":"ended","end_reason":null,"exit_code":0,"last_read_age":null,"unreported":null}\n'
    )


def test_non_finite_numbers_are_written_as_null() -> None:
    """`NaN` and infinities are not JSON; msgspec writes them as null (a row's timestamp is
    already null when not finite)."""
    assert json.loads(document([math.nan, math.inf, -math.inf, 1.5])) == [None, None, None, 1.5]


def test_what_json_cannot_encode_is_refused() -> None:
    with pytest.raises(TypeError):
        document({"x": object()})


row_texts = st.lists(st.text(st.characters(blacklist_categories=()), max_size=20), max_size=4)


@settings(max_examples=100, deadline=None)
@given(row_texts, st.booleans())
def test_a_document_written_row_by_row_is_the_document(texts: list[str], failed: bool) -> None:
    """`ROWS_OPEN`, `row_element` per row and `rows_close` are `document` byte for byte, for
    the transcript and the error document (lone surrogates included: the fallback encoder)."""
    rows = [Row(id=i, session_id="s", role="user", text=t, timestamp=1.0) for i, t in enumerate(texts)]
    error = ErrorBody(code="x", message="m", retryable=False)
    whole = ErrorDoc(error=error, rows=rows) if failed else _transcript(rows)
    empty = msgspec.structs.replace(whole, rows=[])
    parts = [
        ROWS_OPEN,
        *(row_element(r, first=i == 0) for i, r in enumerate(rows)),
        rows_close(empty, len(rows)),
    ]
    assert "".join(parts) == document(whole)


def test_rows_close_refuses_a_document_whose_rows_do_not_come_first() -> None:
    with pytest.raises(ValueError, match="rows come first"):
        rows_close(Node(kind="x", items=[]), 0)


def _transcript(rows: list[Row]) -> TranscriptDoc:
    seg = SegmentInfo(id="s", started_at=1.0, ended_at=None, end_reason=None, rows_shown=len(rows))
    task = TaskInfo(
        root_id="s", tip_id="s", lineage=["s"], candidate=Candidate(id=None, status="none", reason=None),
        profile=None, source="subagent", state="running", end_reason=None, segments=[seg],
    )  # fmt: skip
    return TranscriptDoc(
        task=task,
        backend=BackendInfo(contract="current"),
        rows=rows,
        coverage=Coverage(unique_rows=len(rows), has_older=False, at_start=True),
    )
