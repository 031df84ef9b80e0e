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


ROWS_OPEN = '{\n  "schema_version": 1,\n  "rows": ['
"""What `document` writes before the first element of a transcript's or an error's `rows`
(both documents start `schema_version`, `rows`): known before any row is read."""


def rows_close(doc: Any, count: int) -> str:
    """What `document(doc)` writes after `count` elements of `rows` (`doc` has `rows` empty):
    with `ROWS_OPEN`, `row_element` for each row and this, byte for byte `document` of the
    whole document."""
    text = document(doc)
    empty = ROWS_OPEN + "],\n"
    if not text.startswith(empty):
        raise ValueError(f"not a document whose rows come first: {type(doc).__name__}")
    return ("],\n" if count == 0 else "\n  ],\n") + text[len(empty) :]
