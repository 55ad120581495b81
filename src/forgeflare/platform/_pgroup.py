"""Process groups from synchronous code: signal a group, find and end marked descendants,
start and stop a long-lived child in a group of its own.

The trio side (:mod:`forgeflare.platform._process`) builds on these; nothing here imports trio, so a
parent that only starts a server (the mock API) does not pay for it. The /proc parts are
Linux-only and say how they degrade elsewhere (macOS).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from typing import Any

__all__ = [
    "MARKER_XOPTION",
    "POLL_MAX",
    "POLL_MIN",
    "become_subreaper",
    "end_adopted",
    "end_marked_processes",
    "end_pids",
    "end_popen",
    "escaped_descendants",
    "group_alive",
    "is_alive",
    "kill_group",
    "marked_processes",
    "marker_argv",
    "popen_in_group",
    "process_started",
    "spawned",
    "term_on_parent_death",
]

# How often a group (or a leader) is checked during a grace: quick first, then gently.
POLL_MIN, POLL_MAX = 0.005, 0.05


def kill_group(pgid: int, sig: int = signal.SIGKILL) -> bool:
    """Send ``sig`` to process group ``pgid``; ``False`` when the group is already gone."""
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True


MARKER_XOPTION = "forgeflare_marker"
"""The ``python -X`` option that carries a marker in a forgeflare child's command line: a
non-dumpable process (``_dumpable``) hides its environment from its own user, not its argv."""


def marker_argv(argv: Sequence[str], name: str, value: str) -> list[str]:
    """``argv`` with the marker as a ``-X`` option when it starts forgeflare with Python
    (``PY … -m forgeflare …``); otherwise unchanged (pure)."""
    args = list(argv)
    if len(args) > 2 and "forgeflare" in args[1:] and "-m" in args[1:]:
        return [args[0], "-X", f"{MARKER_XOPTION}={name}={value}", *args[1:]]
    return args


def _proc_environ_pids(needle: bytes, mine: set[int], argv_needle: bytes = b"") -> list[int]:
    """Linux: pids whose /proc environ holds ``needle`` (or, where the environment is closed
    to us, whose command line holds ``argv_needle``); faster than psutil by far."""
    found = []
    for entry in os.scandir("/proc"):
        pid = entry.name
        if pid.isdigit() and int(pid) not in mine and _proc_marked(pid, needle, argv_needle):
            found.append(int(pid))
    return found


# A process in the middle of an execve has no environment and no command line to read until
# the kernel has laid out its new memory (tens of µs; longer when it is preempted there). A
# command an agent detaches into a session of its own execs just as it leaves the group, the
# moment the leader's cleanup looks: read it again, briefly, or it outlives the iteration.
_EXEC_READS, _EXEC_PAUSE, _ENVLESS_READS = 200, 0.001, 10
_PF_KTHREAD = 0x00200000


def _proc_marked(pid: str, needle: bytes, argv_needle: bytes) -> bool:
    """Whether /proc/``pid`` carries the marker, waiting out an exec in progress."""
    envless = 0
    for _ in range(_EXEC_READS):
        try:
            env: bytes | None = _proc_read(pid, "environ")
        except PermissionError:  # a non-dumpable forgeflare process: its argv says
            env = None
        except OSError:  # gone
            return False
        if env:
            return (b"\0" + env).find(needle) >= 0
        try:
            argv = _proc_read(pid, "cmdline")
        except OSError:
            return False
        if argv:
            if env is None:
                return bool(argv_needle) and argv_needle in argv.split(b"\0")
            # The kernel lays out the new command line before the environment: an empty one
            # next to a command line may still be filling (1 miss in 300 looks under load),
            # or be a process started without one (`env -i`), which costs a few reads.
            envless += 1
            if envless >= _ENVLESS_READS:
                return False
        if not _user_process_alive(pid):  # a kernel thread or a zombie: nothing to read
            return False
        time.sleep(_EXEC_PAUSE)
    return False


def _proc_read(pid: str, name: str) -> bytes:
    with open(f"/proc/{pid}/{name}", "rb") as fh:
        return fh.read()


def _user_process_alive(pid: str) -> bool:
    """``pid`` is neither a kernel thread nor a zombie (Linux /proc/PID/stat)."""
    try:
        stat = _proc_read(pid, "stat")
        fields = stat[stat.rindex(b")") + 2 :].split()
        return fields[0] not in (b"Z", b"X") and not int(fields[6]) & _PF_KTHREAD
    except (OSError, ValueError, IndexError):
        return False


def _ancestors() -> set[int]:
    """This process and its ancestors (from /proc on Linux, else psutil)."""
    mine = {os.getpid()}
    if sys.platform.startswith("linux"):
        pid = os.getppid()
        while pid > 0 and pid not in mine:
            mine.add(pid)
            try:
                stat = open(f"/proc/{pid}/stat", "rb").read()  # noqa: SIM115 - one read
            except OSError:
                break
            pid = int(stat[stat.rindex(b")") + 2 :].split()[1])
        return mine
    import psutil

    with contextlib.suppress(psutil.Error):
        mine |= {p.pid for p in psutil.Process().parents()}
    return mine


def marked_processes(name: str, value: str) -> list[int]:
    """Pids of processes whose environment has ``name=value`` (not this process or its
    ancestors). Children inherit the marker however they detach (a new session, a double
    fork), so this finds what a process-group kill misses. Reads /proc on Linux; elsewhere
    (macOS) psutil, which may see fewer processes; empty where neither can read environments.
    """
    mine = _ancestors()
    if sys.platform.startswith("linux"):
        in_argv = f"{MARKER_XOPTION}={name}={value}".encode()
        return _proc_environ_pids(f"\0{name}={value}\0".encode(), mine, in_argv)
    import psutil

    found = []
    for proc in psutil.process_iter(["pid"]):
        if proc.pid in mine:
            continue
        try:
            env = proc.environ()
        except (psutil.Error, OSError):
            continue
        if env.get(name) == value:
            found.append(proc.pid)
    return found


def end_marked_processes(name: str, value: str, grace: float) -> list[int]:
    """End every process carrying the marker: TERM, up to ``grace`` seconds, then KILL.

    Blocking (run it in a thread from async code); also used by ``--resume`` for a dead run.
    """
    pids = marked_processes(name, value)
    return end_pids(pids, grace) if pids else []  # commonly none: psutil is not even imported


def end_pids(pids: Sequence[int], grace: float) -> list[int]:
    """TERM each process, wait up to ``grace`` seconds, KILL what is left; the pids signalled.

    psutil remembers each process's start time, so a pid reused meanwhile is never hit.
    """
    import psutil

    procs = []
    for pid in pids:
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
        with contextlib.suppress(psutil.Error):
            proc.kill()
    psutil.wait_procs(alive, timeout=max(grace, 1.0))
    return [p.pid for p in procs]


# Children this process started itself and has not reaped yet (run_child, popen_in_group):
# never mistaken for adopted orphans.
_SPAWNED: set[int] = set()
_PR_SET_CHILD_SUBREAPER = 36
_subreaper = False


def spawned(pid: int, *, alive: bool) -> None:
    """Note that this process started child ``pid`` (``alive=False`` once it is reaped)."""
    if alive:
        _SPAWNED.add(pid)
    else:
        _SPAWNED.discard(pid)


_PR_SET_PDEATHSIG = 1


def term_on_parent_death() -> None:
    """In a forked child before exec (``preexec_fn``), Linux: SIGTERM when the parent dies."""
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


def become_subreaper() -> bool:
    """Linux: make this process the "child subreaper" of its descendants (``prctl``), so an
    orphan adopts it instead of init, whatever it did to leave: ``env -i`` drops the marker
    variable and a new session the group, but not this. ``False`` where it cannot (macOS)."""
    global _subreaper
    if _subreaper:
        return True
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        _subreaper = bool(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False
    return _subreaper


def _own_children() -> set[int] | None:
    """This process's children, from each thread's /proc/self/task/TID/children (Linux with
    CONFIG_PROC_CHILDREN; an orphan is adopted by any live thread); ``None`` where that is
    not there or a thread came or went meanwhile (its children move to another thread).
    psutil's way reads the stat file of every process on the machine: 1.5 ms with 66
    processes, against 0.02 ms."""
    if not sys.platform.startswith("linux"):
        return None
    pids: set[int] = set()
    try:
        tasks = os.listdir("/proc/self/task")
        for tid in tasks:
            # One read: the kernel lists a thread's children in one pass, so one that stays
            # is never skipped (across reads, one that exits can make it skip the next).
            with open(f"/proc/self/task/{tid}/children", "rb") as fh:
                pids.update(int(word) for word in fh.read().split())
        if set(os.listdir("/proc/self/task")) != set(tasks):
            return None
    except (OSError, ValueError):
        return None
    return pids


def end_adopted(since: float, grace: float) -> list[int]:
    """End the orphans this subreaper adopted that started at or after ``since`` (epoch
    seconds), with their descendants: TERM, ``grace``, KILL, then reap them. Children this
    process started itself are never touched. Returns the pids ended."""
    if not _subreaper:
        return []
    pids = _own_children()
    if pids is not None and not pids - _SPAWNED:
        return []  # the common case, from a few small reads: psutil is not even imported
    import psutil

    try:
        children = psutil.Process().children()
    except psutil.Error:
        return []
    adopted: list[psutil.Process] = []
    for child in children:
        try:
            if child.pid in _SPAWNED or child.create_time() < since - 1.0:
                continue
            adopted.append(child)
            adopted.extend(child.children(recursive=True))
        except psutil.Error:
            continue
    if not adopted:
        return []
    ended = end_pids([p.pid for p in adopted], grace)
    for proc in adopted:  # reap the adopted ones: nobody else waits for them
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(proc.pid, os.WNOHANG)
    return ended


def escaped_descendants(name: str, value: str) -> list[tuple[int, float]]:
    """Descendants of this process that a kill of this process would lose: in another
    session and without the ``name=value`` marker (a clean environment in a new session). As
    (pid, start time), so a later process reusing the pid is never taken for one. Linux only
    (else ``[]``)."""
    if not sys.platform.startswith("linux"):
        return []
    import psutil

    needle = f"\0{name}={value}\0".encode()
    mine = os.getsid(0)
    found = []
    try:
        descendants = psutil.Process().children(recursive=True)
    except psutil.Error:
        return []
    in_argv = f"{MARKER_XOPTION}={name}={value}".encode()
    for proc in descendants:
        try:
            if os.getsid(proc.pid) == mine:
                continue
            if not _proc_marked(str(proc.pid), needle, in_argv):
                found.append((proc.pid, float(proc.create_time())))
        except (psutil.Error, OSError):
            continue
    return found


def process_started(pid: int | None) -> float | None:
    """The start time of a live (not zombie) process, or ``None``."""
    if pid is None or pid <= 0:  # -1: a lock taken whose holder has not written its pid yet
        return None
    import psutil

    try:
        proc = psutil.Process(pid)
        if proc.status() == psutil.STATUS_ZOMBIE:
            return None
        return float(proc.create_time())
    except psutil.Error:
        return None


def is_alive(pid: int | None, started: float | None) -> bool:
    """Is ``pid`` alive and the same process that started at ``started``?"""
    now = process_started(pid)
    return now is not None and (started is None or abs(now - started) < 1.0)


def group_alive(pgid: int) -> bool:
    """Whether group ``pgid`` has a member that is not a zombie.

    Killed orphans stay zombies until init reaps them, which some container inits do only
    every second or so: they must not hold up the grace. Without /proc (macOS) a zombie
    member counts as alive, so the wait may run to the end of the grace there.
    """
    if not kill_group(pgid, 0):
        return False
    if not sys.platform.startswith("linux"):
        return True
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:  # exited while we looked
            continue
        fields = stat[stat.rindex(b")") + 2 :].split()  # state ppid pgrp ...
        if int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            return True
    return False


def popen_in_group(argv: Sequence[str], **options: Any) -> subprocess.Popen[bytes]:
    """Start a long-lived child from synchronous code (a server the caller stops later) in a
    process group of its own, like :func:`run_child`; end it with :func:`end_popen`."""
    proc = subprocess.Popen(list(argv), process_group=0, **options)
    spawned(proc.pid, alive=True)
    return proc


def end_popen(proc: subprocess.Popen[bytes], grace: float) -> None:
    """TERM the child's group, wait up to ``grace`` for the leader to exit, KILL the group,
    reap the leader. The leader is reaped last: until then its pid, the group id, cannot be
    reused, so the KILL cannot reach another group. Idempotent.
    """
    if proc.returncode is not None:
        return
    if not _exited_unreaped(proc.pid):
        kill_group(proc.pid, signal.SIGTERM)
        end = time.monotonic() + grace
        delay = POLL_MIN
        while not _exited_unreaped(proc.pid) and time.monotonic() < end:
            time.sleep(delay)  # bounded polling: Popen has no way to wait without reaping
            delay = min(delay * 2, POLL_MAX)
    kill_group(proc.pid, signal.SIGKILL)
    proc.wait()
    spawned(proc.pid, alive=False)


def _exited_unreaped(pid: int) -> bool:
    """Whether child ``pid`` has exited, without reaping it (``waitid`` with ``WNOWAIT``)."""
    try:
        info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return True
    return info is not None
