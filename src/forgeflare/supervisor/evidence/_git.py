"""The git facts of the finish decision, and :func:`git`:
``forgeflare.security._git.run_git`` (the one safe way forgeflare runs git) in a worker thread,
so the trio event loop never waits on git.
The facts: at most two git processes per iteration: one ``git status`` after it (the one before
is the previous iteration's after) and a ``git rev-list --count`` only when HEAD moved. The
supervisor's own records, the agent's ``convergence.json`` and session transcripts change every
iteration and are excluded, or no iteration would ever look idle. A changed path is compared by
its status line and by its size and mtime, so a file changed again while already modified is
seen too; nothing reads file contents into memory.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import trio

from forgeflare.disk import CONVERGENCE_RELPATH
from forgeflare.security import GIT_TIMEOUT as GIT_TIMEOUT
from forgeflare.security import NETWORK_TIMEOUT as NETWORK_TIMEOUT
from forgeflare.security import SAFE_CONFIG as SAFE_CONFIG
from forgeflare.security import GitResult as GitResult
from forgeflare.security import git_argv as git_argv
from forgeflare.security import git_env as git_env
from forgeflare.security import git_timeout as git_timeout
from forgeflare.security import run_git as run_git

__all__ = [
    "GIT_TIMEOUT",
    "NETWORK_TIMEOUT",
    "SAFE_CONFIG",
    "STATUS_ARGS",
    "GitResult",
    "GitSnapshot",
    "commits_and_tree",
    "commits_between",
    "git",
    "git_argv",
    "git_env",
    "git_snapshot",
    "git_timeout",
    "run_git",
    "snapshot_of",
    "tree_of",
]

_CONVERGENCE = CONVERGENCE_RELPATH.as_posix()
# convergence.json and the temporary file atomic_write_text writes it through.
_ALWAYS_EXCLUDED = (_CONVERGENCE, f"{_CONVERGENCE}.tmp", ".entire")


STATUS_ARGS = (
    "--no-optional-locks",
    "status",
    "--porcelain=v2",
    "-z",
    "--branch",
    "--untracked-files=all",
)
"""``git status`` as the snapshot and the checkpoint read it: every changed or untracked path,
NUL-separated, with HEAD."""


async def git(
    cwd: Path, *args: str, env: Mapping[str, str] | None = None, timeout: float | None = None
) -> GitResult:
    """:func:`run_git` in a worker thread: the trio event loop never waits on git."""
    return await trio.to_thread.run_sync(partial(run_git, cwd, *args, env=env, timeout=timeout))


@dataclass(frozen=True, slots=True)
class GitSnapshot:
    """HEAD (``None`` before the first commit) and a digest of the work tree's changes."""

    head: str | None
    tree_digest: str


async def _git(cwd: Path, *args: str) -> tuple[int, bytes]:
    done = await git(cwd, *args)
    return done.returncode, os.fsencode(done.stdout)


def _pathspec(project_dir: Path, excluded: tuple[Path, ...]) -> list[str]:
    spec = ["--", "."]
    for rel in _ALWAYS_EXCLUDED:
        spec.append(f":(exclude){rel}")
    for path in excluded:
        try:
            rel_path = path.resolve().relative_to(project_dir.resolve())
        except ValueError:
            continue  # outside the project: git does not see it anyway
        spec.append(f":(exclude){rel_path.as_posix()}")
    return spec


async def git_snapshot(
    project_dir: Path, *, excluded: tuple[Path, ...] = (), spec: list[str] | None = None
) -> GitSnapshot | None:
    """The state of ``project_dir``'s repository, or ``None`` when it is not in one.

    One git process: ``git status --porcelain=v2 --branch`` gives HEAD and every changed or
    untracked path; their size and mtime (a stat, no git) catch a file changed again.
    ``spec`` (a whole pathspec) replaces the one made of ``excluded``.
    """
    spec = spec if spec is not None else _pathspec(project_dir, excluded)
    # --no-optional-locks: no index refresh written back (cheaper, and never an index.lock in
    # the way of the agent's own git commands, or of a hook's).
    code, out = await _git(project_dir, *STATUS_ARGS, *spec)
    if code != 0:
        return None
    return snapshot_of(project_dir, out)


def snapshot_of(project_dir: Path, out: bytes) -> GitSnapshot:
    """The snapshot of one ``git status --porcelain=v2 -z --branch`` output (see above)."""
    head: str | None = None
    digest = hashlib.sha256()
    for entry in out.split(b"\0"):
        if not entry:
            continue
        if entry.startswith(b"# branch.oid "):
            oid = entry.removeprefix(b"# branch.oid ").decode()
            head = None if oid == "(initial)" else oid
            continue
        if entry.startswith(b"#"):
            continue
        digest.update(entry + b"\0")
        # the path is the last space-separated field (renames carry the origin as the next
        # NUL-separated entry, which is hashed as an entry of its own)
        name = entry.rsplit(b" ", 1)[-1] if entry[:1] in (b"1", b"2", b"u") else entry[2:]
        try:
            st = os.stat(project_dir / os.fsdecode(name))
        except OSError:
            continue
        digest.update(f":{st.st_size}:{st.st_mtime_ns}\0".encode())
    return GitSnapshot(head=head, tree_digest=digest.hexdigest())


async def commits_between(project_dir: Path, before: str | None, after: str | None) -> int:
    """How many commits ``after`` has that ``before`` has not (0 when unknown)."""
    if after is None or after == before:
        return 0
    rng = after if before is None else f"{before}..{after}"
    code, out = await _git(project_dir, "rev-list", "--count", rng)
    if code != 0:
        return 1  # history rewritten (reset/rebase): HEAD moved, count it as one
    try:
        return int(out.strip())
    except ValueError:
        return 0


async def commits_and_tree(
    project_dir: Path, before: str | None, after: str | None
) -> tuple[int, str | None]:
    """:func:`commits_between` and the tree ``after`` points at, in one git process (the
    stall rule's measure must not cost an iteration a git call more)."""
    if after is None or after == before:
        return 0, None
    rng = after if before is None else f"{before}..{after}"
    code, out = await _git(project_dir, "rev-list", "--format=%T", rng)
    if code != 0:
        return 1, None  # history rewritten (reset/rebase): HEAD moved, count it as one
    lines = out.decode(errors="replace").splitlines()
    count = sum(1 for line in lines if line.startswith("commit "))
    tree = lines[1].strip() if len(lines) > 1 and lines[0].startswith("commit ") else None
    return count, tree or None


async def tree_of(project_dir: Path, rev: str | None) -> str | None:
    """The tree ``rev`` points at (``None`` when unknown): two commits that undo each other
    leave the tree they started from."""
    if rev is None:
        return None
    code, out = await _git(project_dir, "rev-parse", "--verify", "-q", f"{rev}^{{tree}}")
    if code != 0:
        return None
    return out.decode().strip() or None
