"""A msgspec prototype of `hermes_task.wire`: the same five wire models as `msgspec.Struct`s.

Measured by `bench/bench_wire.py` against the hand-written module; not imported by the
package. Same contract as the hand-written models: unknown keys are ignored; the keys the
tool relies on are required (nullable where the backend sends null); strict types (a string
is never an int, a bool is never an int); an int timestamp must fit a float. A key whose
presence matters (`display_content`, `display_reasoning`, `pagination.order`, the detail's
`model_config` and `is_default_profile`) is `UNSET` when absent, so null and absent differ.
Decoding is one pass from bytes (`msgspec.json.decode`), with the JSON parser's rules:
`NaN` and `1e400` are rejected anywhere in the body, where `json.loads` would accept them.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

Timestamp = float | int | None


def _fits_float(value: Timestamp, key: str) -> None:
    # msgspec keeps an over-wide JSON int as a Python int; `10**400` would overflow every
    # later comparison with a float, so it is rejected here as the hand-written check does.
    if type(value) is int:
        try:
            float(value)
        except OverflowError:
            raise ValueError(f"{key}: timestamp out of range") from None


class SessionDetail(msgspec.Struct, frozen=True, kw_only=True):
    """`GET /api/sessions/{id}`: the lineage fields are required keys, nullable."""

    id: str
    source: str | None
    parent_session_id: str | None
    model_config_raw: Any | UnsetType = msgspec.field(default=UNSET, name="model_config")
    started_at: Timestamp
    ended_at: Timestamp
    end_reason: str | None
    message_count: int | None = None
    profile: str | None = None
    profile_name: str | None = None
    title: str | None = None
    is_default_profile: Any | UnsetType = UNSET

    def __post_init__(self) -> None:
        _fits_float(self.started_at, "started_at")
        _fits_float(self.ended_at, "ended_at")

    @property
    def has_model_config(self) -> bool:
        return self.model_config_raw is not UNSET

    @property
    def looks_current(self) -> bool:
        return self.is_default_profile is not UNSET


class Pagination(msgspec.Struct, frozen=True, kw_only=True):
    limit: int | None
    offset: int | None
    returned: int
    order: str | UnsetType | None = UNSET


class WireMessage(msgspec.Struct, frozen=True, kw_only=True):
    """One transcript row; an explicitly sent (even null) `display_content` is authoritative."""

    id: int
    session_id: str
    role: str
    content: Any = None
    tool_call_id: str | None = None
    tool_calls: Any = None
    tool_name: str | None = None
    timestamp: Timestamp = None
    reasoning: Any = None
    reasoning_content: Any = None
    reasoning_details: Any = None
    codex_reasoning_items: Any = None
    active: int | bool | None = None
    compacted: int | bool | None = None
    display_kind: str | None = None
    display_content: Any | UnsetType = UNSET
    display_reasoning: Any | UnsetType = UNSET
    display_commentary: Any = None
    display_metadata: Any = None
    message_uid: str | None = None

    def __post_init__(self) -> None:
        _fits_float(self.timestamp, "timestamp")


class MessagesPage(msgspec.Struct, frozen=True, kw_only=True):
    """`GET /api/sessions/{id}/messages`. `order` is absent on legacy (0.19.x) backends."""

    session_id: str
    messages: list[WireMessage]
    pagination: Pagination
    profile: str | None = None

    @property
    def legacy(self) -> bool:
        return self.pagination.order is UNSET


class LatestDescendant(msgspec.Struct, frozen=True, kw_only=True):
    """`GET /api/sessions/{id}/latest-descendant`: a hint, never proof."""

    requested_session_id: str | None = None
    session_id: str
    path: list[str] = msgspec.field(default_factory=list)
    changed: bool = False


_DETAIL = msgspec.json.Decoder(SessionDetail)
_PAGE = msgspec.json.Decoder(MessagesPage)
_DESCENDANT = msgspec.json.Decoder(LatestDescendant)


def decode_detail(raw: bytes) -> SessionDetail:
    return _DETAIL.decode(raw)


def decode_page(raw: bytes) -> MessagesPage:
    return _PAGE.decode(raw)


def decode_descendant(raw: bytes) -> LatestDescendant:
    return _DESCENDANT.decode(raw)
