"""The hook process's words, shared by the quick Stop, its running-loop half and the full hook:
the ``(status, stdout, stderr)`` answer, the one line of an allowed stop, the session a Stop
names. Plain Python only: the Stop without a loop loads this with ``json`` and ``os``."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only (mypy treats any TYPE_CHECKING as true)
    from collections.abc import Mapping

__all__ = ["DISABLE_ENV", "PREFIX", "Quick", "allow_line", "session_of"]

DISABLE_ENV = "IDLE_LOOP_DISABLE"
PREFIX = "forgeflare stop-hook: "
Quick = tuple[int, str, str]
"""``(exit status, stdout, stderr)`` of the hook process."""


def allow_line(note: str) -> str:
    """The hook's one stderr line for an allowed stop (``""`` without a note), kept to one
    line whatever the note quotes (a transcript path may hold a newline)."""
    note = note.replace("\r", "\\r").replace("\n", "\\n")
    return f"{PREFIX}{note}\n" if note else ""


def session_of(payload: Mapping[str, object]) -> str | None:
    """The Stop's Claude Code session (``None``: an older client, a test)."""
    session_id = payload.get("session_id")
    return session_id if isinstance(session_id, str) and session_id else None
