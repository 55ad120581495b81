"""What differs between Linux and macOS in the tests.

``linux_only(reason)`` marks a test that needs Linux itself (bubblewrap, a Linux-only message);
elsewhere it skips with the stated reason instead of failing (``tests/conftest.py`` applies the
rule at collection). Process checks that used to read ``/proc`` go through psutil, which reads
the same facts on Linux and macOS.
"""

from __future__ import annotations

import contextlib
import os
import pty
import secrets
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from project_support import run_text

__all__ = [
    "LINUX_ONLY_MARKER",
    "alive",
    "linux_only_skip_reason",
    "live_group_members",
    "private_mounts_skip_reason",
    "require_pinned_cli",
    "reset_subreaper",
    "run_in_private_mounts",
    "sleeping",
    "terminal",
]

LINUX_ONLY_MARKER = "linux_only(reason): needs Linux (bubblewrap, ...); skipped elsewhere"


def linux_only_skip_reason(platform: str, reason: str | None) -> str | None:
    """The skip reason for a ``linux_only`` test on ``platform`` (``sys.platform``), or None."""
    if platform.startswith("linux"):
        return None
    return f"Linux only ({platform}): {reason or 'needs Linux'}"


def reset_subreaper() -> None:
    """Make this process a plain one again if forgeflare made it a child subreaper (Linux)."""
    from forgeflare.platform import _pgroup

    if not _pgroup._subreaper:
        return
    import ctypes

    ctypes.CDLL(None).prctl(_pgroup._PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
    _pgroup._subreaper = False


def _live(proc: psutil.Process) -> bool:
    return proc.status() not in (psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD)


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie counts as dead)."""
    try:
        return _live(psutil.Process(pid))
    except psutil.Error:
        return False


def live_group_members(pgid: int) -> list[int]:
    """Pids of the live (not zombie) processes in process group ``pgid``."""
    members = []
    for proc in psutil.process_iter():
        try:
            if os.getpgid(proc.pid) == pgid and _live(proc):
                members.append(proc.pid)
        except (psutil.Error, OSError):
            continue  # exited while we looked
    return members


def require_pinned_cli(cli: Path, name: str, make_target: str, require_var: str) -> Path:
    """``cli``, a pinned npm CLI under ``.cache``; else skip, or fail with ``require_var=1``."""
    if cli.exists():
        return cli
    reason = f"{name} is not installed: run `make {make_target}` (npm)"
    if os.environ.get(require_var) == "1":
        pytest.fail(reason)
    pytest.skip(reason)


def private_mounts_skip_reason() -> str | None:
    """Why a tiny tmpfs in a private mount namespace cannot be made here, or None."""
    if shutil.which("unshare") is None:
        return "unshare (util-linux) is not installed"
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"],
        capture_output=True,
        check=False,
    )
    return None if probe.returncode == 0 else "mounting a tmpfs needs root (unshare -m)"


def sleep_token(seconds: int) -> str:
    """A ``sleep`` duration (about ``seconds``) no other process on the machine sleeps: what
    :func:`sleeping` looks for. Random, not derived from the test: several suites may run the
    same test at once on one machine, and each must find only its own."""
    return f"{seconds}.{secrets.randbelow(10**9):09d}"


def sleeping(seconds: str) -> list[psutil.Process]:
    """Live ``sleep SECONDS`` processes (the token from :func:`sleep_token`)."""
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        if proc.info["cmdline"] == ["sleep", seconds] and proc.info["status"] != "zombie":
            found.append(proc)
    return found


def run_in_private_mounts(
    command: str, env: dict[str, str], timeout: float
) -> subprocess.CompletedProcess[str]:
    """``command`` (a shell line) in a private mount namespace, its output captured."""
    return run_text(
        ["unshare", "-m", "sh", "-c", f"mount --make-rprivate / && exec {command}"],
        env=env,
        timeout=timeout,
    )


@contextlib.contextmanager
def terminal() -> Iterator[tuple[int, int, bytearray]]:
    """A fresh pty: ``(master, slave, screen)``; a thread drains the master into ``screen``
    (a child writing to a full pty would block), and both ends close on leaving."""
    master, slave = pty.openpty()
    screen = bytearray()

    def drain() -> None:
        with contextlib.suppress(OSError):
            while chunk := os.read(master, 4096):
                screen.extend(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        yield master, slave, screen
    finally:
        os.close(slave)
        reader.join(timeout=10)
        os.close(master)
