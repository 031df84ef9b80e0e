"""What the dashboard sends: frozen `msgspec.Struct`s decoded from the response bytes. A missing or
mistyped key this tool relies on is a `WireError`, never guessed; `UNSET` marks a key whose absence
decides something (docs/decisions.md, entries 1 and 7); usage figures are read permissively.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any, TypeAlias, TypeVar

import msgspec
from msgspec import UNSET, Struct, UnsetType, field

# Any JSON value, kept as sent (decoded into dicts, lists, strings, numbers, None).
JSON: TypeAlias = Any
Timestamp: TypeAlias = float | int | None

M = TypeVar("M", bound=Struct)

# The messages route's page sizes, shared by the client and the reading loops.
PAGE_LIMIT = 50  # rows per newest page: the dashboard's own default
MAX_LIMIT = 500  # the largest page the dashboards accept


class WireError(ValueError):
    """A response body without the shape this tool relies on; the message names the path."""


def _fits_float(value: Timestamp, key: str) -> None:
    # msgspec keeps an over-wide JSON int, which would overflow every comparison with a float
    if type(value) is int:
        try:
            float(value)
        except OverflowError:
            raise ValueError(f"{key}: timestamp out of range") from None


TOKENS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens")


class Figures(Struct, frozen=True, kw_only=True):
    """One segment's usage figures as its detail sent them; None: absent or unusable."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    reasoning_tokens: int | None = None
    api_calls: int | None = None
    estimated_cost_usd: float | None = None
    actual_cost_usd: float | None = None
    cost_status: str | None = None


NO_FIGURES = Figures()


def count(value: object) -> int | None:  # a non-negative int, never a bool
    return value if type(value) is int and value >= 0 else None


def amount(value: object) -> float | None:  # a finite non-negative float, never a bool
    if type(value) not in (int, float):
        return None
    try:
        amount = float(value)  # type: ignore[arg-type]
    except OverflowError:
        return None
    return amount if math.isfinite(amount) and amount >= 0 else None


def figures_of(body: Mapping[str, Any]) -> Figures:
    """The usage figures of a detail body's keys (absent or unusable: None)."""
    status = body.get("cost_status")
    return Figures(
        **{name: count(body.get(name)) for name in TOKENS},
        api_calls=count(body.get("api_call_count")),
        estimated_cost_usd=amount(body.get("estimated_cost_usd")),
        actual_cost_usd=amount(body.get("actual_cost_usd")),
        cost_status=status if isinstance(status, str) else None,
    )


class SessionDetail(Struct, frozen=True, kw_only=True):
    """`GET /api/sessions/{id}`: the raw sessions row (the lineage fields are required keys)."""

    id: str
    source: str | None
    parent_session_id: str | None
    model_config_sent: JSON | UnsetType = field(default=UNSET, name="model_config")
    started_at: Timestamp
    ended_at: Timestamp
    end_reason: str | None
    message_count: int | None = None
    profile: str | UnsetType | None = UNSET
    profile_name: str | None = None
    title: str | None = None
    is_default_profile: JSON | UnsetType = UNSET
    # The segment's usage figures, kept as sent (any JSON value): `figures` reads them.
    input_tokens: JSON = None
    output_tokens: JSON = None
    cache_read_tokens: JSON = None
    cache_write_tokens: JSON = None
    reasoning_tokens: JSON = None
    api_call_count: JSON = None
    estimated_cost_usd: JSON = None
    actual_cost_usd: JSON = None
    cost_status: JSON = None

    def __post_init__(self) -> None:
        _fits_float(self.started_at, "started_at")
        _fits_float(self.ended_at, "ended_at")

    @property
    def figures(self) -> Figures:
        return figures_of(msgspec.structs.asdict(self))

    @property
    def has_model_config(self) -> bool:
        """Was `model_config` sent at all (null included)? The lineage proof needs the key."""
        return self.model_config_sent is not UNSET

    @property
    def model_config_raw(self) -> JSON:
        """`model_config` as sent (a JSON string, an object or null); None when not sent."""
        return None if self.model_config_sent is UNSET else self.model_config_sent

    @property
    def looks_current(self) -> bool:
        """Current (iot) backends always stamp `is_default_profile`; 0.19.x never does. Only a
        guess for the first page request; the messages envelope decides."""
        return self.is_default_profile is not UNSET


class Pagination(Struct, frozen=True, kw_only=True):
    limit: int | None
    offset: int | None
    returned: int
    order: str | UnsetType | None = UNSET


class WireMessage(Struct, frozen=True, kw_only=True):
    """One transcript row (`display_content`, `display_reasoning`: `UNSET` when not sent)."""

    id: int
    session_id: str
    role: str
    content: JSON = None
    tool_call_id: str | None = None
    tool_calls: JSON = None
    tool_name: str | None = None
    timestamp: Timestamp = None
    reasoning: JSON = None
    reasoning_content: JSON = None
    reasoning_details: JSON = None
    codex_reasoning_items: JSON = None
    active: int | bool | None = None
    compacted: int | bool | None = None
    display_kind: str | None = None
    display_content: JSON | UnsetType = UNSET
    display_reasoning: JSON | UnsetType = UNSET
    display_commentary: JSON = None
    display_metadata: JSON = None
    message_uid: str | None = None
    # Hermes flags the summary row a compression writes (0.19 store; iot on the wire).
    compressed_summary: JSON = field(default=None, name="_compressed_summary")

    def __post_init__(self) -> None:
        _fits_float(self.timestamp, "timestamp")


class MessagesPage(Struct, frozen=True, kw_only=True):
    """`GET /api/sessions/{id}/messages`. `order` is absent from the pagination of 0.19.x;
    0.18.x and older send no `pagination`: every active row, the query ignored."""

    session_id: str
    messages: list[WireMessage]
    pagination_sent: Pagination | UnsetType = field(default=UNSET, name="pagination")
    profile: str | UnsetType | None = UNSET

    @property
    def paginated(self) -> bool:
        return self.pagination_sent is not UNSET

    @property
    def ordered(self) -> bool:
        """Did the pagination echo `order` (a backend that honours it)?"""
        return self.pagination_sent is not UNSET and self.pagination_sent.order is not UNSET

    @property
    def pagination(self) -> Pagination:
        """The pagination sent; without one (0.18.x), one that counts the rows."""
        if self.pagination_sent is UNSET:
            return Pagination(limit=None, offset=None, returned=len(self.messages))
        return self.pagination_sent


class LatestDescendant(Struct, frozen=True, kw_only=True):
    """`GET /api/sessions/{id}/latest-descendant`: a hint, never proof."""

    requested_session_id: str | None = None
    session_id: str
    path: list[str] = field(default_factory=list)
    changed: bool = False


_DECODERS: dict[type[Any], msgspec.json.Decoder[Any]] = {
    model: msgspec.json.Decoder(model) for model in (SessionDetail, MessagesPage, LatestDescendant)
}


def decode(raw: bytes, model: type[M]) -> M:
    """`raw` as `model`: `WireError` for JSON without its shape, `ValueError` (or `RecursionError`)
    for no JSON. A body msgspec refuses is read by `json.loads`, held to the same model."""
    decoder = _DECODERS.get(model) or msgspec.json.Decoder(model)
    try:
        return decoder.decode(raw)  # type: ignore[no-any-return]
    except msgspec.DecodeError as fast:
        try:
            data = json.loads(raw)
        except ValueError:
            if isinstance(fast, msgspec.ValidationError):
                raise WireError(str(fast)) from None
            raise
    try:
        return msgspec.convert(data, model)
    except msgspec.ValidationError as exc:
        raise WireError(str(exc)) from None
