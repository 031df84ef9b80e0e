"""Neutralise terminal control sequences in untrusted backend text.

Every string that came from the backend passes through `clean` before it reaches a
terminal. The result contains no ESC, no C0 control except newline and tab, no DEL, no C1
control (including the 8-bit CSI 0x9b), no bidi override or isolate, no other invisible
format character and no lone surrogate (JSON can carry `\\ud800`; no terminal encoding can
write it): each is replaced by a visible, inert spelling (`^[`, `^M`, `<U+202E>`), so
an escape sequence shows up as text instead of acting. Rich strips only a few controls
itself (BEL, BS, VT, FF, CR) and passes ESC/CSI/OSC through, hence this module.
"""

from __future__ import annotations

import re

# C0 (minus \t and \n), DEL, C1, bidi embeddings/overrides/isolates, marks, zero-width and
# other format characters, line/paragraph separators, BOM, lone surrogates.
_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f"
    "\ud800-\udfff\ufeff\ufff9-\ufffb]"
)

_UNSAFE_LINE = re.compile(_UNSAFE.pattern[:-1] + "\t\n]")


def _visible(match: re.Match[str]) -> str:
    ch = match.group()
    code = ord(ch)
    if code < 0x20:
        return "^" + chr(code + 0x40)
    if code == 0x7F:
        return "^?"
    return f"<U+{code:04X}>"


def clean(text: str) -> str:
    """`text` with every unsafe character replaced by a visible spelling; idempotent."""
    if _UNSAFE.search(text) is None:
        return text
    return _UNSAFE.sub(_visible, text)


def clean_line(text: str) -> str:
    """Like `clean`, for one-line contexts (ids, goals, error messages): newlines and tabs
    become spaces too, so a hostile value cannot forge a second line."""
    if _UNSAFE_LINE.search(text) is None:  # the common case: one scan, nothing to change
        return text
    return clean(text).replace("\n", " ").replace("\t", " ")


def is_clean_line(text: str) -> bool:
    """Whether `clean_line(text)` is `text` itself (one scan): a caller formatting many
    one-line fields can check their joined text once instead of each."""
    return _UNSAFE_LINE.search(text) is None
