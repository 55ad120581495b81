"""Every git command forgeflare runs on a project: the supervisor, the fleet, the reports and
the stop-hook.

:func:`run_git` is the one way forgeflare runs git on a project (the supervisor's
``forgeflare.supervisor.git`` runs it in a worker thread). A project's ``.git/config`` can
name programs git runs by itself: a copied tree (a tarball, a copied folder) brings its own,
and the agent can write one. So every call switches off what executes on the commands we use
(:func:`git_argv`): ``core.fsmonitor`` (``git status``), hooks (``core.hooksPath=/dev/null``:
``worktree add``, ``merge``, ``rebase``, ``commit``), the pager, external diff and textconv
programs (``--no-ext-diff --no-textconv`` on the commands that diff: an empty ``diff.external``
would make git try to run "" and fail every diff), and every
``filter.<driver>`` clean/smudge/process command the configuration defines (a
``.gitattributes`` line makes ``status`` run them); the environment has no secret
(``_secrets``), no prompt, no editor, and no transport for a command that is not meant to
talk to a remote (a partial clone's promisor URL can be ``ext::`` a program). One timeout
policy: :data:`GIT_TIMEOUT` for local commands, :data:`NETWORK_TIMEOUT` for those that talk to
a remote; a git that is missing, cannot start or overruns is a result (exit 127 / 124 with a
line saying why), never an exception.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from forgeflare.disk import read_limited_text
from forgeflare.security._secrets import child_environment

__all__ = [
    "GIT_TIMEOUT",
    "NETWORK_TIMEOUT",
    "SAFE_CONFIG",
    "GitResult",
    "filter_drivers",
    "git_argv",
    "git_env",
    "git_timeout",
    "run_git",
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
)
"""``-c`` settings given to every git call: none of them runs a program."""

_NO_PROTOCOL = "none"
"""``GIT_ALLOW_PROTOCOL`` for local commands: a protocol name no transport has, so every
transport is refused, whatever ``protocol.*.allow`` the repository sets."""
_EMPTY_VAR = "FORGEFLARE_GIT_EMPTY"
_FALSE_VAR = "FORGEFLARE_GIT_FALSE"
_VALUES = {_EMPTY_VAR: "", _FALSE_VAR: "false"}
"""Values for ``--config-env``: a driver named with ``=`` (``filter "a=b"``, applied by a
``.gitattributes`` line ``* filter=a=b``) cannot be switched off by ``-c``, which splits at
the first ``=``; ``--config-env`` splits at the last."""


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


_DIFFING = frozenset({"diff", "show", "log", "format-patch"})
"""Commands that can run ``diff.external``, a diff driver's ``command`` or its ``textconv``."""


def git_argv(args: Sequence[str], drivers: Sequence[str] = ()) -> list[str]:
    """``git`` with :data:`SAFE_CONFIG` and the filter ``drivers`` emptied, then ``args`` (a
    command that diffs gets ``--no-ext-diff --no-textconv`` right after its name)."""
    argv = ["git"]
    for setting in SAFE_CONFIG:
        argv += ["-c", setting]
    for driver in drivers:
        if "=" in driver:  # needs git_env's values (git 2.31); an older git refuses to run
            for key in ("clean", "smudge", "process"):
                argv.append(f"--config-env=filter.{driver}.{key}={_EMPTY_VAR}")
            argv.append(f"--config-env=filter.{driver}.required={_FALSE_VAR}")
            continue
        for key in ("clean", "smudge", "process"):
            argv += ["-c", f"filter.{driver}.{key}="]
        argv += ["-c", f"filter.{driver}.required=false"]
    at = next((i for i, a in enumerate(args) if not a.startswith("-")), None)
    if at is not None and args[at] in _DIFFING:
        return [*argv, *args[: at + 1], "--no-ext-diff", "--no-textconv", *args[at + 1 :]]
    return [*argv, *args]


def git_env(env: Mapping[str, str] | None = None, *, remote: bool = False) -> dict[str, str]:
    """``env`` (default: this process's) without secrets, prompts, editors or pagers; a
    command that talks to a ``remote`` keeps the ssh agent's socket (a push over ssh)."""
    clean = child_environment(
        os.environ if env is None else env, ("SSH_AUTH_SOCK",) if remote else ()
    )
    for name in ("GIT_EXTERNAL_DIFF", "GIT_PAGER", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR"):
        clean.pop(name, None)
    clean.update(GIT_TERMINAL_PROMPT="0", GIT_PAGER="cat", GIT_EDITOR="true", **_VALUES)
    if not remote:
        # A command that should not talk to a remote never does: a partial clone's promisor
        # (`ext::sh -c …` as its URL) would be fetched from, running it, for a missing object.
        clean.update(GIT_ALLOW_PROTOCOL=_NO_PROTOCOL, GIT_NO_LAZY_FETCH="1")
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
                line = read_limited_text(dot_git, errors="replace").strip()
            except OSError:
                return []
            git_dir = folder / line.removeprefix("gitdir:").strip()
            break
    else:
        return []
    dirs = [git_dir]
    try:
        common = read_limited_text(git_dir / "commondir", errors="replace").strip()
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


def filter_drivers(cwd: Path, env: Mapping[str, str]) -> list[str]:
    """The filter drivers git's configuration defines here (reading config runs nothing),
    for :func:`git_argv` to switch off."""
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
            git_argv(args, filter_drivers(cwd, child_env)),
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
