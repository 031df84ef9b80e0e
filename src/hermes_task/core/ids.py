"""Opaque session-id rules: accepted unchanged or rejected, never repaired.

An id is non-empty, at most 512 UTF-16 code units, free of control characters and of
surrounding whitespace, and is neither `.` nor `..`. Path segments built from an id are
percent-encoded with nothing left unescaped (`quote(id, safe="")`).
"""

from __future__ import annotations

import re
import unicodedata
from typing import NewType
from urllib.parse import quote

from hermes_task.failures import Code, HermesError

SessionId = NewType("SessionId", str)

MAX_UTF16_UNITS = 512


def utf16_units(value: str) -> int:
    """Length in UTF-16 code units (astral characters count twice; a lone surrogate, as an
    undecodable argv byte becomes, counts once instead of failing to encode)."""
    return len(value.encode("utf-16-le", "surrogatepass")) // 2


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
    if utf16_units(value) > MAX_UTF16_UNITS:
        raise HermesError(Code.INVALID_ID, f"{what} is longer than {MAX_UTF16_UNITS} UTF-16 units")
    return SessionId(value)


def is_valid_id(value: object) -> bool:
    """True when `value` is a string that `check_id` accepts."""
    if not isinstance(value, str):
        return False
    try:
        check_id(value)
    except HermesError:
        return False
    return True


# Hermes session ids look like 20261130_170935_fc44ff (date, time, six hex digits).
_SHAPE = re.compile(r"\d{8}_\d{6}_[0-9a-f]{6}")
_PARTIAL = re.compile(r"\d{1,8}(_(\d{1,6}(_[0-9a-f]{0,5})?)?)?")


def looks_like_prefix(value: str) -> bool:
    """True for a strict prefix of the usual id shape (`20261130_17`): the dashboard does
    not resolve prefixes reliably, so a 404 for one deserves a hint. Ids stay opaque: this
    only decides a hint, never a request."""
    return bool(_PARTIAL.fullmatch(value)) and not _SHAPE.fullmatch(value)


def path_segment(value: SessionId) -> str:
    """The id as one fully percent-encoded URL path segment."""
    return quote(value, safe="")
