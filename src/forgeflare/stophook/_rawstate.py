"""The loop-state file as plain data: its checks, its lock and its write, light enough to load
at every Stop.

:mod:`._statefile` builds the typed records (:class:`~._machine.LoopRecord`, ``Frame``) from
what :func:`read_record` checked; the quick Stop (:mod:`._quick`) acts on the same checked
values without loading ``typing`` or ``pathlib``. One set of checks for both, so the two can
never disagree on what a valid state is.
"""

from __future__ import annotations

import fcntl
import os
import time
from datetime import UTC, datetime, timedelta

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only (mypy treats any TYPE_CHECKING as true)
    from typing import Any

__all__ = [
    "EVENTS",
    "LOCK_TIMEOUT_S",
    "MODES",
    "SCHEMA_VERSION",
    "STALE_AFTER",
    "StateLock",
    "parse_timestamp",
    "read_frame",
    "read_record",
    "write_state_text",
]

SCHEMA_VERSION = 1
LOCK_TIMEOUT_S = 10.0
"""How long a hook waits for the state lock before failing open (Claude Code waits for a hook
up to its timeout, minutes; a stuck lock holder must not make every stop hang that long)."""
STALE_AFTER = timedelta(seconds=7200)
"""State older than this is a zombie (a crashed or forgotten session): never resumed."""
MODES = ("loop", "task", "issue", "grind")
"""The frame modes (``forgeflare._completion.Mode``'s values; a test keeps them equal)."""
EVENTS = ("STATE", "DONE", "ABORT")
"""The record events (``_machine.Event``'s values; a test keeps them equal)."""


def parse_timestamp(value: object) -> datetime | None:
    """An ISO 8601 instant (``Z`` or ``+00:00``; naive means UTC), or ``None`` if it is not one."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    if text.endswith(("z", "Z")):
        text = text[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed


def _count(value: object) -> int | None:
    """A non-negative count from an int or a decimal string (what jq and bash accepted)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, str) and value.strip().isdecimal() and value.strip().isascii():
        return int(value.strip())
    return None


def _strings(raw: dict[str, Any], where: str, *names: str) -> dict[str, str] | str:
    """The named fields as strings (absent, null or empty: ``""``), or what is wrong."""
    values = {name: raw.get(name) or "" for name in names}
    if all(isinstance(value, str) for value in values.values()):
        return values
    return f"{where}: {' or '.join(names)} is not a string"


def read_frame(raw: dict[str, Any], where: str) -> dict[str, Any] | str:
    """A frame's fields, checked and normalised (counts as ints, absent strings as ``""``,
    ``claims`` still raw), or what is wrong with it (one phrase that starts with ``where``)."""
    mode = raw.get("mode")
    if str(mode) not in MODES:
        return f"{where}: unknown mode {mode!r}"
    if "iter" not in raw or "max" not in raw:
        return f"{where}: missing 'iter' or 'max'"
    iteration, cap = _count(raw["iter"]), _count(raw["max"])
    if iteration is None:
        return f"{where}: iter {raw['iter']!r} is not a non-negative integer"
    if cap is None or cap < 1:
        return f"{where}: max {raw['max']!r} is not a positive integer"
    prompt = raw.get("prompt", "")
    if prompt is not None and not isinstance(prompt, str):
        return f"{where}: prompt is not a string"
    fields: dict[str, Any] = {"mode": str(mode), "iter": iteration, "max": cap}
    fields["prompt"] = prompt or ""
    for names in (("session_id",), ("judged",), ("gate", "failures")):
        found = _strings(raw, where, *names)
        if isinstance(found, str):
            return found
        fields.update(found)
    stall_after, stalled = _count(raw.get("stall_after", 0)), _count(raw.get("stalled", 0))
    if stall_after is None or stalled is None:
        return f"{where}: stall_after or stalled is not a non-negative integer"
    fields.update(stall_after=stall_after, stalled=stalled)
    for names in (("reviewer", "base"), ("question", "answer")):
        found = _strings(raw, where, *names)
        if isinstance(found, str):
            return found
        fields.update(found)
    claims = raw.get("claims") or []
    if not isinstance(claims, list):
        return f"{where}: claims is not a list"
    fields["claims"] = claims
    return fields


def read_record(raw: object) -> tuple[str, str, datetime, list[dict[str, Any]]] | str:
    """``(event, run_id, updated_at, frames)`` of a decoded state file, each frame as
    :func:`read_frame` gives it, or what is wrong with the file (one phrase)."""
    if not isinstance(raw, dict):
        return "not a JSON object"
    if raw.get("schema") != SCHEMA_VERSION:
        return f"schema {raw.get('schema')!r} is not {SCHEMA_VERSION}"
    event = str(raw.get("event"))
    if event not in EVENTS:
        return f"unknown event {raw.get('event')!r}"
    run_id = raw.get("run_id") or ""
    if not isinstance(run_id, str):
        return "run_id is not a string"
    updated_at = parse_timestamp(raw.get("updated_at"))
    if updated_at is None:
        return f"updated_at {raw.get('updated_at')!r} is not an ISO 8601 time"
    stack = raw.get("stack")
    if not isinstance(stack, list):
        return "stack is missing or not a list"
    frames: list[dict[str, Any]] = []
    for index, item in enumerate(stack):
        if not isinstance(item, dict):
            return f"stack[{index}] is not an object"
        frame = read_frame(item, f"stack[{index}]")
        if isinstance(frame, str):
            return frame
        frames.append(frame)
    return event, run_id, updated_at, frames


class StateLock:
    """An exclusive ``flock`` on a lock file (created if needed), as a context manager.

    Polls with a short back-off up to ``timeout`` seconds, then raises
    :class:`~._errors.StateLockTimeout`: a hook must never hang on a stuck lock holder. The
    lock file stays (removing a flock file breaks the lock).
    """

    __slots__ = ("_fd", "path", "timeout")

    def __init__(self, path: str, *, timeout: float = LOCK_TIMEOUT_S) -> None:
        self.path = path
        self.timeout = timeout
        self._fd = -1

    def __enter__(self) -> None:
        # 0700: a loop's prompts and questions are the user's business alone.
        os.makedirs(os.path.dirname(self.path) or ".", mode=0o700, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + self.timeout
        delay = 0.001
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    from forgeflare.stophook._errors import StateLockTimeout

                    raise StateLockTimeout(
                        f"{self.path}: lock still held after {self.timeout:g} s"
                    ) from None
                time.sleep(delay)
                delay = min(delay * 2, 0.02)
        self._fd = fd

    def __exit__(self, *exc: object) -> None:
        os.close(self._fd)  # closing the descriptor releases the lock
        self._fd = -1


def write_state_text(path: str, text: str) -> None:
    """Replace the state file with ``text`` atomically (``<path>.tmp``, then a rename).

    No fsync: it cost the Stop tens of ms of disk wait on a busy machine, and a power cut can
    at worst leave an empty file, which the next Stop reads as corrupted and removes (the stop
    is allowed: the loop ends, it never traps the session).
    """
    tmp = path + ".tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except OSError:
        # A full disk: a half-written temp file would hold on to the little space left.
        # (Not contextlib.suppress: the quick Stop does not load contextlib.)
        try:  # noqa: SIM105
            os.unlink(tmp)
        except OSError:
            pass
        raise
