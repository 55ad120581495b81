"""Counts in words (``1 commit``, ``2 commits``) and the words that say yes or no."""

from __future__ import annotations

import pytest

from forgeflare._words import FALSE_WORDS, TRUE_WORDS, plural


@pytest.mark.parametrize(
    ("n", "shown"), [(0, "0 commits"), (1, "1 commit"), (2, "2 commits"), (-1, "-1 commits")]
)
def test_plural(n: int, shown: str) -> None:
    assert plural(n, "commit") == shown


def test_yes_and_no_words_are_lower_case_and_never_both() -> None:
    assert {"1", "true", "yes", "on"} == TRUE_WORDS
    assert {"0", "false", "no", "off"} == FALSE_WORDS
    assert not TRUE_WORDS & FALSE_WORDS
    assert all(word == word.strip().lower() for word in TRUE_WORDS | FALSE_WORDS)
