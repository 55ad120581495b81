"""Every git command of the supervisor, the fleet and the reports, and the git facts of the
finish decision.

:func:`run_git` (and :func:`git`, its trio form, run in a worker thread so the event loop never
waits on git) is the one way forgeflare runs git on a project. A project's ``.git/config`` can
name programs git runs by itself: a copied tree (a tarball, a copied folder) brings its own,
and the agent can write one. So every call switches off what executes on the commands we use
(:func:`git_argv`): ``core.fsmonitor`` (``git status``), hooks (``core.hooksPath=/dev/null``:
``worktree add``, ``merge``, ``rebase``, ``commit``), the pager, ``diff.external``, and every
``filter.<driver>`` clean/smudge/process command the configuration defines (a
``.gitattributes`` line makes ``status`` run them); the environment has no secret
(``_secrets``), no prompt, no editor. One timeout policy: :data:`GIT_TIMEOUT` for local
commands, :data:`NETWORK_TIMEOUT` for those that talk to a remote; a git that is missing, cannot
start or overruns is a result (exit 127 / 124 with a line saying why), never an exception.

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
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import trio

from forgeflare._convergence import CONVERGENCE_RELPATH
from forgeflare._secrets import child_environment

__all__ = [
    "GIT_TIMEOUT",
    "NETWORK_TIMEOUT",
    "SAFE_CONFIG",
    "GitResult",
    "GitSnapshot",
    "commits_and_tree",
    "commits_between",
    "diff_since",
    "git",
    "git_argv",
    "git_env",
    "git_snapshot",
    "git_timeout",
    "run_git",
    "tree_of",
]

GIT_TIMEOUT = 120.0
"""Seconds a local git command may take (a status of a huge tree on a slow disk)."""
NETWORK_TIMEOUT = 600.0
"""Seconds for a command that talks to a remote (clone, fetch, push)."""

_NETWORK = frozenset({"clone", "fetch", "push", "pull", "ls-remote"})

SAFE_CONFIG: tuple[str, ...] = (
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.pager=cat",
    "diff.external=",
)
"""``-c`` settings given to every git call: none of them runs a program."""

_CONVERGENCE = CONVERGENCE_RELPATH.as_posix()
# convergence.json and the temporary file atomic_write_text writes it through.
_ALWAYS_EXCLUDED = (_CONVERGENCE, f"{_CONVERGENCE}.tmp", ".entire")


@dataclass(frozen=True, slots=True)
class GitResult:
    """How one git command ended; output decoded with ``surrogateescape`` (``os.fsencode``
    gives the bytes back)."""

    returncode: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def _talks_to_remote(args: Sequence[str]) -> bool:
    return next((a for a in args if not a.startswith("-")), "") in _NETWORK


def git_timeout(args: Sequence[str]) -> float:
    """The timeout policy: :data:`NETWORK_TIMEOUT` when the command talks to a remote."""
    return NETWORK_TIMEOUT if _talks_to_remote(args) else GIT_TIMEOUT


def git_argv(args: Sequence[str], drivers: Sequence[str] = ()) -> list[str]:
    """``git`` with :data:`SAFE_CONFIG` and the filter ``drivers`` emptied, then ``args``."""
    argv = ["git"]
    for setting in SAFE_CONFIG:
        argv += ["-c", setting]
    for driver in drivers:
        for key in ("clean", "smudge", "process"):
            argv += ["-c", f"filter.{driver}.{key}="]
        argv += ["-c", f"filter.{driver}.required=false"]
    return [*argv, *args]


def git_env(env: Mapping[str, str] | None = None, *, remote: bool = False) -> dict[str, str]:
    """``env`` (default: this process's) without secrets, prompts, editors or pagers; a
    command that talks to a ``remote`` keeps the ssh agent's socket (a push over ssh)."""
    clean = child_environment(
        os.environ if env is None else env, ("SSH_AUTH_SOCK",) if remote else ()
    )
    for name in ("GIT_EXTERNAL_DIFF", "GIT_PAGER", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR"):
        clean.pop(name, None)
    clean.update(GIT_TERMINAL_PROMPT="0", GIT_PAGER="cat", GIT_EDITOR="true")
    return clean


def _config_files(cwd: Path) -> list[Path]:
    """The repository's own config files (``.git/config``, a worktree's and the common one),
    found without running git; empty outside a repository."""
    for folder in (cwd, *cwd.parents):
        dot_git = folder / ".git"
        if dot_git.is_dir():
            git_dir = dot_git
            break
        if dot_git.is_file():
            try:
                line = dot_git.read_text(encoding="utf-8", errors="replace").strip()
            except OSError:
                return []
            git_dir = folder / line.removeprefix("gitdir:").strip()
            break
    else:
        return []
    dirs = [git_dir]
    try:
        common = (git_dir / "commondir").read_text(encoding="utf-8").strip()
        dirs.append(git_dir / common)
    except OSError:
        pass
    return [d / name for d in dirs for name in ("config", "config.worktree")]


def _stamp(paths: Sequence[Path]) -> tuple[tuple[int, int, int] | None, ...]:
    stamps: list[tuple[int, int, int] | None] = []
    for path in paths:
        try:
            st = path.stat()
        except OSError:
            stamps.append(None)
            continue
        stamps.append((st.st_ino, st.st_mtime_ns, st.st_size))
    return tuple(stamps)


_DRIVERS: dict[tuple[object, ...], list[str]] = {}
"""Filter drivers by the repository's config files and their stat: one ``git config`` per
change of the configuration, not per git call (a loop iteration runs at most two)."""


def _filter_drivers(cwd: Path, env: Mapping[str, str]) -> list[str]:
    """The filter drivers git's configuration defines here (reading config runs nothing)."""
    files = _config_files(cwd.resolve())
    key = (*files, *_stamp(files))
    if files and key in _DRIVERS:
        return _DRIVERS[key]
    drivers = _query_drivers(cwd, env)
    if files:
        _DRIVERS[key] = drivers
    return drivers


def _query_drivers(cwd: Path, env: Mapping[str, str]) -> list[str]:
    try:
        done = subprocess.run(
            ["git", "config", "-z", "--name-only", "--get-regexp", r"^filter\."],
            cwd=cwd,
            env=dict(env),
            capture_output=True,
            stdin=subprocess.DEVNULL,
            timeout=GIT_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return []
    names = os.fsdecode(done.stdout).split("\0")
    return sorted({n.split(".", 1)[1].rsplit(".", 1)[0] for n in names if n.count(".") >= 2})


def run_git(
    cwd: Path,
    *args: str,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
) -> GitResult:
    """Run ``git ARGS`` in ``cwd`` safely (module docstring); blocking: use :func:`git` in trio.

    ``env`` (default: this process's) is scrubbed of secrets: a push authenticates through the
    user's credential helper or ssh agent (its socket is kept), never a token variable.
    ``timeout`` defaults to the policy (:func:`git_timeout`).
    """
    child_env = git_env(env, remote=_talks_to_remote(args))
    limit = git_timeout(args) if timeout is None else timeout
    try:
        done = subprocess.run(
            git_argv(args, _filter_drivers(cwd, child_env)),
            cwd=cwd,
            env=child_env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=limit,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return GitResult(124, "", f"git {' '.join(args[:1])} timed out after {limit:g}s")
    except OSError as exc:
        return GitResult(127, "", f"cannot run git: {exc.strerror or exc}")
    return GitResult(done.returncode, os.fsdecode(done.stdout), os.fsdecode(done.stderr))


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


async def git_snapshot(project_dir: Path, *, excluded: tuple[Path, ...] = ()) -> GitSnapshot | None:
    """The state of ``project_dir``'s repository, or ``None`` when it is not in one.

    One git process: ``git status --porcelain=v2 --branch`` gives HEAD and every changed or
    untracked path; their size and mtime (a stat, no git) catch a file changed again.
    """
    spec = _pathspec(project_dir, excluded)
    # --no-optional-locks: no index refresh written back (cheaper, and never an index.lock in
    # the way of the agent's own git commands, or of a hook's).
    code, out = await _git(
        project_dir,
        "--no-optional-locks",
        "status",
        "--porcelain=v2",
        "-z",
        "--branch",
        "--untracked-files=all",
        *spec,
    )
    if code != 0:
        return None
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


async def diff_since(project_dir: Path, base: str | None) -> tuple[str, str]:
    """The diff of the work tree (commits and uncommitted changes) since ``base``, and its
    ``--stat`` (both empty when unknown)."""
    rev = base or "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # git's empty tree
    _, diff = await _git(project_dir, "diff", rev)
    _, stat = await _git(project_dir, "diff", "--stat", rev)
    return diff.decode(errors="replace"), stat.decode(errors="replace")
