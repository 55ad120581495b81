"""Words forgeflare reads and writes: counts (``1 commit``, ``2 commits``, never ``1 commits``)
and the words a setting or an environment variable says yes or no with."""

from __future__ import annotations

__all__ = ["FALSE_WORDS", "TRUE_WORDS", "plural"]

TRUE_WORDS = frozenset({"1", "true", "yes", "on"})
"""What means yes (any case, around spaces): a boolean setting, ``FORGEFLARE_TRUST``."""

FALSE_WORDS = frozenset({"0", "false", "no", "off"})
"""What means no in a boolean setting."""


def plural(n: int, word: str) -> str:
    """``n`` and ``word``, with an ``s`` unless ``n`` is 1."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"
