"""Landing a fleet loop's work: rebase onto the base branch, run the gate, fast-forward.

What may land is a pure decision (:func:`may_land`): only a loop that finished ``complete``
with at least one commit of its own. The shell (:func:`land`) then works in the loop's worktree:
``git rebase <base>`` (a conflict aborts the rebase and leaves the branch as it was), the gate
command, and a fast-forward of the base branch — never a merge commit, never a force. A base
branch checked out in another work tree is moved only when that tree is clean (its files are
updated with it); otherwise the branch is left and the result says so.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = ["LandResult", "land", "may_land"]

LandStatus = Literal[
    "landed", "not_complete", "no_commits", "conflict", "gate_failed", "base_dirty", "error"
]


@dataclass(frozen=True)
class LandResult:
    """What landing did, in a word and a sentence."""

    status: LandStatus
    reason: str
    commits: int = 0

    @property
    def landed(self) -> bool:
        return self.status == "landed"


def may_land(finish_type: str | None, commits: int) -> LandResult | None:
    """``None`` when the loop may land; else why not (never a loop that did not complete)."""
    if finish_type != "complete":
        return LandResult("not_complete", f"the loop finished {finish_type or 'unfinished'}")
    if commits <= 0:
        return LandResult("no_commits", "the loop completed without a commit of its own")
    return None


def _git(cwd: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
    )


def _last_line(proc: subprocess.CompletedProcess[str]) -> str:
    lines = (proc.stderr.strip() or proc.stdout.strip()).splitlines()
    return lines[-1] if lines else f"exit {proc.returncode}"


def _checked_out_at(repo: Path, branch: str) -> Path | None:
    """The work tree that has ``branch`` checked out, if any."""
    out = _git(repo, "worktree", "list", "--porcelain").stdout
    tree: Path | None = None
    for line in out.splitlines():
        if line.startswith("worktree "):
            tree = Path(line.removeprefix("worktree "))
        elif line == f"branch refs/heads/{branch}" and tree is not None:
            return tree
    return None


def land(
    *,
    repo: Path,
    worktree: Path,
    branch: str,
    base: str,
    gate: str = "",
    finish_type: str | None,
    gate_timeout: float = 3600,
) -> LandResult:
    """Land ``branch`` (checked out in ``worktree``) into ``base`` of ``repo``."""
    count = _git(worktree, "rev-list", "--count", f"{base}..{branch}")
    commits = int(count.stdout.strip() or 0) if count.returncode == 0 else 0
    refused = may_land(finish_type, commits)
    if refused is not None:
        return refused
    dirty = _git(worktree, "status", "--porcelain", "--untracked-files=no").stdout.split("\n")
    changed = [line[3:] for line in dirty if line.strip()]
    if changed:
        # Uncommitted work is not the loop's result: say so rather than "rebase failed".
        files = ", ".join(changed[:5]) + (" ..." if len(changed) > 5 else "")
        return LandResult(
            "error", f"uncommitted changes in the loop's worktree ({files}); not landed", commits
        )
    rebase = _git(worktree, "rebase", "--quiet", base)
    if rebase.returncode != 0:
        conflicted = _git(worktree, "diff", "--name-only", "--diff-filter=U").stdout.split()
        _git(worktree, "rebase", "--abort")
        files = ", ".join(conflicted[:5]) or _last_line(rebase)
        return LandResult("conflict", f"rebase onto {base} conflicts in {files}", commits)
    if gate:
        try:
            proc = subprocess.run(
                ["bash", "-c", gate],
                cwd=worktree,
                capture_output=True,
                text=True,
                timeout=gate_timeout,
                check=False,
                process_group=0,
            )
        except subprocess.TimeoutExpired:
            return LandResult("gate_failed", f"gate `{gate}` timed out", commits)
        if proc.returncode != 0:
            return LandResult(
                "gate_failed",
                f"gate `{gate}` exited {proc.returncode}: {_last_line(proc)}",
                commits,
            )
    tip = _git(worktree, "rev-parse", "HEAD").stdout.strip()
    holder = _checked_out_at(repo, base)
    if holder is not None:
        if _git(holder, "status", "--porcelain", "--untracked-files=no").stdout.strip():
            return LandResult(
                "base_dirty",
                f"{base} is checked out in {holder} with uncommitted changes; "
                f"the work stays on {branch}",
                commits,
            )
        merged = _git(holder, "merge", "--ff-only", "--quiet", tip)
    else:
        # Moves the branch only if it is a fast-forward, like `git push` without --force.
        merged = _git(repo, "fetch", "--quiet", ".", f"{tip}:refs/heads/{base}")
    if merged.returncode != 0:
        return LandResult("error", f"fast-forward of {base} failed: {_last_line(merged)}", commits)
    return LandResult("landed", f"{commits} commit(s) fast-forwarded into {base}", commits)
