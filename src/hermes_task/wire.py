"""Pydantic models of what the dashboard sends.

Permissive about extra fields (both backends add columns over time) and strict about the
fields this tool relies on: a missing or mistyped one makes the response incompatible
instead of being guessed. Strict types keep `"12"` from passing as a row id.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, StrictBool, StrictFloat, StrictInt, StrictStr


def _float_range(value: float | None) -> float | None:
    """An int timestamp must fit a float (`10**400` would overflow every later comparison)."""
    if isinstance(value, int):
        try:
            float(value)
        except OverflowError:
            raise ValueError("timestamp out of range") from None
    return value


Timestamp = Annotated[StrictFloat | StrictInt | None, AfterValidator(_float_range)]


class _Wire(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class SessionDetail(_Wire):
    """`GET /api/sessions/{id}`: the raw sessions row (the lineage fields are required keys)."""

    id: StrictStr
    source: StrictStr | None
    parent_session_id: StrictStr | None
    model_config_raw: Any = None
    started_at: Timestamp
    ended_at: Timestamp
    end_reason: StrictStr | None
    message_count: StrictInt | None = None
    profile: StrictStr | None = None
    profile_name: StrictStr | None = None
    title: StrictStr | None = None
    has_model_config: bool = False
    looks_current: bool = False

    @classmethod
    def parse(cls, body: object) -> SessionDetail:
        """Validate a detail body; `model_config` (a reserved pydantic name) is kept raw, and
        whether the key was present at all is recorded for the lineage proof."""
        if not isinstance(body, dict):
            raise ValueError("detail body is not an object")
        data = dict(body)
        present = "model_config" in data
        raw = data.pop("model_config", None)
        data.pop("model_config_raw", None)
        data.pop("has_model_config", None)
        # Current (iot) backends always stamp `is_default_profile`; 0.19.x never does. This is
        # only a guess for the first page request; the messages envelope decides.
        current = "is_default_profile" in data
        data.pop("looks_current", None)
        return cls.model_validate(
            {**data, "model_config_raw": raw, "has_model_config": present, "looks_current": current}
        )


class Pagination(_Wire):
    limit: StrictInt | None
    offset: StrictInt | None
    returned: StrictInt
    order: StrictStr | None = None


class WireMessage(_Wire):
    """One transcript row. Optional projections are told apart from absent ones with
    `model_fields_set`: an explicitly empty `display_content` is authoritative."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    id: StrictInt
    session_id: StrictStr
    role: StrictStr
    content: Any = None
    tool_call_id: StrictStr | None = None
    tool_calls: Any = None
    tool_name: StrictStr | None = None
    timestamp: Timestamp = None
    reasoning: Any = None
    reasoning_content: Any = None
    reasoning_details: Any = None
    codex_reasoning_items: Any = None
    active: StrictInt | StrictBool | None = None
    compacted: StrictInt | StrictBool | None = None
    display_kind: StrictStr | None = None
    display_content: Any = None
    display_reasoning: Any = None
    display_commentary: Any = None
    display_metadata: Any = None
    message_uid: StrictStr | None = None


class MessagesPage(_Wire):
    """`GET /api/sessions/{id}/messages`. `order` is absent on legacy (0.19.x) backends."""

    session_id: StrictStr
    messages: list[WireMessage]
    pagination: Pagination
    profile: StrictStr | None = None

    @property
    def legacy(self) -> bool:
        return "order" not in self.pagination.model_fields_set


class LatestDescendant(_Wire):
    """`GET /api/sessions/{id}/latest-descendant`: a hint, never proof."""

    requested_session_id: StrictStr | None = None
    session_id: StrictStr
    path: list[StrictStr] = []
    changed: StrictBool = False
