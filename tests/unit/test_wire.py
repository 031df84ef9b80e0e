"""`core/wire.py`: what each wire model accepts and rejects (docs/decisions.md, entries 1
and 7: the 30 cases), decoded from bytes as the client decodes a response."""

from __future__ import annotations

import json
import math
from typing import Any

import msgspec
import pytest
from msgspec import UNSET

from hermes_task.core.wire import LatestDescendant, MessagesPage, SessionDetail, WireError, decode
from tests.support.wire_samples import BASES, DETAIL, DROP, PAGE, ROW, spliced

MODELS: dict[str, type[Any]] = {
    "messages": MessagesPage,
    "detail": SessionDetail,
    "latest-descendant": LatestDescendant,
}
REJECT = object()
NOT_KEPT = object()


# (case, endpoint, path, raw JSON or DROP, what the model holds there or REJECT)
CASES: list[tuple[str, str, tuple[Any, ...], Any, Any]] = [
    ("NaN as a row timestamp", "messages", ("messages", 0, "timestamp"), "NaN", math.nan),
    ("NaN as a row id", "messages", ("messages", 0, "id"), "NaN", REJECT),
    ("NaN in content, kept as sent", "messages", ("messages", 0, "content"), "NaN", math.nan),
    ("NaN in an unknown column", "messages", ("messages", 0, "token_count"), "NaN", NOT_KEPT),
    ("1e400 as a row timestamp", "messages", ("messages", 0, "timestamp"), "1e400", math.inf),
    ("1e400 as a row id", "messages", ("messages", 0, "id"), "1e400", REJECT),
    ("1e400 in an unknown column", "messages", ("messages", 0, "token_count"), "1e400", NOT_KEPT),
    ("10**400 as an int timestamp", "detail", ("started_at",), str(10**400), REJECT),
    ("10**400 as a row id", "messages", ("messages", 0, "id"), str(10**400), 10**400),
    ('"12" as a row id', "messages", ("messages", 0, "id"), '"12"', REJECT),
    ('"12" as pagination.returned', "messages", ("pagination_sent", "returned"), '"12"', REJECT),
    ("true as a row id", "messages", ("messages", 0, "id"), "true", REJECT),
    ("12.0 as a row id", "messages", ("messages", 0, "id"), "12.0", REJECT),
    ("true as the active flag", "messages", ("messages", 0, "active"), "true", True),
    ('"1" as the active flag', "messages", ("messages", 0, "active"), '"1"', REJECT),
    ("missing role", "messages", ("messages", 0, "role"), DROP, REJECT),
    ("missing pagination (0.18.x)", "messages", ("pagination_sent",), DROP, UNSET),
    ("missing pagination.returned", "messages", ("pagination_sent", "returned"), DROP, REJECT),
    ("missing pagination.order (0.19.x)", "messages", ("pagination_sent", "order"), DROP, UNSET),
    ("missing parent_session_id", "detail", ("parent_session_id",), DROP, REJECT),
    ("null as a row session_id", "messages", ("messages", 0, "session_id"), "null", REJECT),
    ("unknown keys in a row", "messages", ("messages", 0, "new_column"), '{"x": [1]}', NOT_KEPT),
    ("pagination is a list", "messages", ("pagination_sent",), "[]", REJECT),
    ("messages is an object", "messages", ("messages",), "{}", REJECT),
    ("a row is a string", "messages", ("messages", 0), '"row"', REJECT),
    ("a row role is a number", "messages", ("messages", 0, "role"), "5", REJECT),
    ("tool_calls is a number, kept as sent", "messages", ("messages", 0, "tool_calls"), "5", 5),
    ("path holds a number", "latest-descendant", ("path",), "[1]", REJECT),
    ('changed is "yes"', "latest-descendant", ("changed",), '"yes"', REJECT),
    ("the body is a list", "detail", (), "[]", REJECT),
]


