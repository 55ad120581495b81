"""The final assistant message of a Claude Code transcript, read backwards from the end.

A transcript is JSONL that only grows; the answer is near its end. The file is read in
blocks seeking back from EOF and lines are parsed from the last one backwards, so the cost is
proportional to what follows the answer, not to the file (a 100 MB transcript takes
milliseconds). Claude Code writes one line per content block of a message, sharing the
message ``id``.

:func:`final_message` is what the hook judges (the rule is in ``_completion``): the last
message of the last turn, all its text blocks. :func:`last_assistant_text` is the older,
looser reading kept for the public API: the last assistant message that has text, skipping
tool-only messages and tool results after it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple, TypeVar

from forgeflare.stophook._errors import TranscriptError
from forgeflare.stophook._tail import entry_role, final_fields, lines_backwards

__all__ = [
    "FinalMessage",
    "assistant_text_of",
    "final_message",
    "final_message_if_written",
    "last_assistant_text",
]

_T = TypeVar("_T")


def assistant_text_of(entry: object) -> tuple[str | None, str] | None:
    """``(message id, text)`` of an assistant transcript entry; ``None`` if it is not one.

    Accepts Claude Code entries (``{"type": "assistant", "message": {...}}``) and plain
    messages (``{"role": "assistant", "content": ...}``). Text is ``""`` for tool-only ones.
    """
    if not isinstance(entry, dict) or entry.get("isSidechain") is True:
        return None
    message: Any = entry.get("message")
    if not isinstance(message, dict):
        message = entry
    if entry_role(entry) != "assistant":
        return None
    content = message.get("content")
    texts: list[str] = []
    if isinstance(content, str):
        texts.append(content)
    elif isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text":
                text = block.get("text")
                if isinstance(text, str):
                    texts.append(text)
    message_id = message.get("id")
    return (message_id if isinstance(message_id, str) else None), "\n".join(texts)


def _entries_backwards(fh: BinaryIO) -> Iterator[tuple[str | None, str] | None]:
    for line in lines_backwards(fh):
        if b"assistant" not in line:  # cheap filter: most lines are tool results
            yield None
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            yield None  # a torn or foreign line: skip it, keep looking
            continue
        yield assistant_text_of(entry)


def _read(path: Path, read: Callable[[BinaryIO], _T]) -> _T:
    """``read`` the open transcript; :class:`TranscriptError` when it cannot be opened or read."""
    try:
        with open(path, "rb") as fh:
            return read(fh)
    except (OSError, ValueError) as exc:  # ValueError: a path with a NUL byte
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise TranscriptError(f"{path}: cannot read transcript: {reason}") from exc


def last_assistant_text(path: Path) -> str:
    """The text of the last assistant message that has text, ``""`` when there is none.

    Raises :class:`TranscriptError` when the file cannot be opened or read.
    """
    return _read(path, _last_assistant_text)


def _last_assistant_text(fh: BinaryIO) -> str:
    found: list[str] = []
    found_id: str | None = None
    for item in _entries_backwards(fh):
        if found:
            # Earlier blocks of the same message (same id) belong to its text.
            if item is None or found_id is None or item[0] != found_id:
                break
            if item[1].strip():
                found.append(item[1])
            continue
        if item is not None and item[1].strip():
            found.append(item[1])
            found_id = item[0]
    return "\n".join(reversed(found))


class FinalMessage(NamedTuple):
    """The final assistant message of the turn: all its text blocks, and the last one alone.

    ``last_text`` is what Claude Code sends as ``last_assistant_message``; comparing the two
    tells whether the transcript already holds the message the Stop is about.
    """

    message_id: str | None
    text: str
    last_text: str
    stop_reason: str | None = None
    """The message's ``stop_reason`` (every block line carries the message's final one):
    ``tool_use`` means it called a tool, so it is never the turn's final message."""


def final_message(path: Path) -> FinalMessage | None:
    """The final assistant message of the transcript's last turn; ``None`` if it has none yet.

    Reading goes backwards from the end. The final message is the last main-chain assistant
    entry; earlier entries with its ``message.id`` are its earlier blocks (tool results may
    sit between them). Reading stops at an assistant entry of another message, or at a user
    entry that is not a tool result (a prompt, ``Stop hook feedback``): the turn starts
    there, so a turn whose message is not written yet gives ``None`` (the transcript lags).

    Raises :class:`TranscriptError` when the file cannot be opened or read.
    """
    return _read(path, _final_message)


def final_message_if_written(path: Path) -> FinalMessage | None:
    """:func:`final_message`, or ``None`` while the file does not exist yet: Claude Code may
    run the Stop hook of a session's first turn before it has created the transcript."""
    if not os.path.exists(path):  # os.path: False (not ValueError) for a path with a NUL
        return None
    return final_message(path)


def _final_message(fh: BinaryIO) -> FinalMessage | None:
    found = final_fields(fh)
    return None if found is None else FinalMessage(*found)
