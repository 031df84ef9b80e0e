"""What the dashboard sends, validated by hand into frozen dataclasses (no pydantic).

Permissive about extra fields (both backends add columns over time: unknown keys are
ignored) and strict about the fields this tool relies on: a missing or mistyped one makes
the response incompatible (`WireError`) instead of being guessed. The types are strict: a
string is never an int (`"12"` is not a row id), a bool is never an int, an int timestamp
must fit a float. `model_fields_set` records which fields the body carried, so an optional
projection sent as null is told apart from one never sent.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NoReturn

_EMPTY: frozenset[str] = frozenset()


class WireError(ValueError):
    """A response body that does not have the shape this tool relies on."""


def _fail(where: str, key: str, why: str) -> NoReturn:
    raise WireError(f"{where}.{key}: {why}")


def _object(body: object, where: str) -> Mapping[str, Any]:
    if not isinstance(body, dict):
        raise WireError(f"{where}: not an object")
    return body


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _str(value: object, where: str, key: str) -> str:
    if not isinstance(value, str):
        _fail(where, key, "not a string")
    return value


def _opt_str(value: object, where: str, key: str) -> str | None:
    if value is not None and not isinstance(value, str):
        _fail(where, key, "not a string or null")
    return value


def _int(value: object, where: str, key: str) -> int:
    if not _is_int(value):
        _fail(where, key, "not an integer")
    assert isinstance(value, int)
    return value


def _opt_int(value: object, where: str, key: str) -> int | None:
    if value is not None and not _is_int(value):
        _fail(where, key, "not an integer or null")
    assert value is None or isinstance(value, int)
    return value


def _flag(value: object, where: str, key: str) -> int | bool | None:
    """`StrictInt | StrictBool | None`: SQLite flags arrive as 0/1 or as booleans."""
    if value is not None and not isinstance(value, int):
        _fail(where, key, "not an integer, boolean or null")
    assert value is None or isinstance(value, int)
    return value


def _timestamp(value: object, where: str, key: str) -> float | int | None:
    """A float or int (never a bool) or null; an int must fit a float (`10**400` would
    overflow every later comparison). Floats are kept as sent, inf and nan included: the
    projection and the lineage proof check finiteness."""
    if value is None or isinstance(value, float):
        return value
    if not _is_int(value):
        _fail(where, key, "not a number or null")
    assert isinstance(value, int)
    try:
        float(value)
    except OverflowError:
        _fail(where, key, "timestamp out of range")
    return value


def _required(data: Mapping[str, Any], where: str, key: str) -> Any:
    try:
        return data[key]
    except KeyError:
        _fail(where, key, "missing")


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionDetail:
    """`GET /api/sessions/{id}`: the raw sessions row (the lineage fields are required keys)."""

    id: str
    source: str | None
    parent_session_id: str | None
    model_config_raw: Any = None
    started_at: float | int | None
    ended_at: float | int | None
    end_reason: str | None
    message_count: int | None = None
    profile: str | None = None
    profile_name: str | None = None
    title: str | None = None
    has_model_config: bool = False
    looks_current: bool = False
    model_fields_set: frozenset[str] = field(default=_EMPTY, compare=False, repr=False)

    @classmethod
    def parse(cls, body: object) -> SessionDetail:
        """Validate a detail body; `model_config` is kept raw, and whether the key was
        present at all is recorded for the lineage proof."""
        data = _object(body, "detail")
        w = "detail"
        return cls(
            id=_str(_required(data, w, "id"), w, "id"),
            source=_opt_str(_required(data, w, "source"), w, "source"),
            parent_session_id=_opt_str(_required(data, w, "parent_session_id"), w, "parent_session_id"),
            model_config_raw=data.get("model_config"),
            started_at=_timestamp(_required(data, w, "started_at"), w, "started_at"),
            ended_at=_timestamp(_required(data, w, "ended_at"), w, "ended_at"),
            end_reason=_opt_str(_required(data, w, "end_reason"), w, "end_reason"),
            message_count=_opt_int(data.get("message_count"), w, "message_count"),
            profile=_opt_str(data.get("profile"), w, "profile"),
            profile_name=_opt_str(data.get("profile_name"), w, "profile_name"),
            title=_opt_str(data.get("title"), w, "title"),
            has_model_config="model_config" in data,
            # Current (iot) backends always stamp `is_default_profile`; 0.19.x never does.
            # This is only a guess for the first page request; the messages envelope decides.
            looks_current="is_default_profile" in data,
            model_fields_set=frozenset(_DETAIL_FIELDS.intersection(data))
            | {"model_config_raw", "has_model_config", "looks_current"},
        )


_DETAIL_FIELDS = frozenset(
    (
        "id",
        "source",
        "parent_session_id",
        "started_at",
        "ended_at",
        "end_reason",
        "message_count",
        "profile",
        "profile_name",
        "title",
    )
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Pagination:
    limit: int | None
    offset: int | None
    returned: int
    order: str | None = None
    model_fields_set: frozenset[str] = field(default=_EMPTY, compare=False, repr=False)

    @classmethod
    def model_validate(cls, body: object) -> Pagination:
        if isinstance(body, Pagination):
            return body
        w = "pagination"
        data = _object(body, w)
        return cls(
            limit=_opt_int(_required(data, w, "limit"), w, "limit"),
            offset=_opt_int(_required(data, w, "offset"), w, "offset"),
            returned=_int(_required(data, w, "returned"), w, "returned"),
            order=_opt_str(data.get("order"), w, "order"),
            model_fields_set=_PAGINATION_FIELDS.intersection(data),
        )


_PAGINATION_FIELDS = frozenset(("limit", "offset", "returned", "order"))

# WireMessage's optional keys and their checks (`None`: any JSON value, kept as sent).
_MESSAGE_OPTIONAL: dict[str, Callable[[object, str, str], Any] | None] = {
    "content": None,
    "tool_call_id": _opt_str,
    "tool_calls": None,
    "tool_name": _opt_str,
    "timestamp": _timestamp,
    "reasoning": None,
    "reasoning_content": None,
    "reasoning_details": None,
    "codex_reasoning_items": None,
    "active": _flag,
    "compacted": _flag,
    "display_kind": _opt_str,
    "display_content": None,
    "display_reasoning": None,
    "display_commentary": None,
    "display_metadata": None,
    "message_uid": _opt_str,
}
_MESSAGE_FIELDS = frozenset(("id", "session_id", "role", *_MESSAGE_OPTIONAL))


@dataclass(frozen=True, slots=True, kw_only=True)
class WireMessage:
    """One transcript row. Optional projections are told apart from absent ones with
    `model_fields_set`: an explicitly empty `display_content` is authoritative."""

    id: int
    session_id: str
    role: str
    content: Any = None
    tool_call_id: str | None = None
    tool_calls: Any = None
    tool_name: str | None = None
    timestamp: float | int | None = None
    reasoning: Any = None
    reasoning_content: Any = None
    reasoning_details: Any = None
    codex_reasoning_items: Any = None
    active: int | bool | None = None
    compacted: int | bool | None = None
    display_kind: str | None = None
    display_content: Any = None
    display_reasoning: Any = None
    display_commentary: Any = None
    display_metadata: Any = None
    message_uid: str | None = None
    model_fields_set: frozenset[str] = field(default=_EMPTY, compare=False, repr=False)

    @classmethod
    def model_validate(cls, body: object) -> WireMessage:
        if isinstance(body, WireMessage):
            return body
        w = "message"
        data = _object(body, w)
        values: dict[str, Any] = {}
        for key, check in _MESSAGE_OPTIONAL.items():
            if key in data:
                value = data[key]
                values[key] = value if check is None else check(value, w, key)
        return cls(
            id=_int(_required(data, w, "id"), w, "id"),
            session_id=_str(_required(data, w, "session_id"), w, "session_id"),
            role=_str(_required(data, w, "role"), w, "role"),
            model_fields_set=_MESSAGE_FIELDS.intersection(data),
            **values,
        )


def _list(value: object, where: str, key: str) -> list[Any]:
    if not isinstance(value, list | tuple):
        _fail(where, key, "not a list")
    return list(value)


@dataclass(frozen=True, slots=True, kw_only=True)
class MessagesPage:
    """`GET /api/sessions/{id}/messages`. `order` is absent on legacy (0.19.x) backends."""

    session_id: str
    messages: list[WireMessage]
    pagination: Pagination
    profile: str | None = None
    model_fields_set: frozenset[str] = field(default=_EMPTY, compare=False, repr=False)

    @property
    def legacy(self) -> bool:
        return "order" not in self.pagination.model_fields_set

    @classmethod
    def model_validate(cls, body: object) -> MessagesPage:
        if isinstance(body, MessagesPage):
            return body
        w = "messages"
        data = _object(body, w)
        return cls(
            session_id=_str(_required(data, w, "session_id"), w, "session_id"),
            messages=[
                WireMessage.model_validate(m) for m in _list(_required(data, w, "messages"), w, "messages")
            ],
            pagination=Pagination.model_validate(_required(data, w, "pagination")),
            profile=_opt_str(data.get("profile"), w, "profile"),
            model_fields_set=_PAGE_FIELDS.intersection(data),
        )


_PAGE_FIELDS = frozenset(("session_id", "messages", "pagination", "profile"))


@dataclass(frozen=True, slots=True, kw_only=True)
class LatestDescendant:
    """`GET /api/sessions/{id}/latest-descendant`: a hint, never proof."""

    requested_session_id: str | None = None
    session_id: str
    path: list[str] = field(default_factory=list)
    changed: bool = False
    model_fields_set: frozenset[str] = field(default=_EMPTY, compare=False, repr=False)

    @classmethod
    def model_validate(cls, body: object) -> LatestDescendant:
        if isinstance(body, LatestDescendant):
            return body
        w = "latest-descendant"
        data = _object(body, w)
        path = [_str(p, w, "path") for p in _list(data.get("path", []), w, "path")]
        changed = data.get("changed", False)
        if not isinstance(changed, bool):
            _fail(w, "changed", "not a boolean")
        return cls(
            requested_session_id=_opt_str(data.get("requested_session_id"), w, "requested_session_id"),
            session_id=_str(_required(data, w, "session_id"), w, "session_id"),
            path=path,
            changed=changed,
            model_fields_set=_DESCENDANT_FIELDS.intersection(data),
        )


_DESCENDANT_FIELDS = frozenset(("requested_session_id", "session_id", "path", "changed"))
