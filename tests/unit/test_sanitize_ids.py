"""The terminal sanitiser and the opaque-id rules."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hermes_task.core.sanitize import check_id, clean, clean_line, path_segment
from hermes_task.failures import Code, HermesError

HOSTILE = [
    ("OSC 52 clipboard", "\x1b]52;c;cGF5bG9hZA==\x07", "^[]52;c;cGF5bG9hZA==^G"),
    ("OSC 8 link", "\x1b]8;;http://evil\x1b\\click\x1b]8;;\x1b\\", "^[]8;;http://evil^[\\click^[]8;;^[\\"),
    ("CSI clear", "\x1b[2J\x1b[H", "^[[2J^[[H"),
    ("8-bit CSI", "\x9b31mred", "<U+009B>31mred"),
    ("DCS", "\x1bP1$qm\x1b\\", "^[P1$qm^[\\"),
    ("bidi override", "abc\u202edcba", "abc<U+202E>dcba"),
    ("isolate", "\u2066x\u2069", "<U+2066>x<U+2069>"),
    ("carriage return", "ok\rFAKE", "ok^MFAKE"),
    ("BEL and DEL", "\x07\x7f", "^G^?"),
    ("NUL", "a\x00b", "a^@b"),
]


@pytest.mark.parametrize(("what", "raw", "expected"), HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_sequences_become_visible_text(what: str, raw: str, expected: str) -> None:
    assert clean(raw) == expected


def test_newlines_and_tabs_survive_clean_but_not_clean_line() -> None:
    assert clean("a\n\tb") == "a\n\tb"
    assert clean_line("a\n\tb") == "a  b"


@given(st.text())
def test_clean_output_has_no_control_or_bidi_characters(text: str) -> None:
    out = clean(text)
    for ch in out:
        code = ord(ch)
        assert ch in "\n\t" or not (code < 0x20 or 0x7F <= code <= 0x9F)
        assert not 0x202A <= code <= 0x202E
        assert not 0x2066 <= code <= 0x2069
    assert clean(out) == out  # idempotent


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("", "empty"),
        (".", "'.'"),
        ("..", "'.'"),
        (" abc", "whitespace"),
        ("abc\n", "whitespace"),
        ("ab\x1bc", "control"),
        ("ab\u202ec", "control"),
        ("x" * 513, "512"),
        ("😀" * 257, "512"),  # 514 UTF-16 units
    ],
)
def test_invalid_ids_are_rejected_not_repaired(value: str, reason: str) -> None:
    with pytest.raises(HermesError) as info:
        check_id(value)
    assert info.value.code is Code.INVALID_ID
    assert reason in info.value.detail


@pytest.mark.parametrize("value", ["20261130_163400_1f2d7b", "a/b", "a b", "%2F", "x" * 512, "😀" * 256, "é"])
def test_valid_ids_are_accepted_unchanged(value: str) -> None:
    assert check_id(value) == value


def test_path_segments_leave_nothing_unescaped() -> None:
    assert path_segment(check_id("a/b?c#d%e f")) == "a%2Fb%3Fc%23d%25e%20f"
    assert path_segment(check_id("..a")) == "..a"
