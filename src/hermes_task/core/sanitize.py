"""Untrusted strings: session ids accepted unchanged or rejected (docs/exit-codes.md), and backend
text neutralised: every backend string passes `clean` before a terminal, since Rich strips only a
few controls (BEL, BS, VT, FF, CR) and passes ESC/CSI/OSC through.
"""

from __future__ import annotations

import re
import unicodedata
from typing import NewType
from urllib.parse import quote

from hermes_task.failures import Code, HermesError

# C0 (minus \t and \n), DEL, C1, bidi embeddings/overrides/isolates, marks, zero-width and
# other format characters, line/paragraph separators, BOM, lone surrogates (JSON can carry
# `\ud800`; no terminal encoding can write it).
_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f"
    "\ud800-\udfff\ufeff\ufff9-\ufffb]"
)

_UNSAFE_LINE = re.compile(_UNSAFE.pattern[:-1] + "\t\n]")


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return "^" + chr(code + 0x40)
    if code == 0x7F:
        return "^?"
    return f"<U+{code:04X}>"


def clean(text: str) -> str:
    """`text` with every unsafe character replaced by a visible spelling; idempotent."""
    return text if _UNSAFE.search(text) is None else _UNSAFE.sub(_visible, text)


def clean_line(text: str) -> str:
    """`clean` for one-line contexts: newlines and tabs become spaces, so no value forges a line."""
    return text if _UNSAFE_LINE.search(text) is None else clean(text).replace("\n", " ").replace("\t", " ")


def is_clean_line(text: str) -> bool:
    """Whether `clean_line(text)` is `text` itself (one scan, for many fields joined)."""
    return _UNSAFE_LINE.search(text) is None


SessionId = NewType("SessionId", str)

MAX_UTF16_UNITS = 512


def _has_control(value: str) -> bool:
    return any(unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Zl", "Zp") for ch in value)


def check_id(value: str, *, what: str = "id") -> SessionId:
    """Return `value` as a SessionId, or raise `invalid_id` naming the broken rule."""
    if not value:
        raise HermesError(Code.INVALID_ID, f"{what} is empty")
    if value in (".", ".."):
        raise HermesError(Code.INVALID_ID, f"{what} may not be '.' or '..'")
    if value != value.strip():
        raise HermesError(Code.INVALID_ID, f"{what} has surrounding whitespace")
    if _has_control(value):
        raise HermesError(Code.INVALID_ID, f"{what} contains a control or format character")
    # UTF-16 units: an astral character counts twice, a lone surrogate (an undecodable argv byte) once
    if len(value.encode("utf-16-le", "surrogatepass")) // 2 > MAX_UTF16_UNITS:
        raise HermesError(Code.INVALID_ID, f"{what} is longer than {MAX_UTF16_UNITS} UTF-16 units")
    return SessionId(value)


def is_valid_id(value: object) -> bool:
    try:
        return isinstance(value, str) and check_id(value) == value
    except HermesError:
        return False


# Hermes session ids look like 20261130_170935_fc44ff (date, time, six hex digits).
_SHAPE = re.compile(r"\d{8}_\d{6}_[0-9a-f]{6}")
_PARTIAL = re.compile(r"\d{1,8}(_(\d{1,6}(_[0-9a-f]{0,5})?)?)?")


def looks_like_prefix(value: str) -> bool:
    """A strict prefix of the usual id shape (`20261130_17`): only for a 404's hint, never a request."""
    return bool(_PARTIAL.fullmatch(value)) and not _SHAPE.fullmatch(value)


def path_segment(value: SessionId) -> str:
    """The id as one fully percent-encoded URL path segment."""
    return quote(value, safe="")


def clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def one_line(text: str, width: int) -> str:
    """`text` `clean_line`d, its whitespace runs collapsed, cut to `width` characters with `…`."""
    return clip(" ".join(clean_line(text).split()), width)
