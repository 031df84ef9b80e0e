"""What the dashboard sends, validated by hand into frozen dataclasses (no validation library).

Permissive about extra fields (backends add columns over time: unknown keys are ignored) and about
usage figures (`core/usage.py`: an unusable one is absent); strict about the fields this tool relies on:
a missing or mistyped one makes the response incompatible (`WireError`), never guessed. The types are
strict: a string is never an int (`"12"` is not a row id), a bool is never an int, an int timestamp must
fit a float. Each model's dataclass fields are its keys (`dataclasses.fields`): a field without a default
is a required key, one with a default may be absent, and its annotation names its check (`_CHECKS`), so
no second list of keys can drift from the class. `from_json` takes a decoded JSON value, and `sent_keys`
records which keys the body carried (an optional projection sent as null is told apart from one never
sent). Why not pydantic or msgspec here: docs/decisions.md, "Wire decoding".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import MISSING, field, fields
from functools import cache
from typing import Any, NoReturn, TypeAlias

from hermes_task.core.usage import NO_FIGURES, Figures, figures_of
from hermes_task.records import record

JSON: TypeAlias = dict[str, "JSON"] | list["JSON"] | str | int | float | bool | None
# A check takes (value, where, key) and returns the value to keep or raises WireError.
Check: TypeAlias = Callable[[Any, str, str], Any]

_EMPTY: frozenset[str] = frozenset()
# Field metadata: `key` (the JSON key when it is not the field's name), `check` (a check the
# annotation cannot name: the nested models) and `derived` (set by `from_json`, not read).
_DERIVED = {"derived": True}


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


def _bool(value: object, where: str, key: str) -> bool:
    if not isinstance(value, bool):
        _fail(where, key, "not a boolean")
    return value


def _flag(value: object, where: str, key: str) -> int | bool | None:
    """`StrictInt | StrictBool | None`: SQLite flags arrive as 0/1 or as booleans."""
    if value is not None and not isinstance(value, int):
        _fail(where, key, "not an integer, boolean or null")
    assert value is None or isinstance(value, int)
    return value


def _timestamp(value: object, where: str, key: str) -> float | int | None:
    """A float or int (never a bool) or null; an int must fit a float (`10**400` would overflow every
    later comparison). Floats are kept as sent, inf and nan included: projection and proof check that."""
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


def _list(value: object, where: str, key: str) -> list[Any]:
    if not isinstance(value, list | tuple):
        _fail(where, key, "not a list")
    return list(value)


def _str_list(value: object, where: str, key: str) -> list[str]:
    return [_str(item, where, key) for item in _list(value, where, key)]


# The check of each field annotation; `None`: any JSON value, kept as sent.
_CHECKS: dict[str, Check | None] = {
    "JSON": None,
    "str": _str,
    "str | None": _opt_str,
    "int": _int,
    "int | None": _opt_int,
    "bool": _bool,
    "int | bool | None": _flag,
    "float | int | None": _timestamp,
    "list[str]": _str_list,
}


@cache
def _keys(model: type) -> tuple[tuple[str, str, Check | None, bool], ...]:
    """`(field name, JSON key, check, required)` for every field of `model` read from the
    body; a field is required exactly when it has no default. KeyError for an annotation
    without a check: a new field must say how it is validated."""
    out = []
    for f in fields(model):
        if f.metadata.get("derived"):
            continue
        check = f.metadata["check"] if "check" in f.metadata else _CHECKS[str(f.type)]
        required = f.default is MISSING and f.default_factory is MISSING
        out.append((f.name, f.metadata.get("key", f.name), check, required))
    return tuple(out)


def _read(model: type, body: object, where: str) -> dict[str, Any]:
    """The checked values of `model`'s keys in `body`, by field name, and `sent_keys`."""
    data = _object(body, where)
    values: dict[str, Any] = {}
    sent: list[str] = []
    for name, key, check, required in _keys(model):
        if key in data:
            value = data[key]
            values[name] = value if check is None else check(value, where, key)
            sent.append(key)
        elif required:
            _fail(where, key, "missing")
    values["sent_keys"] = frozenset(sent)
    return values


