"""The common part of every JSON event stream reader (Claude Code, Codex, a new backend's).

:class:`JsonStreamReader` takes an agent's output line by line: blank lines are skipped, a line
that is not a JSON object is shown as text, and each event goes to :meth:`~JsonStreamReader.event`,
which a backend's reader overrides (unknown types are counted, never fatal).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

__all__ = ["JsonStreamReader", "as_int", "json_event", "tool_line"]

_TOOL_ARG_KEYS = ("command", "file_path", "path", "pattern", "url", "query", "description")


def tool_line(name: str, tool_input: object, width: int = 100) -> str:
    """``▸ Bash  pytest -q``: a tool call in one line, its main argument shortened."""
    arg = ""
    if isinstance(tool_input, dict):
        for key in _TOOL_ARG_KEYS:
            value = tool_input.get(key)
            if isinstance(value, str) and value:
                arg = value
                break
        else:
            arg = json.dumps(tool_input, ensure_ascii=False)
    arg = " ".join(arg.split())
    if len(arg) > width:
        arg = arg[: width - 1] + "…"
    return f"▸ {name}  {arg}".rstrip()


def json_event(line: str) -> dict[str, Any] | str | None:
    """One line of a JSON event stream: the event, the stripped text when it is not a JSON
    object (shown as it is), or ``None`` for a blank line."""
    stripped = line.strip()
    if not stripped:
        return None
    try:
        event = json.loads(stripped)
    except ValueError:
        return stripped
    return event if isinstance(event, dict) else stripped


def as_int(value: object) -> int:
    """An int from a stream's JSON, else 0 (booleans are not counts)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


@dataclass
class JsonStreamReader:
    """The common part of a JSON event stream reader: blank lines, text lines, unknown types."""

    unknown_lines: int = 0
    not_json_lines: int = 0

    def feed(self, line: str) -> list[str]:
        """Take one line of output; return the lines to show for it (maybe none)."""
        event = json_event(line)
        if event is None:
            return []
        if isinstance(event, str):
            self.not_json_lines += 1
            return [event]
        return self.event(event)

    def event(self, event: dict[str, Any]) -> list[str]:
        """One JSON event; the lines to show for it."""
        self.unknown_lines += 1
        return []
