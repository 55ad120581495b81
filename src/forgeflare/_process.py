"""Process-group signalling shared by everything that runs children in their own group.

Bash commands, shell hooks, lifecycle hooks and agent processes each start in a new session,
so one ``killpg`` reaches whatever they spawned.
"""

from __future__ import annotations

import os
import signal

__all__ = ["kill_group"]


def kill_group(pgid: int, sig: int = signal.SIGKILL) -> bool:
    """Send ``sig`` to process group ``pgid``; ``False`` when the group is already gone."""
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True
