"""Running forgeflare as an ordinary uid (``nobody``) from a root test, through ``setpriv``.

The venv's interpreter may live under ``/root`` (pyenv), out of ``nobody``'s reach: a process
as ``nobody`` then cannot start it again (the loop starts its agent with ``sys.executable``).
So ``nobody`` runs the system's Python 3 of the same version on the venv's packages and this
source tree.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import importlib.metadata
import json
import os
import shutil
import site
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from project_support import run_text

__all__ = [
    "NOBODY",
    "SETPRIV",
    "Scratch",
    "as_user",
    "claim_complete",
    "forgeflare_argv",
    "forgeflare_env",
    "give_to",
    "loop_env",
    "shared_scratch",
    "start_frame",
]

NOBODY = 65534
SETPRIV = shutil.which("setpriv")
_SYSTEM = Path(f"/usr/bin/python3.{sys.version_info.minor}")
_SRC = Path(__file__).resolve().parents[1] / "src"


def as_user(user: str) -> list[str]:
    """The prefix that runs a command as ``user`` (``root``: none)."""
    if user == "root":
        return []
    assert SETPRIV is not None
    return [SETPRIV, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]


def forgeflare_argv(user: str) -> list[str]:
    """``python -m forgeflare`` as ``user`` can start it (and start it again)."""
    if user == "root":
        return [sys.executable, "-m", "forgeflare"]
    python = str(_SYSTEM) if _SYSTEM.exists() else sys.executable
    return [*as_user(user), python, "-m", "forgeflare"]


def forgeflare_env(user: str) -> dict[str, str]:
    """What :func:`forgeflare_argv`'s interpreter needs in its environment."""
    if user == "root":
        return {}
    return {"PYTHONPATH": _readable_path(user)}


@functools.cache
def _readable_path(user: str) -> str:
    """A ``PYTHONPATH`` from which ``user`` imports forgeflare and its dependencies.

    The clone's source and the venv's packages where ``user`` can read them; a clone in a
    folder only its owner can enter (a ``mktemp -d``, a 0700 home) hides them, and then
    forgeflare and its runtime dependencies are copied once, world-readable, to ``/var/tmp``.
    """
    paths = [str(_SRC), sysconfig.get_paths()["purelib"], *site.getsitepackages()]
    joined = ":".join(dict.fromkeys(paths))
    probe = subprocess.run(
        [*forgeflare_argv(user)[:-2], "-c", "import forgeflare, trio, pydantic"],
        env={**os.environ, "PYTHONPATH": joined},
        capture_output=True,
        check=False,
        timeout=120,
    )
    if probe.returncode == 0:
        return joined
    dest = Path(tempfile.mkdtemp(prefix="forgeflare-site-", dir="/var/tmp"))
    atexit.register(shutil.rmtree, dest, True)
    shutil.copytree(_SRC / "forgeflare", dest / "forgeflare")
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
    return str(dest)


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


def give_to(root: Path, user: str) -> None:
    """Hand ``root`` and everything under it to ``user`` (``root``: nothing to do)."""
    if user == "nobody":
        for path in [root, *root.rglob("*")]:
            os.lchown(path, NOBODY, NOBODY)


@contextlib.contextmanager
def shared_scratch(prefix: str) -> Iterator[Path]:
    """A scratch folder under ``/var/tmp`` (outside the sandbox's private ``/tmp``) that
    ``nobody`` may enter; removed afterwards. Skips where ``/var/tmp`` is not writable."""
    if not os.access("/var/tmp", os.W_OK):
        pytest.skip("needs a writable /var/tmp for a scratch folder outside /tmp")
    root = Path(tempfile.mkdtemp(prefix=prefix, dir="/var/tmp"))
    root.chmod(0o755)
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def loop_env(root: Path, home: Path, key: str, **extra: str) -> dict[str, str]:
    """A loop's environment in a scratch folder: its own home, config and state, the key,
    trust on, waits scaled down; nothing inherited that would steer forgeflare or git."""
    steer = ("ANTHROPIC_", "FRESHER_", "XDG_", "FORGEFLARE_SANDBOX", "GIT_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(steer)}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(root / "config"),
        XDG_STATE_HOME=str(root / "state"),
        ANTHROPIC_API_KEY=key,
        FORGEFLARE_TRUST="1",
        NO_COLOR="1",
        FRESHER_ERROR_PAUSE="0",
        FORGEFLARE_TIME_SCALE="0.01",
    )
    env.update(extra)
    return env


class Scratch:
    """A scratch folder a loop can run in as root or as ``nobody`` (see ``shared_scratch``):
    ``project``, ``home``, and the user's config and state folders, all made."""

    key = "test-key"
    """The API key the loop's environment carries."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.project = root / "project"
        self.home = root / "home"
        for path in (self.project, self.home, root / "config", root / "state"):
            path.mkdir(parents=True, exist_ok=True)

    def env(self, **extra: str) -> dict[str, str]:
        """The loop's environment in this folder (``loop_env``) with ``extra``."""
        return loop_env(self.root, self.home, self.key, **extra)

    def give_to(self, user: str) -> None:
        """Hand the whole folder to ``user`` (``give_to``)."""
        give_to(self.root, user)


def claim_complete(
    hook: list[str], project: Path, env: dict[str, str], timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    """Send ``forgeflare stop-hook`` (``hook``: its command line) the Stop that Claude Code
    sends when the session's last message claims completion."""
    stop = {
        "session_id": "s1",
        "transcript_path": "",
        "cwd": str(project),
        "hook_event_name": "Stop",
        "stop_hook_active": False,
        "last_assistant_message": "All done.\n<loop-done>COMPLETE</loop-done>",
    }
    return run_text(
        hook,
        input=json.dumps(stop),
        cwd=project,
        env=env,
        timeout=timeout,
    )


def start_frame(
    hook: list[str], project: Path, env: dict[str, str], *more: str
) -> subprocess.CompletedProcess[str]:
    """``forgeflare stop-hook start`` (``hook``: the stop-hook's command line) with a prompt,
    three iterations and ``more`` (``--gate``, ``--reviewer``)."""
    return run_text(
        [*hook, "start", "--max-iterations", "3", "--prompt", "go", *more],
        cwd=project,
        env=env,
        timeout=60,
    )
