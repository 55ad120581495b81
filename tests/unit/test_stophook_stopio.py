"""The hook process's words: an allowed stop's one line, and the session a Stop names (pure)."""

from __future__ import annotations

import pytest

from forgeflare.stophook._stopio import PREFIX, allow_line, session_of


@pytest.mark.parametrize(
    ("note", "line"),
    [
        ("", ""),
        ("no loop here", f"{PREFIX}no loop here\n"),
        ("/tmp/a\nb.jsonl: missing", f"{PREFIX}/tmp/a\\nb.jsonl: missing\n"),
        ("a\r\nb", f"{PREFIX}a\\r\\nb\n"),
    ],
)
def test_an_allowed_stop_is_one_line_or_none(note: str, line: str) -> None:
    assert allow_line(note) == line
    assert line.count("\n") == (1 if note else 0)


@pytest.mark.parametrize(
    ("payload", "session"),
    [
        ({"session_id": "abc"}, "abc"),
        ({"session_id": ""}, None),
        ({"session_id": 7}, None),
        ({"session_id": None}, None),
        ({}, None),
    ],
)
def test_the_session_of_a_stop(payload: dict[str, object], session: str | None) -> None:
    assert session_of(payload) == session
