"""The quick Stop: the two Stops that happen thousands of times a day, decided without loading
the state machine, ``typing`` or ``pathlib``.

- **No loop in the project** (every Stop of every session anywhere else): the stop is allowed,
  silently, or with one line when the project carries a 0.3 state file (never acted on).
- **A running loop whose final message claims nothing**: the next iteration, blocked with the
  continuation, exactly as :func:`~._machine.transition` answers it (a property test holds the
  two equal on generated states and messages).

Anything else (a tag in the message, a parked, stale, finished or corrupted state, another
session's frame, refused claims on record, a transcript that does not hold the turn's final
message yet, input that needs ``_damaged``) returns ``None``, and the full hook (``_hook``)
decides. So this module can only be faster than the full hook, never different.
"""

from __future__ import annotations

import json
import os

from forgeflare._clock import utc_timestamp
from forgeflare._completion import BLOCKED_TAG, SIGNALS
from forgeflare.stophook._continuation import continuation
from forgeflare.stophook._errors import StateLockTimeout
from forgeflare.stophook._rawstate import STALE_AFTER, StateLock, read_record, write_state_text
from forgeflare.stophook._tail import final_fields, settled
from forgeflare.stophook._where import (
    DISABLE_FILE,
    legacy_files,
    legacy_note,
    lock_file,
    project_of,
    state_file,
)

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only (mypy treats any TYPE_CHECKING as true)
    from collections.abc import Mapping
    from datetime import datetime
    from typing import Any

__all__ = ["DISABLE_ENV", "PREFIX", "allow_line", "quick_stop", "session_of"]

DISABLE_ENV = "IDLE_LOOP_DISABLE"
PREFIX = "forgeflare stop-hook: "
_TAGS = frozenset({BLOCKED_TAG, *(tag for tags in SIGNALS.values() for tag in tags)})
"""Every tag that can end, or park, a frame of any mode: a message holding none of them
(not even inside code, where they would not count) claims nothing and asks nothing."""

Quick = tuple[int, str, str]
"""``(exit status, stdout, stderr)`` of the hook process."""


def allow_line(note: str) -> str:
    """The hook's one stderr line for an allowed stop (``""`` without a note), kept to one
    line whatever the note quotes (a transcript path may hold a newline)."""
    note = note.replace("\r", "\\r").replace("\n", "\\n")
    return f"{PREFIX}{note}\n" if note else ""


def quick_stop(
    stdin_text: str, *, environ: Mapping[str, str], cwd: str, now: datetime
) -> Quick | None:
    """The hook's answer to this Stop when it is one of the two quick ones, else ``None``."""
    if environ.get(DISABLE_ENV) == "1":
        return 0, "", ""
    if "\\u" in stdin_text:
        return None  # an escape that may spell a lone surrogate: _damaged's reading
    try:
        payload = json.loads(stdin_text) if stdin_text.strip() else {}
    except (ValueError, RecursionError):
        return None
    if not isinstance(payload, dict) or payload.get("hook_event_name", "Stop") != "Stop":
        return None
    project = project_of(payload, cwd)
    if os.path.exists(os.path.join(project, DISABLE_FILE)):
        return 0, "", ""
    state = state_file(project)
    if not os.path.exists(state):
        # A state file in the project is a clone's, maybe a hostile one: never acted on.
        old = legacy_files(project)
        return 0, "", allow_line(legacy_note(old[0])) if old else ""
    try:
        with StateLock(lock_file(state)):
            return _next_iteration(state, payload, now)
    except StateLockTimeout as exc:
        return 0, "", allow_line(f"{exc}; stop allowed")


def session_of(payload: Mapping[str, object]) -> str | None:
    """The Stop's Claude Code session (``None``: an older client, a test)."""
    session_id = payload.get("session_id")
    return session_id if isinstance(session_id, str) and session_id else None


def _next_iteration(state: str, payload: dict[str, Any], now: datetime) -> Quick | None:
    """Under the lock: block with the next iteration when the full hook would, else ``None``."""
    try:
        with open(state, encoding="utf-8") as fh:
            raw = json.load(fh)
    except (OSError, ValueError, RecursionError):
        return None
    checked = read_record(raw)
    if isinstance(checked, str):
        return None
    event, _, updated_at, frames = checked
    if event != "STATE" or not frames or any(frame["claims"] for frame in frames):
        return None
    top, session_id = frames[-1], session_of(payload)
    if now - updated_at > STALE_AFTER or top["question"] or top["iter"] >= top["max"]:
        return None
    if session_id and top["session_id"] and top["session_id"] != session_id:
        return None
    judged = _final_text(payload, top["judged"])
    if judged is None or any(tag in judged[0] for tag in _TAGS):
        return None
    entry = raw["stack"][-1]
    entry["iter"] = top["iter"] + 1
    if session_id and not top["session_id"]:
        entry["session_id"] = session_id
    if judged[1]:
        entry["judged"] = judged[1]
    raw["updated_at"] = utc_timestamp(now)
    write_state_text(state, json.dumps(raw, indent=2, ensure_ascii=False) + "\n")
    reason = continuation(top["iter"] + 1, top["max"], top["mode"], top["prompt"])
    return 2, json.dumps({"decision": "block", "reason": reason}) + "\n", reason + "\n"


def _final_text(payload: dict[str, Any], judged_before: str) -> tuple[str, str | None] | None:
    """The text the full hook would judge and its message id, when one read settles it."""
    message = payload.get("last_assistant_message")
    sent = message if isinstance(message, str) and message.strip() else None
    transcript = payload.get("transcript_path")
    if not isinstance(transcript, str) or not transcript:
        return None if sent is None else (sent, None)
    try:
        with open(transcript, "rb") as fh:
            final = final_fields(fh)
    except (OSError, ValueError):
        return None  # missing (not written yet) or unreadable: the full hook waits or says why
    if final is None or not settled(final, sent, judged_before):
        return None
    return final[1], final[0]
