"""``forgeflare stop``: ask a running loop to finish after its current iteration.

A request is a small file, ``.fresher/stop-request``, written by ``forgeflare stop`` (or
``forgeflare fleet stop``) from any terminal. The loop looks for it before each iteration and
after each wait; it then runs ``finished`` and ends with finish type ``stopped`` (exit 18).
A loop drops a request left from earlier when it starts, and says how old it was.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from forgeflare._clock import utc_timestamp
from forgeflare.disk import atomic_write_text

__all__ = ["STOP_RELPATH", "clear_stop", "request_stop", "stop_request_age", "stop_requested"]

STOP_RELPATH = Path(".fresher") / "stop-request"


def request_stop(project: Path) -> Path:
    """Write the stop request into ``project``; returns its path."""
    path = project / STOP_RELPATH
    atomic_write_text(path, json.dumps({"requested_at": utc_timestamp()}) + "\n")
    return path


def stop_requested(project: Path) -> bool:
    """Has someone asked this project's loop to stop?"""
    return (project / STOP_RELPATH).exists()


def stop_request_age(project: Path) -> float | None:
    """Seconds since the request in ``project`` was made (``None``: there is none)."""
    path = project / STOP_RELPATH
    try:
        age = time.time() - path.stat().st_mtime
    except OSError:
        return None
    return max(0.0, age)


def clear_stop(project: Path) -> None:
    """Forget a request (at the start of a loop, and once honoured)."""
    (project / STOP_RELPATH).unlink(missing_ok=True)
