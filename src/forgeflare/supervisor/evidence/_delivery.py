"""Delivery decisions, pure: what a checkpoint commits, when a git lock is stale, and whether a
claim's work is delivered (``[fresher] checkpoint``; DESIGN "Delivery").

Nothing here runs git or reads files: :mod:`._checkpoint` gathers the facts (``git status``,
sizes, attributes, processes) and applies the answers.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from forgeflare.disk import RUNTIME_PATTERNS

if TYPE_CHECKING:  # annotations only: the rules stay free of records and git
    from forgeflare.supervisor.evidence._git import GitSnapshot
    from forgeflare.supervisor.records._records import CheckpointRecord

__all__ = [
    "MAX_FILE_BYTES",
    "MAX_NEW_FILES",
    "STOPHOOK_FILES",
    "Change",
    "CheckpointPlan",
    "Delivered",
    "exclude_pathspec",
    "lock_is_stale",
    "plan_checkpoint",
    "secret_shaped",
    "undelivered_reason",
]

MAX_FILE_BYTES = 10 * 1024 * 1024
"""A new file at least this big is left out of a checkpoint."""
MAX_NEW_FILES = 1000
"""More new files than this and the checkpoint is skipped (a build tree nobody ignored)."""
_SECRET_NAMES = (".env*", "*.pem", "*.key", "id_*")
STOPHOOK_FILES = (".forgeflare/loop-reviews/", ".claude/idle-loop.local.md")
"""What the stop-hook writes in a project: never committed, never dirt."""


@dataclass(frozen=True, slots=True)
class Delivered:
    """A checkpoint's outcome: its record, what is left uncommitted (``None``: unknown), and
    the work tree's snapshot when the checkpoint changed nothing (``None``: take a new one)."""

    record: CheckpointRecord
    dirty: list[str] | None = None
    snapshot: GitSnapshot | None = None


@dataclass(frozen=True, slots=True)
class Change:
    """One changed path of the work tree (``git status``)."""

    path: str
    untracked: bool = False
    size: int | None = None
    """Bytes of a new file (``None``: gone or unknown)."""
    filtered: bool = False
    """The path has a ``filter=`` attribute (LFS): git would run a program to add it."""


@dataclass(frozen=True, slots=True)
class CheckpointPlan:
    """What a checkpoint adds, what it leaves out (``path: why``), or why it is skipped."""

    add: tuple[str, ...] = ()
    left_out: tuple[str, ...] = ()
    skip: str | None = None


def secret_shaped(path: str) -> bool:
    """A name that usually holds a secret (``.env*``, ``*.pem``, ``*.key``, ``id_*``)."""
    name = PurePosixPath(path).name
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in _SECRET_NAMES)


def plan_checkpoint(
    changes: Sequence[Change],
    *,
    at_start: Iterable[str] = (),
    in_progress: str | None = None,
    detached: bool = False,
) -> CheckpointPlan:
    """The checkpoint of ``changes`` (already inside the pathspec).

    Skipped during a merge/rebase/cherry-pick (``in_progress`` names it), on a detached HEAD,
    with more than :data:`MAX_NEW_FILES` new files, or with nothing to add. Left out: paths
    changed before the loop started (``at_start``), secret-shaped names, LFS paths, new files
    of :data:`MAX_FILE_BYTES` or more.
    """
    if in_progress:
        return CheckpointPlan(skip=f"a {in_progress} is in progress")
    if detached:
        return CheckpointPlan(skip="detached HEAD")
    start = frozenset(at_start)
    add: list[str] = []
    left: list[str] = []
    new = 0
    for change in changes:
        why = None
        if change.path in start:
            why = "changed before the loop started"
        elif secret_shaped(change.path):
            why = "secret-shaped name"
        elif change.filtered:
            why = "has a filter= attribute (LFS)"
        elif change.untracked and (change.size or 0) >= MAX_FILE_BYTES:
            why = "10 MB or more"
        if why is not None:
            left.append(f"{change.path}: {why}")
            continue
        new += change.untracked
        add.append(change.path)
    if new > MAX_NEW_FILES:
        return CheckpointPlan(
            left_out=tuple(left), skip=f"{new} new files (more than {MAX_NEW_FILES:,})"
        )
    if not add:
        return CheckpointPlan(left_out=tuple(left), skip="nothing to commit")
    return CheckpointPlan(add=tuple(add), left_out=tuple(left))


def exclude_pathspec(log_dir: str) -> list[str]:
    """The one pathspec of the checkpoint and the clean check: the whole tree but forgeflare's
    runtime files, the run records (``log_dir``) and the stop-hook's files."""
    spec = ["--", "."]
    patterns = [*RUNTIME_PATTERNS, *STOPHOOK_FILES]
    log = log_dir.strip().strip("/")
    if log and not log.startswith(".."):
        patterns.append(log + "/")
    for pattern in dict.fromkeys(patterns):
        glob = pattern + "**" if pattern.endswith("/") else pattern
        spec.append(f":(exclude,glob){glob}")
        if not pattern.endswith("/"):
            continue
        # a directory git reports as one untracked entry (``dir/``) is matched by name too
        spec.append(f":(exclude,glob){pattern.rstrip('/')}")
    return spec


def lock_is_stale(*, lock_mtime: float, since: float, holders: Sequence[int]) -> bool:
    """A git lock no live git of ours holds, left before ``since`` (the run's last agent exit,
    or a resume's start): a crash left it and nothing will remove it."""
    return not holders and lock_mtime < since


def undelivered_reason(
    *,
    checkpoint_failed: str | None,
    dirty: Sequence[str],
    commits: int,
    boxes_checked: int,
    where: str,
) -> str | None:
    """Why a claim's work is not delivered, in one line with the command to look (``None``:
    it is). ``commits`` are the run's; ``boxes_checked`` the plan boxes checked since it
    started; ``where`` the project directory."""
    look = f"see `git -C {where} status`"
    if checkpoint_failed:
        return f"undelivered: the loop's checkpoint commit failed ({checkpoint_failed}); {look}"
    if dirty:
        shown = ", ".join(dirty[:3]) + (f" and {len(dirty) - 3} more" if len(dirty) > 3 else "")
        return f"undelivered: uncommitted changes left ({shown}); {look}"
    if commits == 0 and boxes_checked > 0:
        return (
            f"undelivered: {boxes_checked} plan box(es) checked but no commit was made; "
            f"see `git -C {where} log`"
        )
    return None