def _wire_path(path: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple("pagination" if step == "pagination_sent" else step for step in path)


@pytest.mark.parametrize(
    ("endpoint", "path", "token", "held"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_each_case_is_accepted_or_rejected_as_before(
    endpoint: str, path: tuple[Any, ...], token: Any, held: Any
) -> None:
    model = MODELS[endpoint]
    raw = spliced(BASES[endpoint], _wire_path(path), token)
    if held is REJECT:
        with pytest.raises(WireError):
            decode(raw, model)
        return
    value: Any = decode(raw, model)
    for step in path:
        value = value[step] if isinstance(step, int) else getattr(value, step, NOT_KEPT)
    if isinstance(held, float) and math.isnan(held):
        assert isinstance(value, float)
        assert math.isnan(value)
    else:
        assert value == held or value is held


def test_unknown_keys_everywhere_are_ignored() -> None:
    data = json.loads(json.dumps(PAGE))
    data["new_field"] = 1
    data["pagination"]["total"] = 1
    data["messages"][0]["new_column"] = {"x": 1}
    assert decode(json.dumps(data).encode(), MessagesPage) == decode(json.dumps(PAGE).encode(), MessagesPage)


def test_absent_and_null_differ_where_it_decides_something() -> None:
    row = decode(json.dumps(PAGE).encode(), MessagesPage).messages[0]
    assert row.display_content is UNSET
    assert row.display_reasoning is UNSET
    sent = {**ROW, "display_content": None, "display_reasoning": ""}
    page = decode(json.dumps({**PAGE, "messages": [sent]}).encode(), MessagesPage)
    assert page.messages[0].display_content is None
    assert page.messages[0].display_reasoning == ""
    detail = decode(json.dumps({**DETAIL, "model_config": None}).encode(), SessionDetail)
    assert detail.has_model_config
    assert detail.model_config_raw is None
    bare = decode(
        json.dumps({k: v for k, v in DETAIL.items() if k != "model_config"}).encode(), SessionDetail
    )
    assert not bare.has_model_config
    assert bare.model_config_raw is None
    assert decode(json.dumps(DETAIL).encode(), SessionDetail).looks_current
    unstamped = {k: v for k, v in DETAIL.items() if k != "is_default_profile"}
    assert not decode(json.dumps(unstamped).encode(), SessionDetail).looks_current


def test_a_page_without_pagination_counts_its_rows() -> None:
    legacy = decode(json.dumps({k: v for k, v in PAGE.items() if k != "pagination"}).encode(), MessagesPage)
    assert not legacy.paginated
    assert not legacy.ordered
    assert legacy.pagination.returned == 1
    assert legacy.pagination.offset is None
    unordered = json.loads(json.dumps(PAGE))
    del unordered["pagination"]["order"]
    page = decode(json.dumps(unordered).encode(), MessagesPage)
    assert page.paginated
    assert not page.ordered
    assert decode(json.dumps(PAGE).encode(), MessagesPage).ordered


def test_the_error_names_the_path_of_the_mismatch() -> None:
    bad = json.loads(json.dumps(PAGE))
    bad["messages"] = [ROW, ROW, ROW, {**ROW, "id": "12"}]
    with pytest.raises(WireError, match=r"\$\.messages\[3\]\.id"):
        decode(json.dumps(bad).encode(), MessagesPage)


def test_what_is_not_json_is_a_value_error_not_a_wire_error() -> None:
    with pytest.raises(ValueError, match="Expecting value") as info:
        decode(b"<html>502 Bad Gateway</html>", SessionDetail)
    assert not isinstance(info.value, WireError)


@pytest.mark.parametrize(
    "raw",
    [
        b'{"id": "a", "source": null, "parent_session_id": null, "started_at": NaN, "ended_at": null, "end_reason": null}',
        b'{"id": "a\\ud800", "source": null, "parent_session_id": null, "started_at": 1, "ended_at": null, "end_reason": null}',
    ],
    ids=["nan", "lone-surrogate"],
)
def test_json_only_the_standard_library_reads_decodes_to_the_same_model(raw: bytes) -> None:
    """msgspec's parser refuses these bodies; the fallback reads them with json.loads and
    holds them to the same model (msgspec.convert)."""
    with pytest.raises(msgspec.DecodeError):
        msgspec.json.decode(raw, type=SessionDetail)
    detail = decode(raw, SessionDetail)
    assert detail == msgspec.convert(json.loads(raw), SessionDetail)
