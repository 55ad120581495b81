"""A process that holds a secret makes itself non-dumpable (Linux ``PR_SET_DUMPABLE``).

Whatever a process keeps in memory — the API key it adopted, a webhook URL — its children can
read back through ``/proc/<pid>/mem``, ``/proc/<pid>/environ`` or ``ptrace`` when they run as
the same user (and the kernel has no Yama, or ``ptrace_scope`` 0): a test file the agent
wrote, imported by the gate; a Bash command; a hook. A non-dumpable process's ``/proc`` files
belong to root and ptrace needs ``CAP_SYS_PTRACE``, so none of those reach it. Root outside
the sandbox keeps that capability: the docs say so.

Every forgeflare process calls :func:`forbid_dumps` first thing (``forgeflare.cli.main`` and
the stop-hook's entry). A process that ``exec``s (its children) is dumpable again: the flag
protects the process that holds the secret, not what it starts. No work at import.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable

__all__ = ["PR_GET_DUMPABLE", "PR_SET_DUMPABLE", "dumpable", "forbid_dumps"]

PR_SET_DUMPABLE = 4
PR_GET_DUMPABLE = 3


def _prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl: Callable[..., int] = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return prctl


def forbid_dumps() -> bool:
    """Make this process non-dumpable; whether it took effect (``False`` off Linux)."""
    prctl = _prctl()
    if prctl is None:
        return False
    return int(prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)) == 0


def dumpable() -> bool | None:
    """Is this process dumpable (``None``: not known, off Linux)?"""
    prctl = _prctl()
    if prctl is None:
        return None
    return int(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0)) == 1
