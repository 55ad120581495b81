"""Reading JSON Lines written by forgeflare (events, records): whole objects, rest skipped."""

from __future__ import annotations

from typing import Any

from forgeflare.disk._damaged import loads

__all__ = ["json_objects"]


def json_objects(text: str | bytes) -> list[dict[str, Any]]:
    """The JSON objects of ``text``, one per line; a line that is not one (a torn last
    write, a blank line, a list, bytes that are not UTF-8) is skipped rather than failing the
    whole read; lone surrogates become U+FFFD."""
    out = []
    for line in text.splitlines():
        try:
            value = loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            out.append(value)
    return out
