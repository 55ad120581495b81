"""What differs between Linux and macOS in the tests.

``linux_only(reason)`` marks a test that needs Linux itself (bubblewrap, a Linux-only message);
elsewhere it skips with the stated reason instead of failing (``tests/conftest.py`` applies the
rule at collection). Process checks that used to read ``/proc`` go through psutil, which reads
the same facts on Linux and macOS.
"""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys
from pathlib import Path

import psutil
import pytest
from packaging.requirements import Requirement

__all__ = [
    "LINUX_ONLY_MARKER",
    "alive",
    "linux_only_skip_reason",
    "live_group_members",
    "private_mounts_skip_reason",
    "readable_forgeflare_path",
    "require_pinned_cli",
    "run_in_private_mounts",
    "sleeping",
]

LINUX_ONLY_MARKER = "linux_only(reason): needs Linux (bubblewrap, ...); skipped elsewhere"


def linux_only_skip_reason(platform: str, reason: str | None) -> str | None:
    """The skip reason for a ``linux_only`` test on ``platform`` (``sys.platform``), or None."""
    if platform.startswith("linux"):
        return None
    return f"Linux only ({platform}): {reason or 'needs Linux'}"


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


def _runtime_distributions() -> set[str]:
    """forgeflare's installed runtime dependencies, the whole closure (no extras)."""
    seen: set[str] = set()
    todo = ["forgeflare"]
    while todo:
        name = todo.pop()
        key = name.lower().replace("_", "-")
        if key in seen:
            continue
        seen.add(key)
        for line in importlib.metadata.distribution(name).requires or []:
            req = Requirement(line)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return seen - {"forgeflare"}


def readable_forgeflare_path(prefix: list[str], dest: Path) -> dict[str, str]:
    """The environment another user (``prefix``, e.g. setpriv) needs to import forgeflare.

    A clone in a folder only its owner can enter (a ``mktemp -d``, a 0700 home) hides the venv
    and the source from that user. Then forgeflare and its runtime dependencies are copied,
    world-readable, into ``dest`` and named by ``PYTHONPATH``; where the user can already import
    it, nothing is copied and nothing is added.
    """
    probe = subprocess.run(
        [*prefix, sys.executable, "-c", "import forgeflare"],
        capture_output=True,
        check=False,
        timeout=120,
    )
    if probe.returncode == 0:
        return {}
    import forgeflare

    dest.mkdir(parents=True, exist_ok=True)
    shutil.copytree(Path(forgeflare.__file__).parent, dest / "forgeflare")
    for name in _runtime_distributions():
        for file in importlib.metadata.distribution(name).files or []:
            source = Path(str(file.locate()))
            if not source.is_file() or ".." in file.parts:
                continue
            target = dest / file
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    for path in (dest, *dest.rglob("*")):
        path.chmod(0o755 if path.is_dir() else 0o644)
    return {"PYTHONPATH": str(dest)}


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


def sleeping(seconds: str) -> list[psutil.Process]:
    """Live ``sleep SECONDS`` processes (the token is unique to one test)."""
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        if proc.info["cmdline"] == ["sleep", seconds] and proc.info["status"] != "zombie":
            found.append(proc)
    return found


def run_in_private_mounts(
    command: str, env: dict[str, str], timeout: float
) -> subprocess.CompletedProcess[str]:
    """``command`` (a shell line) in a private mount namespace, its output captured."""
    return subprocess.run(
        ["unshare", "-m", "sh", "-c", f"mount --make-rprivate / && exec {command}"],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        check=False,
    )
