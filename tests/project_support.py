"""Projects for tests: git, a repository cloned as a user would get it, the forgeflare CLI."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = [
    "cloned_repo",
    "committed_repo",
    "forgeflare",
    "git",
    "new_repo",
    "run_text",
    "write_files",
]


def run_text(
    argv: Sequence[str | Path],
    *,
    cwd: Path | str | None = None,
    env: Mapping[str, str] | None = None,
    input: str | None = None,
    timeout: float | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` to its end with its text output captured; any exit code is returned."""
    return subprocess.run(
        argv,
        cwd=cwd,
        env=None if env is None else dict(env),
        input=input,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def git(cwd: Path, *args: str) -> str:
    """``git ARGS`` in ``cwd``, which must succeed; its output, stripped."""
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


def new_repo(path: Path) -> Path:
    """A fresh repository at ``path`` on ``main`` with an identity and one empty commit."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", "t")
    git(path, "config", "user.email", "t@t")
    git(path, "commit", "-q", "--allow-empty", "-m", "init")
    return path


def write_files(root: Path, files: Mapping[str, str | bytes]) -> Path:
    """Each of ``files`` (a path under ``root``: its text or bytes) written, folders made."""
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    return root


def committed_repo(path: Path, files: Mapping[str, str | bytes], message: str = "init") -> Path:
    """A fresh repository at ``path`` on ``main`` whose one commit holds ``files``; the commit's
    identity is given on its command line (the repository's config has none)."""
    write_files(path, files)
    git(path, "init", "-q", "-b", "main")
    git(path, "add", "-A")
    git(path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", message)
    return path


def cloned_repo(tmp: Path, name: str, files: Mapping[str, str | bytes]) -> Path:
    """``files`` and a README committed in ``<tmp>/<name>-origin``, cloned to ``<tmp>/<name>``.

    Scripts (``*.sh`` and anything in a ``hooks/`` folder) are committed executable.
    """
    origin = write_files(tmp / f"{name}-origin", files)
    for rel in files:
        if rel.endswith(".sh") or "/hooks/" in rel:
            (origin / rel).chmod(0o755)  # executable in the commit
    committed_repo(origin, {"README.md": "hello\n"})
    clone = tmp / name
    git(tmp, "clone", "-q", str(origin), str(clone))
    return clone


def forgeflare(
    cwd: Path, *args: str, env: Mapping[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """``python -m forgeflare ARGS`` in ``cwd`` (``env``: the whole environment, else ours)."""
    return run_text([sys.executable, "-m", "forgeflare", *args], cwd=cwd, env=env, timeout=timeout)
