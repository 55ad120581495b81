"""Managing loops from the command line: start (push a frame), status, cancel."""

from __future__ import annotations

import contextlib
import os
from datetime import datetime
from pathlib import Path

from forgeflare._clock import format_wait, utc_timestamp
from forgeflare.disk import atomic_write_text
from forgeflare.stophook._answer import parked_lines
from forgeflare.stophook._claims import describe_claim
from forgeflare.stophook._errors import LoopStateError
from forgeflare.stophook._machine import (
    STALE_AFTER,
    Corrupt,
    Frame,
    LoopRecord,
    StoredState,
    push_frame,
)
from forgeflare.stophook._signals import SIGNALS, Mode
from forgeflare.stophook._statefile import open_json_state, open_state, render_json_state

__all__ = ["cancel_loops", "describe_state", "loop_status", "start_loop"]


def start_loop(
    project_dir: Path,
    *,
    mode: Mode,
    max_iterations: int,
    prompt: str,
    now: datetime,
    gate: str = "",
    stall_after: int = 4,
    reviewer: str = "",
) -> LoopRecord:
    """Push a new frame (iteration 1) onto the project's JSON loop state and return the state.

    The state is the user's (``_statefile.state_path``), never a file in the project.
    Raises :class:`LoopStateError` when it is corrupted (``cancel`` clears it). With a
    ``reviewer`` the frame records the commit it starts at (its diff is the work).
    """
    if max_iterations < 1:
        raise LoopStateError(f"--max-iterations must be at least 1, got {max_iterations}")
    with open_json_state(project_dir) as (path, session):
        state: StoredState = None if session is None else session.state
        if isinstance(state, Corrupt):
            raise LoopStateError(
                f"{path}: corrupted loop state ({state.why}); "
                "run 'forgeflare stop-hook cancel' to remove it"
            )
        frame = Frame(
            mode=mode,
            iter=1,
            max=max_iterations,
            prompt=prompt,
            gate=gate,
            stall_after=stall_after if gate else 0,  # the stall rule measures the gate
            reviewer=reviewer,
            base=_start_commit(project_dir) if reviewer else "",
        )
        record = push_frame(state, frame, now, os.urandom(6).hex())
        atomic_write_text(path, render_json_state(record))
        return record


def _start_commit(project_dir: Path) -> str:
    from forgeflare.stophook._check import head_commit

    return head_commit(project_dir)


def loop_status(project_dir: Path) -> tuple[Path | None, StoredState]:
    """The state file in use (``None`` if there is none) and what it holds."""
    with open_state(project_dir) as session:
        if session is None:
            return None, None
        return session.path, session.state


def cancel_loops(project_dir: Path) -> list[tuple[Path, StoredState]]:
    """Remove the project's loop state; return what was removed (nothing: an empty list)."""
    with open_state(project_dir) as session:
        if session is None:
            return []
        with contextlib.suppress(FileNotFoundError):
            session.path.unlink()
        return [(session.path, session.state)]


def _first_line(text: str, width: int = 60) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= width else line[: width - 1] + "…"


def describe_state(path: Path | None, state: StoredState, now: datetime) -> str:
    """A readable account of the loop stack, outermost frame first (pure)."""
    if path is None or state is None:
        return "no loop in this project"
    if isinstance(state, Corrupt):
        return (
            f"{path}: corrupted loop state ({state.why}); the next stop removes it, "
            "or run 'forgeflare stop-hook cancel'"
        )
    age = (now - state.updated_at).total_seconds()
    stale = " (STALE: the next stop ends it)" if age > STALE_AFTER.total_seconds() else ""
    run = f"run {state.run_id}" if state.run_id else "loop"
    # STATE is the file's word for "a loop is running": nothing a reader needs to see.
    event = "" if state.event == "STATE" else f" · {str(state.event).lower()}"
    lines = [
        f"{path}",
        f"{run}{event} · updated {utc_timestamp(state.updated_at)} "
        f"({format_wait(max(age, 0))} ago){stale}",
    ]
    if not state.stack:
        lines.append("  (stack empty)")
    for depth, frame in enumerate(state.stack, start=1):
        top = "" if depth != len(state.stack) else _top_word(frame)
        lines.append(f"  {depth}. {frame.mode:<5} iteration {frame.iter}/{frame.max}{top}")
        if frame.prompt.strip():
            lines.append(f"     prompt: {_first_line(frame.prompt)}")
        lines.append(f"     done when alone on a line: {SIGNALS[frame.mode][0]}")
        owner = frame.session_id or "none yet (the first Stop under it claims it)"
        lines.append(f"     session: {owner}")
        lines += _evidence_lines(frame)
        lines.extend(parked_lines(frame))
    return "\n".join(lines)


def _top_word(frame: Frame) -> str:
    """What the top frame is doing: running, or parked on a question (answered or not)."""
    if frame.question and not frame.answer:
        return "  ← parked: waits for an answer"
    if frame.question:
        return "  ← parked: answered"
    return "  ← running"


def _evidence_lines(frame: Frame) -> list[str]:
    """What a frame checks a claim with, and its last refused claim (pure)."""
    lines = []
    if frame.gate:
        lines.append(f"     gate: {frame.gate}")
    if frame.reviewer:
        spent = [c.review for c in frame.claims if c.review is not None]
        tokens = sum(r.tokens for r in spent)
        costs = [r.cost_usd for r in spent if r.cost_usd is not None]
        cost = f", ${sum(costs):.4f}" if costs else ""
        lines.append(
            f"     reviewer: {frame.reviewer} ({len(spent)} verdict{'s' * (len(spent) != 1)}, "
            f"{tokens} tokens{cost})"
        )
    if frame.claims:
        refused = len(frame.claims)
        lines.append(
            f"     refused claims: {refused}"
            + (f", stalled {frame.stalled}" if frame.stalled else "")
        )
        lines += [f"     {line}" for line in describe_claim(frame.claims[-1])]
    return lines
