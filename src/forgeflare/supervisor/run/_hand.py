"""A hand on a running loop: pause after this iteration, go on, a hint for the next prompt.

``forgeflare pause`` / ``unpause`` / ``hint`` write small files into the running run's folder
(``.fresher/runs/<run-id>/pause``, ``hint.md``); the loop looks for them between iterations.
Files, not signals: they work from any terminal, survive nothing they should not (a new run
has a new folder), and a hint given while the agent works waits for the next prompt.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from forgeflare._clock import utc_timestamp
from forgeflare._errors import ForgeflareError
from forgeflare.disk import atomic_write_text

__all__ = [
    "HINT_NAME",
    "PAUSE_NAME",
    "NoLoopRunning",
    "add_hint",
    "clear_pause",
    "hint_preamble",
    "pause_requested",
    "request_pause",
    "running_run",
    "take_hint",
]

PAUSE_NAME = "pause"
HINT_NAME = "hint.md"
_HINT_SEPARATOR = "\n\n"


class NoLoopRunning(ForgeflareError):
    """No loop holds the project's lock: there is nothing to pause, go on or hint."""


def running_run(project: Path, env: Mapping[str, str]) -> Path:
    """The folder of the run the loop in ``project`` is running; :class:`NoLoopRunning` when
    no loop runs there (a file for a run that is over would act on a later one)."""
    from forgeflare.supervisor.records._history import runs_root
    from forgeflare.supervisor.records._records import RecordError, find_resumable
    from forgeflare.supervisor.run._preflight import lock_holder

    if lock_holder(project) is None:
        raise NoLoopRunning(f"no loop is running in {project}")
    try:
        store = find_resumable(runs_root(project, env))
    except RecordError as exc:
        raise NoLoopRunning(f"{project}: {exc}") from exc
    if store is None:
        raise NoLoopRunning(f"the loop in {project} has not opened its run yet: try again")
    return store.dir


def request_pause(run_dir: Path) -> None:
    """Ask the loop to wait after its current iteration."""
    atomic_write_text(run_dir / PAUSE_NAME, json.dumps({"requested_at": utc_timestamp()}) + "\n")


def pause_requested(run_dir: Path) -> bool:
    """Is the run asked to wait (until ``unpause``)?"""
    return (run_dir / PAUSE_NAME).exists()


def clear_pause(run_dir: Path) -> bool:
    """Let the loop go on; ``False`` when it was not paused."""
    try:
        (run_dir / PAUSE_NAME).unlink()
    except FileNotFoundError:
        return False
    return True


def add_hint(run_dir: Path, text: str) -> int:
    """Add ``text`` to the hints for the next iteration; returns how many now wait there."""
    path = run_dir / HINT_NAME
    try:
        waiting = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        waiting = ""
    hints = [h.strip() for h in waiting.split(_HINT_SEPARATOR + "---" + _HINT_SEPARATOR)]
    hints = [h for h in hints if h]
    hints.append(text.strip())
    atomic_write_text(path, (_HINT_SEPARATOR + "---" + _HINT_SEPARATOR).join(hints) + "\n")
    return len(hints)


def take_hint(run_dir: Path) -> str | None:
    """The hints waiting for this iteration, taken (each reaches one prompt only)."""
    path = run_dir / HINT_NAME
    taking = run_dir / f"{HINT_NAME}.taking"
    try:
        os.replace(path, taking)  # a hint written from now on waits for the next iteration
    except FileNotFoundError:
        return None
    try:
        text = taking.read_text(encoding="utf-8", errors="replace").strip()
    finally:
        taking.unlink(missing_ok=True)
    return text or None


def hint_preamble(hint: str) -> str:
    """How a hint starts the prompt (pure)."""
    return f"A hint from the user for this iteration:\n\n{hint}\n\n---\n\n"
