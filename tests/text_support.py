"""Reading what a command printed in tests: the expected parts it lacks, all at once."""

from __future__ import annotations

__all__ = ["missing"]


def missing(text: str, *parts: str) -> list[str]:
    """The ``parts`` that ``text`` does not contain, in order: ``assert not missing(out, ...)``
    names every absent part in one failure instead of stopping at the first."""
    return [part for part in parts if part not in text]
