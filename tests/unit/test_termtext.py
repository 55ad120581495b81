"""Recorded text reaches a terminal without escapes: a table of what hostile records carry
(OSC 52, OSC 0/2, CSI, C1, bidi controls) and properties over any text."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forgeflare._termtext import for_terminal

TABLE = [
    ("plain text, tabs\tand\nnewlines", "plain text, tabs\tand\nnewlines"),
    ("clip \x1b]52;c;cm0gLXJmIH4=\x07board", "clip board"),
    ("clip \x1b]52;c;cm0gLXJmIH4=\x1b\\board", "clip board"),
    ("title \x1b]0;pwned\x07here", "title here"),
    ("title \x1b]2;pwned\x1b\\here", "title here"),
    ("unterminated \x1b]52;c;cm0=", "unterminated "),
    ("link \x1b]8;;http://evil.example\x1b\\text\x1b]8;;\x1b\\", "link text"),
    ("\x1b[31mred\x1b[0m", "red"),
    ("erase\x1b[2K\x1b[1A\x1b[Gline", "eraseline"),
    ("private \x1b[?1049h mode", "private  mode"),
    ("C1 csi \x9b31mred", "C1 csi red"),
    ("C1 osc \x9d0;title\x9cafter", "C1 osc after"),
    ("dcs \x1bPq#0;2;0;0;0\x1b\\after", "dcs after"),
    ("keypad \x1b=on", "keypad on"),
    ("charset \x1b(0x", "charset x"),
    ("lone escape at end \x1b", "lone escape at end "),
    ("over\rprint", "overprint"),
    ("windows\r\nline", "windows\nline"),
    ("bell\x07 backspace\x08 nul\x00 del\x7f", "bell backspace nul del"),
    ("gate: \u202epytest\u202c", "gate: <U+202E>pytest<U+202C>"),
    ("isolate \u2066x\u2067y\u2068z\u2069", "isolate <U+2066>x<U+2067>y<U+2068>z<U+2069>"),
    ("marks \u200e\u200f\u061c", "marks <U+200E><U+200F><U+061C>"),
    ("unicode stays: héllo — ∞ ✓ 日本", "unicode stays: héllo — ∞ ✓ 日本"),
]


@pytest.mark.parametrize(("raw", "shown"), TABLE)
def test_table(raw: str, shown: str) -> None:
    assert for_terminal(raw) == shown


_UNSAFE = {chr(c) for c in [*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0)]}
_UNSAFE |= set("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_HOSTILE = st.text(
    alphabet=st.sampled_from(
        [
            "a",
            " ",
            "\n",
            "\t",
            "\x1b",
            "[",
            "]",
            "\\",
            "\x07",
            "\x9b",
            "\x9c",
            "\x9d",
            "\r",
            "0",
            ";",
            "5",
            "2",
            "m",
            "P",
            "\u202e",
            "\u2066",
            "é",
        ]
    ),
    max_size=60,
)


@given(_HOSTILE)
def test_nothing_unsafe_survives(text: str) -> None:
    assert not set(for_terminal(text)) & _UNSAFE


@given(_HOSTILE)
def test_idempotent(text: str) -> None:
    once = for_terminal(text)
    assert for_terminal(once) == once


@given(st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E) | st.just("\n")))
def test_printable_text_is_unchanged(text: str) -> None:
    assert for_terminal(text) == text
