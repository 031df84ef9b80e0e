"""JSON text: one document, or one NDJSON event per line, always ASCII-escaped.

msgspec writes the bytes (`msgspec.json.encode`, fields in declaration order; documents
indented by `msgspec.json.format(..., indent=2)`, events compact on one line). The contract
promises `ensure_ascii`-style text, which msgspec has no option for, so `ascii_only` escapes
the encoded bytes: every character outside printable ASCII plus the controls JSON already
escapes (so DEL and everything from U+0080 on) becomes `\\uXXXX`, an astral one a surrogate
pair. C1 controls, bidi overrides and the like in backend text cannot then act on a terminal
that `cat`s the output. A string UTF-8 cannot carry (a lone surrogate, which JSON can: the
standard library's parser reads `"\\ud800"`) is written by the standard library's encoder
instead, escaped the same way.

Invariant: `json.loads(document(doc)) == json.loads(event(doc))` is the document's data
(`msgspec.to_builtins`), and the text is ASCII with no line break inside a value.
"""

from __future__ import annotations

import codecs
import json
from typing import Any

import msgspec

_ENCODER = msgspec.json.Encoder()
_ERRORS = "hermes_task.json_ascii"


def _escape(error: UnicodeError) -> tuple[str, int]:
    """A codec error handler: the run of non-ASCII characters as `\\uXXXX` escapes (UTF-16
    code units, so an astral character is a surrogate pair, as `json.dumps` writes it)."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    units = error.object[error.start : error.end].encode("utf-16-be", "surrogatepass").hex()
    return "".join(f"\\u{units[i : i + 4]}" for i in range(0, len(units), 4)), error.end


codecs.register_error(_ERRORS, _escape)


def ascii_only(raw: bytes) -> bytes:
    """JSON text `raw` (UTF-8) with every non-ASCII character and DEL escaped as `\\uXXXX`;
    the same JSON value. Outside strings JSON text is ASCII, so only strings change."""
    if not raw.isascii():
        raw = raw.decode("utf-8").encode("ascii", _ERRORS)
    return raw.replace(b"\x7f", b"\\u007f") if b"\x7f" in raw else raw


def _encode(value: Any, indent: int | None) -> bytes:
    try:
        raw = _ENCODER.encode(value)
    except UnicodeEncodeError:  # a lone surrogate: UTF-8 cannot carry it, JSON's escapes can
        data = msgspec.to_builtins(value)
        separators = (",", ": ") if indent else (",", ":")
        return json.dumps(data, ensure_ascii=True, indent=indent, separators=separators).encode("ascii")
    return ascii_only(msgspec.json.format(raw, indent=indent) if indent else raw)


def document(doc: Any) -> str:
    """A whole document (a Struct of `core/documents.py`), indented, with a trailing newline."""
    return _encode(doc, 2).decode("ascii") + "\n"


def event(payload: Any) -> str:
    """One NDJSON line (a Struct of `core/events.py`): compact, no embedded newline, with its
    terminator."""
    return _encode(payload, None).decode("ascii") + "\n"


def row_element(row: Any, *, first: bool) -> str:
    """One element of a document's `rows` array, as `document` writes it (`first`: no comma)."""
    body = _encode(row, 2).decode("ascii").replace("\n", "\n    ")
    return ("\n    " if first else ",\n    ") + body


class RowsDocument:
    """A document whose `rows` array is written element by element, byte for byte what
    `document` writes for the whole document: `open_text` (everything before the array's
    first element), `row_element` for each row, then `close_text(count)` (the rest, after
    `count` elements). `doc` is the document with `rows` empty."""

    _MARK = '\n  "rows": [],\n'

    def __init__(self, doc: Any) -> None:
        text = document(doc)
        at = text.index(self._MARK)  # a string value holds no raw line break: only the key matches
        self._before = text[:at]
        self._after = text[at + len(self._MARK) :]

    def open_text(self) -> str:
        return self._before + '\n  "rows": ['

    def close_text(self, count: int) -> str:
        return ("],\n" if count == 0 else "\n  ],\n") + self._after
