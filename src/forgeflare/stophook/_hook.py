"""The hook itself: Claude Code's Stop JSON in, an exit status with stdout/stderr out.

Everything here is the thin shell around :func:`transition`: escape hatches, the stdin
payload, the text the completion rule judges (see ``_completion``), the Stop's session, the
locked state. Every failure fails open (exit 0 and one
note on stderr): a broken hook must never trap a user in a session. ``stop_hook_active`` is
deliberately not honoured: blocking repeatedly is the point of a loop, and every frame has
its iteration cap and the 2-hour staleness limit.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from forgeflare.disk import loads
from forgeflare.stophook._continuation import continue_output
from forgeflare.stophook._errors import StopHookError
from forgeflare.stophook._lag import WAIT_ENV, read_settled, wait_seconds
from forgeflare.stophook._machine import (
    Frame,
    LoopRecord,
    Phase,
    Refusal,
    StopDecision,
    StoredState,
    claimed,
    transition,
)
from forgeflare.stophook._statefile import (
    LOCK_TIMEOUT_S,
    any_state,
    legacy_note,
    legacy_states,
    open_state,
)
from forgeflare.stophook._stopio import DISABLE_ENV, allow_line, session_of
from forgeflare.stophook._transcript import final_message, final_message_if_written
from forgeflare.stophook._where import DISABLE_FILE, project_of

if TYPE_CHECKING:  # annotations only: the hook's process loads as little as it can
    from collections.abc import Callable, Mapping
    from datetime import datetime

    from forgeflare.stophook._check import SettingsFor

__all__ = ["DISABLE_ENV", "DISABLE_FILE", "StopHookOutcome", "run_stop_hook"]


class StopHookOutcome(NamedTuple):
    """What the hook process prints and how it exits."""

    exit_code: int = 0
    stdout: str = ""
    stderr: str = ""


def _allow(note: str = "") -> StopHookOutcome:
    return StopHookOutcome(0, "", allow_line(note))


def _outcome(decision: StopDecision) -> StopHookOutcome:
    if decision.block:
        return StopHookOutcome(decision.exit_code, continue_output(decision.reason))
    return _allow(decision.note)


class _Judged(NamedTuple):
    """The text the completion rule judges, where it came from, and why there is none."""

    text: str | None
    """``None``: unknown (see ``unknown`` and ``note``)."""
    message_id: str | None = None
    """The transcript message the text is from (``None``: Claude Code's own text)."""
    note: str = ""
    unknown: bool = False
    """The transcript did not hold the turn's final message in time and Claude Code sent no
    text: the loop goes on rather than end on a guess."""


def _judge(
    payload: Mapping[str, object], judged: str, wait: float, sleep: Callable[[float], None]
) -> _Judged:
    """The final assistant message of the turn from the transcript, all its text blocks, once
    the file holds it (``_lag``); else Claude Code's ``last_assistant_message`` (its last text
    block only); else unknown."""
    message = payload.get("last_assistant_message")
    sent = message if isinstance(message, str) and message.strip() else None
    transcript = payload.get("transcript_path")
    if not isinstance(transcript, str) or not transcript:
        if sent is None:
            return _Judged(None, note="no last_assistant_message and no transcript_path")
        return _Judged(sent)
    path = Path(transcript)
    try:
        reading = read_settled(
            lambda: final_message_if_written(path), sent, judged, wait=wait, sleep=sleep
        )
        if reading.final is None and not reading.settled:
            final_message(path)  # still no file after the wait: say why it cannot be read
    except StopHookError as exc:
        return _Judged(sent) if sent is not None else _Judged(None, note=str(exc))
    if reading.settled and reading.final is not None:
        return _Judged(reading.final.text, reading.final.message_id)
    if sent is not None:
        return _Judged(sent)  # Claude Code's own text of the final message's last block
    waited = round(reading.waited * 1000)
    note = (
        f"{transcript}: the turn's final message is not in the transcript after {waited} ms "
        f"({WAIT_ENV}); continuing the loop"
    )
    return _Judged(None, note=note, unknown=True)


def _judged_before(state: StoredState) -> str:
    """The message id judged at the running frame's last Stop."""
    return state.stack[-1].judged if isinstance(state, LoopRecord) and state.stack else ""


def _runs_here(state: StoredState, session_id: str | None) -> bool:
    """Is the running frame this session's (or not claimed yet)?"""
    if not isinstance(state, LoopRecord) or not state.stack:
        return False
    owner = state.stack[-1].session_id
    return not (owner and session_id and owner != session_id)


def _check(
    state: StoredState,
    claim: Frame,
    text: str,
    project: Path,
    environ: Mapping[str, str],
    settings_for: SettingsFor | None,
) -> tuple[Refusal | None, str]:
    """The evidence for a claim under a frame with a gate or a reviewer (only then: the
    no-claim path never gets here, nor loads ``_check``): why it is refused (``None``: it
    holds), and a note on the reviewer's verdict when it accepted."""
    from forgeflare.stophook._check import check_claim

    record = state if isinstance(state, LoopRecord) else None
    checked = check_claim(
        claim,
        depth=len(record.stack) if record else 1,
        run_id=record.run_id if record else "",
        final_text=text,
        project=project,
        environ=environ,
        settings_for=settings_for,
    )
    review = checked.review
    if checked.refused is None and review is not None:
        cost = "" if review.cost_usd is None else f", ${review.cost_usd:.4f}"
        return None, f"reviewer {review.model}: complete ({review.tokens} tokens{cost})"
    return checked.refused, ""


def run_stop_hook(
    stdin_text: str,
    *,
    environ: Mapping[str, str],
    cwd: Path,
    now: datetime,
    lock_timeout: float = LOCK_TIMEOUT_S,
    sleep: Callable[[float], None] = time.sleep,
    settings_for: SettingsFor | None = None,
) -> StopHookOutcome:
    """Handle one Stop event. Never raises for bad input or state: it fails open.

    ``cwd`` is the project when the Stop input names no existing ``cwd``; ``now`` must be
    timezone-aware; ``sleep`` waits between reads of a lagging transcript; ``settings_for``
    reads the project's ``[security]`` when a claim's gate runs (``None``: the box's
    defaults).
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
    project = Path(project_of(payload, os.fspath(cwd)))
    if (project / DISABLE_FILE).exists():
        return StopHookOutcome()
    if not any_state(project):
        # A state file in the project is a clone's, maybe a hostile one: never acted on.
        old = legacy_states(project)
        return _allow(legacy_note(old[0])) if old else StopHookOutcome()
    try:
        with open_state(project, timeout=lock_timeout) as session:
            if session is None:
                return StopHookOutcome()
            # Under the lock: the frame's last judged message decides whether the file lags.
            mine = _runs_here(session.state, session_of(payload))
            wait = wait_seconds(environ) if mine else 0.0  # another session's loop: no wait
            seen = _judge(payload, _judged_before(session.state), wait, sleep)
            text = "" if seen.unknown else seen.text  # unknown: no tag, one more turn
            claim = claimed(session.state, text) if mine else None
            refused, accepted = None, ""
            if claim is not None and (claim.gate or claim.reviewer):
                refused, accepted = _check(
                    session.state, claim, text or "", project, environ, settings_for
                )
            new_state, decision = transition(
                session.state,
                text,
                now,
                session_of(payload),
                judged=seen.message_id,
                refused=refused,
            )
            session.commit(new_state)
    except (StopHookError, OSError, ValueError) as exc:
        return _allow(f"{exc}; stop allowed")
    if text is None and decision.phase is Phase.ACTIVE and not decision.block:
        return _allow(f"cannot read the last assistant message: {seen.note}; stop allowed")
    if accepted:
        decision = decision._replace(note=f"{decision.note}; {accepted}")
    outcome = _outcome(decision)
    if seen.unknown and decision.block:
        return outcome._replace(stderr=allow_line(seen.note) + outcome.stderr)
    return outcome
