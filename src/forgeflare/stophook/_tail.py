"""The last turn of a Claude Code transcript, read backwards from the end, as plain data.

A transcript is JSONL that only grows; the answer is near its end. The file is read in
blocks seeking back from EOF and lines are parsed from the last one backwards, so the cost is
proportional to the last turn, not to the file (a 100 MB transcript takes milliseconds).
Claude Code writes one line per content block of a message, sharing the message ``id``.
:mod:`._transcript` gives the typed :class:`~._transcript.FinalMessage`; the quick Stop uses
the tuple, without ``typing``.
"""

from __future__ import annotations

import json
import os

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only (mypy treats any TYPE_CHECKING as true)
    from collections.abc import Iterator
    from typing import Any, BinaryIO

__all__ = [
    "BLOCK_SIZE",
    "MAX_LINE_BYTES",
    "entry_role",
    "final_fields",
    "lines_backwards",
    "settled",
]

BLOCK_SIZE = 1 << 16
MAX_LINE_BYTES = 64 << 20
"""Longer lines (giant tool results) are skipped unparsed; no assistant text is that long."""

Final = tuple["str | None", str, str, "str | None"]
"""``(message id, all text blocks, the last text block, stop_reason)``."""


def lines_backwards(
    fh: BinaryIO, *, block_size: int = BLOCK_SIZE, max_line: int = MAX_LINE_BYTES
) -> Iterator[bytes]:
    """The file's non-empty lines, last first, without reading more than needed."""
    pos = fh.seek(0, os.SEEK_END)
    tail: list[bytes] = []  # pieces of the line being assembled, rightmost first
    tail_len = 0
    skipping = False  # the line being assembled is over ``max_line``: drop it
    while pos > 0:
        size = min(block_size, pos)
        pos -= size
        fh.seek(pos)
        chunk = fh.read(size)
        newline = chunk.rfind(b"\n")
        if newline < 0:
            if not skipping:
                tail.append(chunk)
                tail_len += len(chunk)
                if tail_len > max_line:
                    tail, tail_len, skipping = [], 0, True
            continue
        if not skipping:
            line = chunk[newline + 1 :] + b"".join(reversed(tail))
            if line.strip():
                yield line
        skipping = False
        parts = chunk[:newline].split(b"\n")
        for part in reversed(parts[1:]):
            if part.strip():
                yield part
        tail, tail_len = [parts[0]], len(parts[0])
    if not skipping:
        line = b"".join(reversed(tail))
        if line.strip():
            yield line


_TURN_TYPES = ("user", "assistant")


def entry_role(entry: Any) -> str | None:
    """``"user"``, ``"assistant"`` or ``None``: the turn a transcript entry belongs to, by its
    ``type`` before its message's role.

    A Claude Code entry (one with a ``message`` and a ``type``) is a turn only when its type is
    ``user`` or ``assistant``: from 2.1.315 entries of other types (``api-request-blob``,
    ``attachment`` …) carry a user- or system-role ``message`` too, and one written after the
    final message must not pass for the prompt of a new turn. A plain message (no ``message``
    field) speaks by its ``role``.
    """
    message = entry.get("message")
    kind = entry.get("type")
    if isinstance(message, dict) and kind is not None:
        return kind if kind in _TURN_TYPES else None
    role = (message if isinstance(message, dict) else entry).get("role")
    if role in _TURN_TYPES:
        return str(role)
    return kind if kind in _TURN_TYPES else None


def _content_blocks(message: Any) -> list[Any]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return content if isinstance(content, list) else []


def _ends_turn_backwards(message: Any) -> bool:
    """Whether a user entry starts the turn (a prompt or hook feedback), not a tool result."""
    blocks = _content_blocks(message)
    return not blocks or any(
        not (isinstance(block, dict) and block.get("type") == "tool_result") for block in blocks
    )


def final_fields(fh: BinaryIO) -> Final | None:
    """The final assistant message of the last turn (see ``_transcript.final_message``)."""
    found = False
    found_id: str | None = None
    stop_reason: str | None = None
    texts: list[str] = []  # text blocks of the final message, last first
    for line in lines_backwards(fh):
        if b"assistant" not in line and (b"user" not in line or (found and b"tool_result" in line)):
            # Cheap filter: once found, only assistant entries and the prompt that started the
            # turn can matter (tool results may sit between blocks of one message).
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # a torn or foreign line: skip it, keep looking
        if not isinstance(entry, dict) or entry.get("isSidechain") is True:
            continue
        message: Any = entry.get("message")
        if not isinstance(message, dict):
            message = entry
        role = entry_role(entry)
        if role == "user":
            if _ends_turn_backwards(message):
                if not found:
                    return None
                break  # the turn starts here: no earlier block of the final message
            continue
        if role != "assistant":
            continue
        raw_id = message.get("id")
        message_id = raw_id if isinstance(raw_id, str) else None
        if found and (message_id is None or message_id != found_id):
            break  # an earlier message: the final one is complete
        if not found:
            raw_reason = message.get("stop_reason")
            stop_reason = raw_reason if isinstance(raw_reason, str) else None
            if stop_reason is None and any(
                isinstance(b, dict) and b.get("type") == "tool_use"
                for b in _content_blocks(message)
            ):
                stop_reason = "tool_use"  # its last block calls a tool: the turn goes on
        found, found_id = True, message_id
        blocks = [
            block["text"]
            for block in _content_blocks(message)
            if isinstance(block, dict)
            and block.get("type") == "text"
            and isinstance(block.get("text"), str)
        ]
        texts.extend(reversed(blocks))
    if not found:
        return None
    ordered = list(reversed(texts))
    return found_id, "\n".join(ordered), ordered[-1] if ordered else "", stop_reason


def settled(final: Final | None, sent: str | None, judged: str) -> bool:
    """Does the transcript already hold the turn's final message?

    ``sent`` is Claude Code's ``last_assistant_message`` (``None`` or blank: absent),
    ``judged`` the message id judged at the frame's last Stop (``""``: none).
    """
    if final is None:
        return False
    message_id, _, last_text, stop_reason = final
    if stop_reason == "tool_use":
        return False
    if judged and message_id == judged:
        return False
    if sent is not None and sent.strip():
        return last_text.strip() == sent.strip()
    return True
