"""A wire model decoded from a JSON body written in a test, as the client decodes a response."""

from __future__ import annotations

import json
from typing import Any, TypeVar

from msgspec import Struct

from hermes_task.core.wire import decode

M = TypeVar("M", bound=Struct)


def decoded(body: Any, model: type[M]) -> M:
    """`body` (JSON data) sent as bytes through `dashboard.wire.decode` as `model`."""
    return decode(json.dumps(body).encode(), model)
