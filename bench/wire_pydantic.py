"""A pydantic prototype of `hermes_task.core.wire`: the same models as pydantic v2 models.

Measured by `bench/bench_wire.py` against the hand-written module and msgspec; not imported by
the package (pydantic is not a dependency: `pip install pydantic` to measure). Same contract:
unknown keys ignored, the keys the tool relies on required (nullable where the backend sends
null), strict types (`strict=True`: a string is never an int, a bool never an int), an int
timestamp must fit a float; absent and null differ through `model_fields_set`. Decoding is one
pass from bytes (`model_validate_json`, pydantic-core's Rust parser), which reads `NaN` and
`Infinity` but, like msgspec, no lone surrogate escape.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

Timestamp = float | int | None
CONFIG = ConfigDict(strict=True, frozen=True, extra="ignore", populate_by_name=True)


def _fits_float(value: Timestamp) -> Timestamp:
    if type(value) is int:
        try:
            float(value)
        except OverflowError:
            raise ValueError("timestamp out of range") from None
    return value


class SessionDetail(BaseModel):
    model_config = CONFIG

    id: str
    source: str | None
    parent_session_id: str | None
    model_config_sent: Any = Field(default=None, alias="model_config")
    started_at: Timestamp
    ended_at: Timestamp
    end_reason: str | None
    message_count: int | None = None
    profile: str | None = None
    profile_name: str | None = None
    title: str | None = None
    is_default_profile: Any = None

    _check = field_validator("started_at", "ended_at")(_fits_float)

    @property
    def has_model_config(self) -> bool:
        return "model_config_sent" in self.model_fields_set

    @property
    def looks_current(self) -> bool:
        return "is_default_profile" in self.model_fields_set

    @property
    def model_config_raw(self) -> Any:
        return self.model_config_sent


class Pagination(BaseModel):
    model_config = CONFIG

    limit: int | None
    offset: int | None
    returned: int
    order: str | None = None


class WireMessage(BaseModel):
    model_config = CONFIG

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
    display_content: Any = None
    display_reasoning: Any = None
    display_commentary: Any = None
    display_metadata: Any = None
    message_uid: str | None = None
    compressed_summary: Any = Field(default=None, alias="_compressed_summary")

    _check = field_validator("timestamp")(_fits_float)


class MessagesPage(BaseModel):
    model_config = CONFIG

    session_id: str
    messages: list[WireMessage]
    pagination_sent: Pagination | None = Field(default=None, alias="pagination")
    profile: str | None = None

    @property
    def paginated(self) -> bool:
        return "pagination_sent" in self.model_fields_set

    @property
    def ordered(self) -> bool:
        return self.pagination_sent is not None and "order" in self.pagination_sent.model_fields_set

    @property
    def pagination(self) -> Pagination:
        if self.pagination_sent is None:
            return Pagination(limit=None, offset=None, returned=len(self.messages))
        return self.pagination_sent


class LatestDescendant(BaseModel):
    model_config = CONFIG

    requested_session_id: str | None = None
    session_id: str
    path: list[str] = Field(default_factory=list)
    changed: bool = False


def decode_detail(raw: bytes) -> SessionDetail:
    return SessionDetail.model_validate_json(raw)


def decode_page(raw: bytes) -> MessagesPage:
    return MessagesPage.model_validate_json(raw)


def decode_descendant(raw: bytes) -> LatestDescendant:
    return LatestDescendant.model_validate_json(raw)
