"""Running forgeflare as an ordinary uid (``nobody``) from a root test, through ``setpriv``.

The venv's interpreter may live under ``/root`` (pyenv), out of ``nobody``'s reach: a process
as ``nobody`` then cannot start it again (the loop starts its agent with ``sys.executable``).
So ``nobody`` runs the system's Python 3 of the same version on the venv's packages and this
source tree.
"""

from __future__ import annotations

import shutil
import site
import sys
import sysconfig
from pathlib import Path

__all__ = ["NOBODY", "SETPRIV", "as_user", "forgeflare_argv", "forgeflare_env"]

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
