"""``stop-hook answer``: give a parked loop its answer, so the session's next stop resumes it.

The decision is :func:`~forgeflare.stophook._machine.record_answer` (pure); this module reads
and writes the state under its lock, and reads an answer file.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from forgeflare._errors import ConfigError
from forgeflare.disk import read_limited_text, require_utf8
from forgeflare.stophook._errors import StopHookError
from forgeflare.stophook._machine import Corrupt, Frame, LoopRecord, record_answer
from forgeflare.stophook._statefile import any_state, open_state

__all__ = ["answer_loop", "answer_text", "parked_lines", "waiting_question"]


def answer_text(text: str | None, file: Path | None) -> str:
    """The answer given as TEXT or with ``--file``; :class:`ConfigError` (one line, exit 2)
    for both, neither, an unreadable file or an empty answer."""
    if file is not None and text:
        raise ConfigError("stop-hook answer: give the answer as TEXT or with --file, not both")
    if file is not None:
        try:
            text = read_limited_text(file)
        except (OSError, UnicodeDecodeError) as exc:
            why = getattr(exc, "strerror", None) or str(exc)
            raise ConfigError(f"stop-hook answer: --file {file}: cannot read: {why}") from exc
    if not text or not text.strip():
        raise ConfigError("stop-hook answer: the answer is empty; give TEXT or --file FILE")
    return require_utf8(text, "stop-hook answer", error=ConfigError)


def answer_loop(project_dir: Path, text: str, now: datetime) -> LoopRecord:
    """Record ``text`` as the answer of the project's parked loop and return the new state.

    Raises :class:`ConfigError` (exit 2) naming the state file when no loop is parked.
    """
    with open_state(project_dir) as session:
        if session is None:
            raise ConfigError(f"stop-hook answer: no loop in {project_dir}: nothing to answer")
        if isinstance(session.state, Corrupt):
            raise ConfigError(
                f"stop-hook answer: {session.path}: corrupted loop state ({session.state.why})"
            )
        answered = record_answer(session.state, text, now)
        if isinstance(answered, str):
            raise ConfigError(f"stop-hook answer: {session.path}: {answered}")
        session.commit(answered)
        return answered


def parked_lines(frame: Frame) -> list[str]:
    """What ``stop-hook status`` says of a parked frame: its question and how to answer."""
    if not frame.question:
        return []
    if frame.answer:
        first = frame.answer.strip().splitlines()[0]
        return [f"     answered: {first} (the session's next stop goes on with the loop)"]
    lines = ["     BLOCKED: the agent asks:"]
    lines += [f"       {line}" if line.strip() else "" for line in frame.question.splitlines()]
    lines.append("     answer in the session: /forgeflare:answer TEXT")
    lines.append(
        '     or here: forgeflare stop-hook answer "TEXT", then the session\'s next turn '
        "(claude --continue) goes on with the loop"
    )
    return lines


def waiting_question(project_dir: Path) -> str | None:
    """The question a Claude Code loop of the project is parked on and not yet answered.

    ``None`` when there is no loop, it is not parked, it has its answer, or its state cannot be
    read (``stop-hook status`` is the place that names a damaged state).
    """
    if not any_state(project_dir):
        return None
    try:
        with open_state(project_dir) as session:
            state = None if session is None else session.state
    except (StopHookError, OSError, ValueError):
        return None
    if not isinstance(state, LoopRecord):
        return None
    return next((f.question for f in reversed(state.stack) if f.question and not f.answer), None)
