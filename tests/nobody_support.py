"""Running forgeflare as an ordinary uid (``nobody``) from a root test, through ``setpriv``.

The venv's interpreter may live under ``/root`` (pyenv), out of ``nobody``'s reach: a process
as ``nobody`` then cannot start it again (the loop starts its agent with ``sys.executable``).
So ``nobody`` runs the system's Python 3 of the same version on the venv's packages and this
source tree.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import site
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

__all__ = [
    "NOBODY",
    "SETPRIV",
    "as_user",
    "forgeflare_argv",
    "forgeflare_env",
    "give_to",
    "loop_env",
    "shared_scratch",
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
    paths = [str(_SRC), sysconfig.get_paths()["purelib"], *site.getsitepackages()]
    return {"PYTHONPATH": ":".join(dict.fromkeys(paths))}


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
