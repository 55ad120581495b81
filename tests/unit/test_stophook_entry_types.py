"""The transcript reader decides by an entry's ``type`` before its message's role.

Claude Code 2.1.332's transcripts hold entries of other types than ``user`` and ``assistant``
(shapes below as recorded, trimmed): ``api-request-blob`` entries carry a ``message`` with a
``user`` or ``system`` role, ``attachment`` entries a rendered reminder. One written after the
final message must not pass for the prompt of a new turn (which would hide the message).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from forgeflare.stophook import final_message, last_assistant_text
from forgeflare.stophook._tail import entry_role

PROMPT = {"type": "user", "message": {"role": "user", "content": "do it"}}
FINAL = {
    "type": "assistant",
    "isSidechain": False,
    "message": {
        "id": "msg_2",
        "type": "message",
        "role": "assistant",
        "content": [{"type": "text", "text": "Done.\n<loop-done>COMPLETE</loop-done>"}],
        "stop_reason": "end_turn",
    },
}
BLOB_USER = {
    "type": "api-request-blob",
    "sessionId": "s",
    "hash": "6f3f",
    "message": {"role": "user", "content": "<system-reminder>\nStop hook feedback:\n…"},
}
BLOB_SYSTEM = {
    "type": "api-request-blob",
    "sessionId": "s",
    "hash": "c4e8",
    "message": {"role": "system", "content": [{"type": "text", "text": "# Environment"}]},
}
ATTACHMENT = {
    "type": "attachment",
    "isSidechain": False,
    "attachment": {"type": "date", "date": "2026-11-28"},
    "rendered": [{"content": "<system-reminder>\nToday's date is 2026-11-28.\n</system-reminder>"}],
    "renderedRole": "user",
}
QUEUE = {"type": "queue-operation", "operation": "enqueue", "content": "do it"}
SUMMARY = {"type": "system", "subtype": "stop_hook_summary", "hookCount": 1, "hookErrors": []}
COST = {"type": "cost-state", "sessionId": "s", "totalCostUSD": 0.0012}
LAST_PROMPT = {"type": "last-prompt", "lastPrompt": "do it", "sessionId": "s"}


@pytest.mark.parametrize(
    ("entry", "role"),
    [
        (PROMPT, "user"),
        (FINAL, "assistant"),
        (BLOB_USER, None),
        (BLOB_SYSTEM, None),
        (ATTACHMENT, None),
        (QUEUE, None),
        (SUMMARY, None),
        (COST, None),
        (LAST_PROMPT, None),
        ({"role": "assistant", "content": "plain"}, "assistant"),  # a plain message
        ({"type": "message", "role": "user", "content": "plain"}, "user"),  # an API message
        ({"type": "assistant"}, "assistant"),
        ({"type": "user", "message": {"role": "assistant", "content": "x"}}, "user"),
    ],
)
def test_entry_role_by_type_before_role(entry: dict[str, Any], role: str | None) -> None:
    assert entry_role(entry) == role


def write(path: Path, entries: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "after",
    [[BLOB_USER], [BLOB_SYSTEM, BLOB_USER], [ATTACHMENT], [SUMMARY, LAST_PROMPT, COST, QUEUE]],
)
def test_new_entry_types_after_the_final_message_do_not_hide_it(
    tmp_path: Path, after: list[dict[str, Any]]
) -> None:
    path = write(tmp_path / "t.jsonl", [QUEUE, PROMPT, BLOB_USER, FINAL, *after])
    final = final_message(path)
    assert final is not None
    assert (final.message_id, final.text) == ("msg_2", "Done.\n<loop-done>COMPLETE</loop-done>")
    assert last_assistant_text(path) == final.text


def test_a_real_prompt_after_the_final_message_still_starts_a_new_turn(tmp_path: Path) -> None:
    """The measure can fail: a ``user`` entry that is not a tool result is a turn's start."""
    path = write(tmp_path / "t.jsonl", [PROMPT, FINAL, BLOB_USER, PROMPT])
    assert final_message(path) is None
