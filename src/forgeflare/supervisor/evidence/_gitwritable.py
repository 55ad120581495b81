"""Preflight: a read-only ``.git`` where only the agent would commit (DESIGN "Delivery").

With ``[fresher] checkpoint = "warn"`` or ``"off"`` the loop commits nothing: the agent's own
commits are the only delivery. When the repository's git directory cannot be written (a
read-only mount, a clone owned by someone else), every such commit fails and the night's work
is never delivered. :func:`git_write_problem` is the decision (pure); :func:`git_dir_writable`
asks git where its directory is and the file system whether it can be written.
"""

from __future__ import annotations

import os
from pathlib import Path

from forgeflare.supervisor.evidence._git import run_git

__all__ = ["git_dir_writable", "git_write_problem"]


def git_write_problem(
    *, checkpoint: str, commits_itself: bool, backend: str, git: tuple[Path, bool] | None
) -> str | None:
    """The one preflight line when the agent would be the only one to commit and cannot
    (``git``, what :func:`git_dir_writable` found, is not writable); ``None`` when the work
    can be delivered, outside a repository, or when the loop's checkpoint commits (it says
    its own failures) or the agent cannot commit anyway (the check of ``commits_itself``
    says that)."""
    if git is None or checkpoint == "commit" or not commits_itself:
        return None
    git_dir, writable = git
    if writable:
        return None
    return (
        f"[fresher] checkpoint = {checkpoint!r}: {git_dir} is read-only, so the {backend} "
        "agent cannot commit and the loop would not either: no work would ever be delivered; "
        'make it writable or set checkpoint = "commit"'
    )


def git_dir_writable(project: Path) -> tuple[Path, bool] | None:
    """The repository's git directory (the common one of a worktree) and whether this process
    can write its objects and refs; ``None`` outside a git repository (or without git)."""
    done = run_git(project, "rev-parse", "--path-format=absolute", "--git-common-dir")
    if not done.ok or not done.stdout.strip():
        return None
    git_dir = Path(done.stdout.strip())
    needed = [git_dir, git_dir / "objects", git_dir / "refs"]
    writable = all(os.access(path, os.W_OK) for path in needed if path.exists())
    return git_dir, writable
