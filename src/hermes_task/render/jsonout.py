"""JSON rendering: one document, or one NDJSON event per line, always ASCII-escaped.

`ensure_ascii=True` escapes every non-ASCII character, so C1 controls, DEL-adjacent bytes
and bidi overrides in backend text cannot act on a terminal that `cat`s the output.

Invariant: `document(doc)` is byte-identical to
`json.dumps(to_json_dict(doc), ensure_ascii=True, indent=2) + "\\n"` (a property test checks
it). The standard library's indenting encoder is pure Python and was most of the formatting
time of a 20,000-row `older --all --json`; this one walks the dataclasses directly (no
intermediate dicts) and escapes strings with the same C function the standard library uses.
"""

from __future__ import annotations

import json
from dataclasses import is_dataclass
from json.encoder import encode_basestring_ascii
from typing import Any

from hermes_task.core.documents import field_names, to_json_dict

INDENT = "  "


def _float(value: float) -> str:
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    return float.__repr__(value)


def _encode(value: Any, out: list[str], level: int) -> None:
    if value is None:
        out.append("null")
    elif isinstance(value, str):
        out.append(encode_basestring_ascii(value))
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        out.append(int.__repr__(value))
    elif isinstance(value, float):
        out.append(_float(value))
    elif isinstance(value, list | tuple):
        if not value:
            out.append("[]")
            return
        inner = "\n" + INDENT * (level + 1)
        sep = "[" + inner
        for item in value:
            out.append(sep)
            sep = "," + inner
            _encode(item, out, level + 1)
        out.append("\n" + INDENT * level + "]")
    elif isinstance(value, dict):
        if not value:
            out.append("{}")
        elif all(isinstance(key, str) for key in value):
            _members(list(value.items()), out, level)
        else:  # keys the standard library converts (numbers, booleans, null): let it
            plain = json.dumps(to_json_dict(value), ensure_ascii=True, indent=2)
            out.append(plain.replace("\n", "\n" + INDENT * level))
    elif is_dataclass(value) and not isinstance(value, type):
        _members([(name, getattr(value, name)) for name in field_names(type(value))], out, level)
    else:
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _members(items: list[tuple[str, Any]], out: list[str], level: int) -> None:
    if not items:
        out.append("{}")
        return
    inner = "\n" + INDENT * (level + 1)
    sep = "{" + inner
    for key, item in items:
        out.append(sep + encode_basestring_ascii(key) + ": ")
        sep = "," + inner
        _encode(item, out, level + 1)
    out.append("\n" + INDENT * level + "}")


def document(doc: Any) -> str:
    """A whole document (a `model` dataclass), indented, with a trailing newline."""
    out: list[str] = []
    _encode(doc, out, 0)
    out.append("\n")
    return "".join(out)


def event(payload: dict[str, Any]) -> str:
    """One NDJSON line (compact, no embedded newline) with its terminator."""
    return json.dumps(payload, ensure_ascii=True, separators=(",", ":")) + "\n"
