"""The optional sandbox for Bash commands: bubblewrap, the project writable, the rest read-only.

Path checks cannot confine a shell, so ``forgeflare run --sandbox`` (and the loop's
``[agent] sandbox = "bwrap"``) runs every Bash command under ``bwrap``: the whole file system
read-only, the project (and its git directory, so commits work) read-write, a private
``/tmp``, its own PID namespace (``--unshare-pid``, ``--die-with-parent``), and no network
unless ``--sandbox-network``. A missing or broken bubblewrap is refused in one line before
anything runs, never a silent fallback. Linux only: elsewhere ``--sandbox`` is refused.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from forgeflare._errors import ConfigError

__all__ = ["SANDBOX_ENV", "check_sandbox", "sandbox_argv", "sandbox_mode"]

SANDBOX_ENV = "FORGEFLARE_SANDBOX"
"""``1`` (sandbox, no network) or ``network``; set by ``--sandbox`` / ``--sandbox-network``."""


def sandbox_mode() -> str | None:
    """``None`` (no sandbox), ``"1"`` or ``"network"``, from this process's environment."""
    value = os.environ.get(SANDBOX_ENV, "").strip().lower()
    return value if value in ("1", "network") else None


def _git_dir(project: Path) -> Path | None:
    """The repository's git directory when it lies outside the project (a worktree)."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--git-common-dir"],
            cwd=project,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        ).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return None
    if not out:
        return None
    path = (project / out).resolve()
    return None if path.is_relative_to(project.resolve()) else path


def sandbox_argv(project: Path, command: list[str], *, network: bool) -> list[str]:
    """``command`` wrapped in bwrap: project and git directory writable, the rest read-only."""
    root = project.resolve()
    argv = ["bwrap", "--die-with-parent", "--unshare-pid", "--ro-bind", "/", "/"]
    argv += ["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    argv += ["--bind", str(root), str(root)]
    git = _git_dir(root)
    if git is not None:
        argv += ["--bind", str(git), str(git)]
    if not network:
        argv.append("--unshare-net")
    argv += ["--chdir", str(root), "--"]
    return argv + command


def check_sandbox(project: Path) -> None:
    """Raise ``ConfigError`` (one line) unless bubblewrap can run a command here."""
    if not sys.platform.startswith("linux"):
        raise ConfigError("--sandbox: bubblewrap runs on Linux only; refusing to run unconfined")
    if shutil.which("bwrap") is None:
        raise ConfigError(
            "--sandbox: bubblewrap (bwrap) is not installed (Debian: apt-get install "
            "bubblewrap); refusing to run Bash commands unconfined"
        )
    try:
        done = subprocess.run(
            sandbox_argv(project, ["true"], network=False),
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ConfigError(f"--sandbox: bubblewrap cannot start: {exc}") from exc
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        raise ConfigError(f"--sandbox: bubblewrap cannot start here ({why}); refusing to run")
