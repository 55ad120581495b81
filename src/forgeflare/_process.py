"""Process-group signalling shared by everything that runs children in their own group.

Bash commands, shell hooks, lifecycle hooks and agent processes each start in a new session,
so one ``killpg`` reaches whatever they spawned.
"""

from __future__ import annotations

import contextlib
import os
import signal

__all__ = ["end_marked_processes", "kill_group", "marked_processes"]


def kill_group(pgid: int, sig: int = signal.SIGKILL) -> bool:
    """Send ``sig`` to process group ``pgid``; ``False`` when the group is already gone."""
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def marked_processes(name: str, value: str) -> list[int]:
    """Pids of processes whose environment has ``name=value`` (not this process or its
    ancestors). Children inherit the marker however they detach (``setsid``, double fork), so
    this finds what a process-group kill misses. Empty where psutil cannot read environments.
    """
    import psutil

    marker = {name: value}
    mine = {os.getpid()}
    with contextlib.suppress(psutil.Error):
        mine |= {p.pid for p in psutil.Process().parents()}
    found = []
    for proc in psutil.process_iter(["pid"]):
        if proc.pid in mine:
            continue
        try:
            env = proc.environ()
        except (psutil.Error, OSError):
            continue
        if all(env.get(k) == v for k, v in marker.items()):
            found.append(proc.pid)
    return found


def end_marked_processes(name: str, value: str, grace: float) -> list[int]:
    """End every process carrying the marker: TERM, up to ``grace`` seconds, then KILL."""
    import psutil

    procs = []
    for pid in marked_processes(name, value):
        try:
            proc = psutil.Process(pid)
            proc.terminate()
            procs.append(proc)
        except psutil.Error:
            continue
    if not procs:
        return []
    _, alive = psutil.wait_procs(procs, timeout=grace)
    for proc in alive:
        try:
            proc.kill()
        except psutil.Error:
            continue
    psutil.wait_procs(alive, timeout=grace)
    return [p.pid for p in procs]
