"""JSON rendering: one document, or one NDJSON event per line, always ASCII-escaped.

`ensure_ascii=True` escapes every non-ASCII character, so C1 controls, DEL-adjacent bytes
and bidi overrides in backend text cannot act on a terminal that `cat`s the output.
"""

from __future__ import annotations

import json
from typing import Any

from hermes_task.core.documents import to_json_dict


def document(doc: Any) -> str:
    """A whole document (a `model` dataclass), indented, with a trailing newline."""
    return json.dumps(to_json_dict(doc), ensure_ascii=True, indent=2) + "\n"


def event(payload: dict[str, Any]) -> str:
    """One NDJSON line (compact, no embedded newline) with its terminator."""
    return json.dumps(payload, ensure_ascii=True, separators=(",", ":")) + "\n"
