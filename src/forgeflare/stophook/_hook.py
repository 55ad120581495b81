"""The hook itself: Claude Code's Stop JSON in, an exit status with stdout/stderr out.

Everything here is the thin shell around :func:`transition`: escape hatches, the stdin
payload, the text the completion rule judges (see ``_completion``), the Stop's session, the
locked state. Every failure fails open (exit 0 and one
note on stderr): a broken hook must never trap a user in a session. ``stop_hook_active`` is
deliberately not honoured: blocking repeatedly is the point of a loop, and every frame has
its iteration cap and the 2-hour staleness limit.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import NamedTuple

from forgeflare._damaged import loads
from forgeflare.stophook._completion import judged_text
from forgeflare.stophook._errors import StopHookError
from forgeflare.stophook._machine import Phase, StopDecision, transition
from forgeflare.stophook._statefile import LOCK_TIMEOUT_S, any_state, open_state
from forgeflare.stophook._transcript import final_message

__all__ = ["DISABLE_ENV", "DISABLE_FILE", "StopHookOutcome", "run_stop_hook"]

DISABLE_ENV = "IDLE_LOOP_DISABLE"
DISABLE_FILE = ".idle-disabled"
_PREFIX = "forgeflare stop-hook: "


class StopHookOutcome(NamedTuple):
    """What the hook process prints and how it exits."""

    exit_code: int = 0
    stdout: str = ""
    stderr: str = ""


def _allow(note: str = "") -> StopHookOutcome:
    # One line whatever the note quotes (a transcript path may hold a newline).
    note = note.replace("\r", "\\r").replace("\n", "\\n")
    return StopHookOutcome(0, "", f"{_PREFIX}{note}\n" if note else "")


def _outcome(decision: StopDecision) -> StopHookOutcome:
    if decision.block:
        payload = json.dumps({"decision": "block", "reason": decision.reason})
        return StopHookOutcome(decision.exit_code, payload + "\n", decision.reason + "\n")
    return _allow(decision.note)


def _project_dir(payload: Mapping[str, object], cwd: Path) -> Path:
    claimed = payload.get("cwd")
    if isinstance(claimed, str) and claimed and "\0" not in claimed:
        # A relative cwd is relative to the hook's own working directory.
        candidate = cwd / claimed
        if candidate.is_dir():
            return candidate
    return cwd


def _last_text(payload: Mapping[str, object]) -> tuple[str | None, str]:
    """The text the completion rule judges (``None`` if unknown) and a note explaining a ``None``.

    The final assistant message of the turn from the transcript, all its text blocks; Claude
    Code's ``last_assistant_message`` (its last text block only) when the transcript lags.
    """
    message = payload.get("last_assistant_message")
    sent = message if isinstance(message, str) else None
    transcript = payload.get("transcript_path")
    if not isinstance(transcript, str) or not transcript:
        if sent is None or not sent.strip():
            return None, "no last_assistant_message and no transcript_path in the Stop input"
        return sent, ""
    try:
        final = final_message(Path(transcript))
    except StopHookError as exc:
        if sent is not None and sent.strip():
            return sent, ""
        return None, str(exc)
    text = judged_text(final, sent)
    if text is None:
        return None, f"{transcript}: no assistant message in the last turn"
    return text, ""


def _session(payload: Mapping[str, object]) -> str | None:
    session_id = payload.get("session_id")
    return session_id if isinstance(session_id, str) and session_id else None


def run_stop_hook(
    stdin_text: str,
    *,
    environ: Mapping[str, str],
    cwd: Path,
    now: datetime,
    lock_timeout: float = LOCK_TIMEOUT_S,
) -> StopHookOutcome:
    """Handle one Stop event. Never raises for bad input or state: it fails open.

    ``cwd`` is the project when the Stop input names no existing ``cwd``; ``now`` must be
    timezone-aware.
    """
    if environ.get(DISABLE_ENV) == "1":
        return StopHookOutcome()
    try:
        payload = loads(stdin_text) if stdin_text.strip() else {}
    except ValueError as exc:
        return _allow(f"stdin is not valid JSON ({exc}); stop allowed")
    if not isinstance(payload, dict):
        return _allow("stdin is not a JSON object; stop allowed")
    event = payload.get("hook_event_name", "Stop")
    if event != "Stop":
        return _allow(f"ignoring hook event {event!r} (only Stop drives loops)")
    project = _project_dir(payload, cwd)
    if (project / DISABLE_FILE).exists() or not any_state(project):
        return StopHookOutcome()
    # Read the transcript before taking the lock: it can be the slowest step.
    text, text_note = _last_text(payload)
    try:
        with open_state(project, timeout=lock_timeout) as session:
            if session is None:
                return StopHookOutcome()
            new_state, decision = transition(session.state, text, now, _session(payload))
            session.commit(new_state)
    except (StopHookError, OSError, ValueError) as exc:
        return _allow(f"{exc}; stop allowed")
    if text is None and decision.phase is Phase.ACTIVE:
        return _allow(f"cannot read the last assistant message: {text_note}; stop allowed")
    return _outcome(decision)
