"""Landing a fleet loop's work: rebase onto the base branch, run the gate, fast-forward.

What may land is a pure decision (:func:`may_land`): only a loop that finished ``complete``
with at least one commit of its own. The shell (:func:`land`) then works in the loop's worktree:
``git rebase <base>`` (a conflict aborts the rebase and leaves the branch as it was), the gate
command, and a fast-forward of the base branch — never a merge commit, never a force. A base
branch checked out in another work tree is moved only when that tree is clean (its files are
updated with it); otherwise the branch is left and the result says so.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeGuard, get_args

from forgeflare.security import run_project_gate_blocking
from forgeflare.supervisor import GitResult, box_settings, run_git

__all__ = [
    "LandOutcome",
    "LandResult",
    "Landing",
    "is_land_outcome",
    "land",
    "land_pr",
    "may_land",
    "pr_remote",
]

LandOutcome = Literal["landed", "pr_opened", "conflict", "gate_failed", "base_dirty"]
"""The results of landing that a fleet loop's status keeps (any other is ``not_landed``)."""

LandStatus = Literal[LandOutcome, "not_complete", "no_commits", "no_pr", "error"]


@dataclass(frozen=True)
class LandResult:
    """What landing did, in a word and a sentence."""

    status: LandStatus
    reason: str
    commits: int = 0

    @property
    def landed(self) -> bool:
        return self.status in ("landed", "pr_opened")


@dataclass(frozen=True)
class Landing:
    """What to land: ``branch``, checked out in ``worktree``, into ``base`` once ``gate`` passes."""

    worktree: Path
    branch: str
    base: str
    finish_type: str | None
    """How the loop finished: only ``complete`` lands."""
    gate: str = ""
    """A command that must pass in the worktree after the rebase (empty: none)."""
    gate_timeout: float = 3600
    marker: tuple[str, str] | None = None
    """An environment variable the gate and its descendants carry: a resumed fleet ends a gate
    its killed supervisor left running by it (no second gate beside it)."""


def is_land_outcome(status: str) -> TypeGuard[LandOutcome]:
    """Is ``status`` a result of landing that a fleet loop's status keeps?"""
    return status in get_args(LandOutcome)


def may_land(finish_type: str | None, commits: int) -> LandResult | None:
    """``None`` when the loop may land; else why not (never a loop that did not complete)."""
    if finish_type != "complete":
        return LandResult("not_complete", f"the loop finished {finish_type or 'unfinished'}")
    if commits <= 0:
        return LandResult("no_commits", "the loop completed without a commit of its own")
    return None


def _git(cwd: Path, *args: str) -> GitResult:
    return run_git(cwd, *args)


def _last_line(proc: GitResult | subprocess.CompletedProcess[str]) -> str:
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


def _prepare(landing: Landing) -> LandResult:
    """Count, refuse, rebase and gate: ``status == "landed"`` here means ready to land."""
    worktree, branch, base, gate = landing.worktree, landing.branch, landing.base, landing.gate
    count = _git(worktree, "rev-list", "--count", f"{base}..{branch}")
    commits = int(count.stdout.strip() or 0) if count.returncode == 0 else 0
    refused = may_land(landing.finish_type, commits)
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
        # The one gate runner: in the sandbox, without the fleet's secrets.
        done = run_project_gate_blocking(
            gate,
            project=worktree,
            settings=box_settings(worktree, os.environ),
            env=os.environ,
            timeout=landing.gate_timeout,
            marker=landing.marker,  # a resumed fleet finds (and ends) the gate a dead one left
            die_with_parent=True,  # a fleet killed with -9 does not leave its gate running
        )
        if done.exit_code != 0:
            lines = done.output.strip().splitlines()
            last = lines[-1] if lines else "no output"
            how = "did not finish" if done.exit_code is None else f"exited {done.exit_code}"
            return LandResult("gate_failed", f"gate `{gate}` {how}: {last}", commits)
    return LandResult("landed", "ready", commits)


def land(repo: Path, landing: Landing) -> LandResult:
    """Land the branch (checked out in its worktree) into the base branch of ``repo``."""
    worktree, branch, base = landing.worktree, landing.branch, landing.base
    ready = _prepare(landing)
    if not ready.landed:
        return ready
    commits = ready.commits
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


def pr_remote(repo: Path) -> str | None:
    """The remote a pull request goes to: ``origin``, else the only remote, else ``None``."""
    remotes = _git(repo, "remote").stdout.split()
    if "origin" in remotes:
        return "origin"
    return remotes[0] if len(remotes) == 1 else None


def land_pr(
    repo: Path,
    landing: Landing,
    *,
    title: str,
    body: str,
    env: Mapping[str, str] | None = None,
) -> LandResult:
    """Push the branch (never forced) and open a pull request into the base with ``gh``.

    The same refusals, rebase and gate as :func:`land` come first. Without a remote or ``gh``
    the branch stays as it is and the result says so in one line.
    """
    worktree, branch, base = landing.worktree, landing.branch, landing.base
    remote = pr_remote(repo)
    if remote is None:
        return LandResult(
            "no_pr", f"land = pr: {repo} has no git remote; the work stays on {branch}"
        )
    path = None if env is None else env.get("PATH")
    gh = shutil.which("gh", path=path)
    if gh is None:
        return LandResult("no_pr", f"land = pr: gh is not installed; the work stays on {branch}")
    ready = _prepare(landing)
    if not ready.landed:
        return ready
    commits = ready.commits
    # No --force: a remote branch that moved elsewhere is refused, not overwritten.
    push = _git(worktree, "push", "--quiet", remote, f"{branch}:refs/heads/{branch}")
    if push.returncode != 0:
        return LandResult(
            "error", f"git push {remote} {branch} failed: {_last_line(push)}", commits
        )
    argv = [gh, "pr", "create", "--base", base, "--head", branch, "--title", title]
    try:
        opened = subprocess.run(
            [*argv, "--body-file", "-"],
            cwd=worktree,
            input=body,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
            env=None if env is None else dict(env),
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return LandResult("error", f"gh pr create failed: {exc}", commits)
    if opened.returncode != 0:
        return LandResult("error", f"gh pr create failed: {_last_line(opened)}", commits)
    url = (opened.stdout.strip().splitlines() or ["(no url)"])[-1]
    return LandResult("pr_opened", f"pushed to {remote}; pull request {url}", commits)
