"""The transcript's tail: lines read backwards (hypothesis against a forward split), and an entry's
role decided by its ``type`` before its message's role.

Claude Code 2.1.332's transcripts hold entries of other types than ``user`` and ``assistant``
(shapes below as recorded, trimmed): ``api-request-blob`` entries carry a ``message`` with a
``user`` or ``system`` role, ``attachment`` entries a rendered reminder. One written after the
final message must not pass for the prompt of a new turn (which would hide the message).
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgeflare.stophook import final_message, last_assistant_text
from forgeflare.stophook._tail import entry_role
from forgeflare.stophook._tail import lines_backwards as _lines_backwards

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


@settings(max_examples=50)
@given(
    st.lists(st.binary(max_size=30).map(lambda b: b.replace(b"\n", b"")), max_size=30),
    st.integers(1, 40),
    st.booleans(),
)
def test_backwards_lines_match_forward_split(
    lines: list[bytes], block: int, trailing: bool
) -> None:
    data = b"\n".join(lines) + (b"\n" if trailing else b"")
    expected = [line for line in data.split(b"\n") if line.strip()][::-1]
    got = list(_lines_backwards(io.BytesIO(data), block_size=block, max_line=10**6))
    assert got == expected


@settings(max_examples=50)
@given(
    st.lists(st.binary(max_size=30).map(lambda b: b.replace(b"\n", b"")), max_size=20),
    st.integers(1, 16),
    st.integers(1, 20),
)
def test_backwards_lines_drop_only_overlong_ones(
    lines: list[bytes], block: int, max_line: int
) -> None:
    data = b"\n".join(lines)
    got = list(_lines_backwards(io.BytesIO(data), block_size=block, max_line=max_line))
    short = [line for line in data.split(b"\n") if line.strip() and len(line) <= max_line][::-1]
    # Lines up to max_line always come through; longer ones may be dropped, never altered.
    assert all(line in got for line in short)
    assert all(line in lines for line in got)
