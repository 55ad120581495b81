"""What git would run on the host, compared with the run's start: nothing the agent wrote there
may run after the loop.

Inside the sandbox ``.git/hooks``, ``.git/config`` and ``.git/info`` are read-only; Claude
Code, Codex and a loop without bubblewrap have no such box. So after every iteration and at its
finish the loop compares what makes the user's next ``git commit`` / ``status`` / ``log`` run a
program with what was there at the start, and finishes ``hook_abort`` (13) naming what changed:

- the ``.git`` entry itself (a directory's inode, a ``gitdir:`` file's text): a repository
  swapped for one the agent made;
- in the git directories: ``commondir``, ``gitdir``, ``config.worktree``, ``info/attributes``
  and every file under ``hooks/`` (``*.sample`` never runs);
- the effective config keys that run programs (:func:`runs_a_program`): ``core.fsmonitor``,
  ``core.hooksPath``, ``core.pager``, ``core.editor``, ``core.sshCommand``, ``!`` aliases,
  ``diff.*``, ``filter.*``, ``include*``, ``credential.*`` and their kin.

:func:`changes` and :func:`runs_a_program` are pure; :func:`git_fingerprint` reads the disk
(and runs forgeflare's safe ``git config --list``, which runs nothing the config names).
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Mapping
from pathlib import Path

__all__ = [
    "WATCHED_FILES",
    "changes",
    "describe_changes",
    "git_fingerprint",
    "runs_a_program",
]

WATCHED_FILES = ("commondir", "gitdir", "config.worktree", "info/attributes")
"""Files in a git directory that say where git looks or which drivers run."""

_PREFIXES = (
    "diff.",
    "filter.",
    "include.",
    "includeif.",
    "credential.",
    "pager.",
    "difftool.",
    "mergetool.",
    "gpg.",
    "protocol.",  # protocol.ext.allow lets a remote URL (a promisor's) be a program
)
_SUFFIXES = (".driver", ".uploadpack", ".receivepack", ".vcs", ".textconv", ".command")
_KEYS = frozenset(
    {
        "core.fsmonitor",
        "core.hookspath",
        "core.pager",
        "core.editor",
        "core.sshcommand",
        "core.askpass",
        "core.gitproxy",
        "core.attributesfile",
        "core.worktree",
        "sequence.editor",
        "uploadpack.packobjectshook",
        "interactive.difffilter",
        "extensions.partialclone",  # a promisor: git fetches from it for a missing object
    }
)


def runs_a_program(key: str, value: str) -> bool:
    """Does config ``key`` (any case) with ``value`` make git run a program or read config
    from elsewhere (pure)? ``alias.*`` only with ``!`` (a shell command)."""
    low = key.lower()
    if low.startswith("alias."):
        return value.lstrip().startswith("!")
    return low in _KEYS or low.startswith(_PREFIXES) or low.endswith(_SUFFIXES)


def changes(before: Mapping[str, str], after: Mapping[str, str]) -> list[str]:
    """The names whose fingerprint differs, appeared or went (sorted; pure)."""
    names = before.keys() | after.keys()
    return sorted(name for name in names if before.get(name) != after.get(name))


def describe_changes(names: list[str]) -> str:
    """One line naming what changed (pure)."""
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    return (
        f"git internals changed during the run: {shown} (git would run them on the host "
        "after the loop); stopped: check them before running git here"
    )


def _digest(path: Path) -> str | None:
    try:
        info = path.lstat()
    except OSError:
        return None
    if stat.S_ISLNK(info.st_mode):
        return "symlink:" + os.readlink(path)
    if not stat.S_ISREG(info.st_mode):
        return f"type:{stat.S_IFMT(info.st_mode):o}"
    try:
        with open(path, "rb") as fh:
            data = fh.read(1 << 20)
    except OSError:
        return "unreadable"
    mode = "x" if info.st_mode & 0o111 else "-"
    return f"{mode}:{hashlib.sha256(data).hexdigest()}"


def _git_dirs(project: Path) -> tuple[Path | None, list[Path]]:
    """The common git directory and the directories to watch (a worktree's own too)."""
    dot_git = project / ".git"
    try:
        mode = dot_git.lstat().st_mode
    except OSError:
        return None, []
    if stat.S_ISDIR(mode):
        return dot_git, [dot_git]
    try:
        text = dot_git.read_text(encoding="utf-8", errors="replace")[:4096]
    except OSError:
        return None, []
    if not text.startswith("gitdir:"):
        return None, []
    own = (project / text.removeprefix("gitdir:").strip()).resolve()
    common = own
    try:
        rel = (own / "commondir").read_text(encoding="utf-8", errors="replace").strip()
        common = (own / rel).resolve() if rel else own
    except OSError:
        pass
    return common, list(dict.fromkeys([own, common]))


def _name(path: Path, project: Path) -> str:
    return str(path.relative_to(project)) if path.is_relative_to(project) else str(path)


def git_fingerprint(project: Path) -> dict[str, str]:
    """What in and around ``project``'s git directory makes git run a program, by name."""
    found: dict[str, str] = {}
    dot_git = project / ".git"
    try:
        info = dot_git.lstat()
        kind = "dir" if stat.S_ISDIR(info.st_mode) else "entry"
        found[".git"] = f"{kind}:{info.st_dev}:{info.st_ino}"
        if stat.S_ISREG(info.st_mode):
            found[".git"] += ":" + (_digest(dot_git) or "")
    except OSError:
        pass
    common, dirs = _git_dirs(project)
    for folder in dirs:
        for rel in WATCHED_FILES:
            digest = _digest(folder / rel)
            if digest is not None:
                found[_name(folder / rel, project)] = digest
    if common is not None:
        hooks = common / "hooks"
        for root, subdirs, files in os.walk(hooks):
            subdirs.sort()
            for entry in sorted(files) + [d for d in subdirs if (Path(root) / d).is_symlink()]:
                path = Path(root) / entry
                if entry.endswith(".sample"):
                    continue
                found[_name(path, project)] = _digest(path) or "gone"
    found.update(_config_keys(project, dirs))
    return found


_CONFIG_SEEN: dict[Path, tuple[tuple[object, ...], dict[str, str]]] = {}
"""The last config keys read per project, with the stat of every file they came from."""


def _config_files(dirs: list[Path], included: list[str]) -> list[Path]:
    """The files git reads its configuration from (system, global, the repository's, and
    what they include), as far as a stat can watch them."""
    home = Path(os.environ.get("HOME", "/"))
    xdg = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    names = [Path("/etc/gitconfig"), home / ".gitconfig", xdg / "git" / "config"]
    names += [d / "config" for d in dirs] + [d / "config.worktree" for d in dirs]
    return names + [Path(os.path.expanduser(p)) for p in included]


def _signature(files: list[Path]) -> tuple[object, ...]:
    out: list[object] = []
    for path in files:
        try:
            st = path.stat()
            out.append((str(path), st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
        except OSError:
            out.append((str(path), None))
    return tuple(out)


def _config_keys(project: Path, dirs: list[Path]) -> dict[str, str]:
    """The configuration keys that run programs (``git config --list``), read again only
    when a file they come from changed: one git process per change, not per check."""
    from forgeflare.security._git import run_git

    seen = _CONFIG_SEEN.get(project)
    if seen is not None:
        included = [v for k, v in seen[1].items() if k.startswith("git config include")]
        if _signature(_config_files(dirs, included)) == seen[0]:
            return dict(seen[1])
    found: dict[str, str] = {}
    done = run_git(project, "config", "--list", "--null", "--show-scope", timeout=30)
    if done.returncode == 0:
        tokens = done.stdout.split("\0")  # scope, then "key\nvalue", each NUL-ended
        for scope, rest in zip(tokens[0::2], tokens[1::2], strict=False):
            key, _, value = rest.partition("\n")
            if scope == "command" or not key or not runs_a_program(key, value):
                continue
            name = f"git config {key.lower()}"
            found[name] = (found[name] + "\n" + value) if name in found else value
        included = [v for k, v in found.items() if k.startswith("git config include")]
        _CONFIG_SEEN[project] = (_signature(_config_files(dirs, included)), dict(found))
    return found
