"""The quick Stop of a running loop whose final message claims nothing: the next iteration,
exactly as :func:`~._machine.transition` answers it, from the checked plain data of the state
file (:mod:`._rawstate`) and the transcript's last turn (:mod:`._tail`); ``None`` for anything
else (see :mod:`._quick`)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from forgeflare._clock import utc_timestamp
from forgeflare._completion import BLOCKED_TAG, SIGNALS
from forgeflare.stophook._continuation import continuation, continue_output
from forgeflare.stophook._errors import StateLockTimeout
from forgeflare.stophook._rawstate import STALE_AFTER, StateLock, read_record, write_state_text
from forgeflare.stophook._stopio import Quick, allow_line, session_of
from forgeflare.stophook._tail import final_fields, settled
from forgeflare.stophook._where import lock_file

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only (mypy treats any TYPE_CHECKING as true)
    from typing import Any

__all__ = ["next_iteration"]

_TAGS = frozenset({BLOCKED_TAG, *(tag for tags in SIGNALS.values() for tag in tags)})
"""Every tag that can end, or park, a frame of any mode: a message holding none of them
(not even inside code, where they would not count) claims nothing and asks nothing."""


def next_iteration(state: str, payload: dict[str, Any], now: datetime | None) -> Quick | None:
    """The hook's answer for the loop in ``state`` when it is the next iteration, else ``None``."""
    try:
        with StateLock(lock_file(state)):
            return _next_iteration(state, payload, now or datetime.now(UTC))
    except StateLockTimeout as exc:
        return 0, "", allow_line(f"{exc}; stop allowed")


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
    return 0, continue_output(reason), ""


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
