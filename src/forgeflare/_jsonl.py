"""Reading JSON Lines written by forgeflare (events, records): whole objects, rest skipped."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["json_objects"]


def json_objects(text: str | bytes) -> list[dict[str, Any]]:
    """The JSON objects of ``text``, one per line; a line that is not one (a torn last
    write, a blank line, a list) is skipped rather than failing the whole read."""
    out = []
    for line in text.splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            out.append(value)
    return out