@record
class SessionDetail:
    """`GET /api/sessions/{id}`: the raw sessions row (the lineage fields are required keys)."""

    id: str
    source: str | None
    parent_session_id: str | None
    model_config_raw: JSON = field(default=None, metadata={"key": "model_config"})
    started_at: float | int | None
    ended_at: float | int | None
    end_reason: str | None
    message_count: int | None = None
    profile: str | None = None
    profile_name: str | None = None
    title: str | None = None
    figures: Figures = field(default=NO_FIGURES, metadata=_DERIVED)  # usage, read permissively
    has_model_config: bool = field(default=False, metadata=_DERIVED)
    looks_current: bool = field(default=False, metadata=_DERIVED)
    sent_keys: frozenset[str] = field(default=_EMPTY, compare=False, repr=False, metadata=_DERIVED)

    @classmethod
    def from_json(cls, body: JSON) -> SessionDetail:
        """Validate a detail body; `model_config` is kept raw, and whether the key was
        present at all is recorded for the lineage proof; the usage figures never fail it."""
        data = _object(body, "detail")
        return cls(
            **_read(cls, data, "detail"),
            figures=figures_of(data),
            has_model_config="model_config" in data,
            # iot always stamps `is_default_profile`, 0.19.x never: a first guess the envelope decides.
            looks_current="is_default_profile" in data,
        )


@record
class Pagination:
    limit: int | None
    offset: int | None
    returned: int
    order: str | None = None
    sent_keys: frozenset[str] = field(default=_EMPTY, compare=False, repr=False, metadata=_DERIVED)

    @classmethod
    def from_json(cls, body: JSON) -> Pagination:
        return cls(**_read(cls, body, "pagination"))


@record
class WireMessage:
    """One transcript row. Optional projections are told apart from absent ones with
    `sent_keys`: an explicitly empty `display_content` is authoritative."""

    id: int
    session_id: str
    role: str
    content: JSON = None
    tool_call_id: str | None = None
    tool_calls: JSON = None
    tool_name: str | None = None
    timestamp: float | int | None = None
    reasoning: JSON = None
    reasoning_content: JSON = None
    reasoning_details: JSON = None
    codex_reasoning_items: JSON = None
    active: int | bool | None = None
    compacted: int | bool | None = None
    display_kind: str | None = None
    display_content: JSON = None
    display_reasoning: JSON = None
    display_commentary: JSON = None
    display_metadata: JSON = None
    message_uid: str | None = None
    # Hermes flags the summary row a compression writes (0.19 store; iot on the wire).
    compressed_summary: JSON = field(default=None, metadata={"key": "_compressed_summary"})
    sent_keys: frozenset[str] = field(default=_EMPTY, compare=False, repr=False, metadata=_DERIVED)

    @classmethod
    def from_json(cls, body: JSON) -> WireMessage:
        return cls(**_read(cls, body, "message"))


def _rows(value: object, where: str, key: str) -> list[WireMessage]:
    return [WireMessage.from_json(row) for row in _list(value, where, key)]


def _pagination(value: JSON, where: str, key: str) -> Pagination:
    return Pagination.from_json(value)


@record
class MessagesPage:
    """`GET /api/sessions/{id}/messages`. `order` is absent from the pagination of 0.19.x;
    0.18.x and older send no `pagination`: every active row, the query ignored."""

    session_id: str
    messages: list[WireMessage] = field(metadata={"check": _rows})
    # without `pagination` (0.18.x): one that counts the rows (from_json)
    pagination: Pagination = field(
        default=Pagination(limit=None, offset=None, returned=0), metadata={"check": _pagination}
    )
    profile: str | None = None
    sent_keys: frozenset[str] = field(default=_EMPTY, compare=False, repr=False, metadata=_DERIVED)

    @property
    def paginated(self) -> bool:
        """Did the envelope carry a `pagination` object?"""
        return "pagination" in self.sent_keys

    @property
    def ordered(self) -> bool:
        """Did the pagination echo `order` (a backend that honours it)?"""
        return self.paginated and "order" in self.pagination.sent_keys

    @classmethod
    def from_json(cls, body: JSON) -> MessagesPage:
        values = _read(cls, body, "messages")
        if "pagination" not in values["sent_keys"]:  # the pre-pagination envelope (0.18.x)
            values["pagination"] = Pagination(limit=None, offset=None, returned=len(values["messages"]))
        return cls(**values)


@record
class LatestDescendant:
    """`GET /api/sessions/{id}/latest-descendant`: a hint, never proof."""

    requested_session_id: str | None = None
    session_id: str
    path: list[str] = field(default_factory=list)
    changed: bool = False
    sent_keys: frozenset[str] = field(default=_EMPTY, compare=False, repr=False, metadata=_DERIVED)

    @classmethod
    def from_json(cls, body: JSON) -> LatestDescendant:
        return cls(**_read(cls, body, "latest-descendant"))


# Read every model's keys now: a check missing for an annotation fails at import, not later.
for _model in (SessionDetail, Pagination, WireMessage, MessagesPage, LatestDescendant):
    _keys(_model)
