"""The loop's checkpoint: after every iteration, what the agent left uncommitted is committed
by the loop (``[fresher] checkpoint``), and the clean check a claim is judged on.

The decisions are :mod:`._delivery`'s (pure); this is the shell: ``git status``, attributes,
stale locks (psutil finds a live git), the commit, and what the terminal says.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import trio

from forgeflare.supervisor._delivery import (
    Change,
    CheckpointPlan,
    Delivered,
    exclude_pathspec,
    lock_is_stale,
    plan_checkpoint,
    undelivered_reason,
)
from forgeflare.supervisor._git import STATUS_ARGS, GitSnapshot, git, snapshot_of
from forgeflare.supervisor._loopstate import LoopState
from forgeflare.supervisor._records import CheckpointRecord, ClaimRecord, IterationRecord

__all__ = [
    "CLAIM_REASON_FILE",
    "FALLBACK_IDENTITY",
    "LOCK_WAIT",
    "LoopDelivery",
    "Status",
    "git_dir",
    "identity_env",
    "lock_holders",
    "read_status",
]

FALLBACK_IDENTITY = ("forgeflare", "forgeflare@localhost")
CLAIM_REASON_FILE = "last-claim-reason.txt"
"""In the run folder: why the last claim was refused (FRESHER_LAST_CLAIM_REASON_FILE)."""
_LOCKS = ("index.lock", "HEAD.lock")
_IN_PROGRESS = (
    ("MERGE_HEAD", "merge"),
    ("rebase-merge", "rebase"),
    ("rebase-apply", "rebase"),
    ("CHERRY_PICK_HEAD", "cherry-pick"),
    ("REVERT_HEAD", "revert"),
)
_POLL = 0.1
_SHOWN = 100
"""Paths a record keeps of a list (a build tree nobody ignored must not bloat run.json)."""
LOCK_WAIT = 10.0
"""Seconds a checkpoint waits for a git lock a live git process holds, then skips."""


@dataclass(frozen=True, slots=True)
class Status:
    """The work tree's changes inside the pathspec, and where HEAD is."""

    changes: tuple[Change, ...]
    detached: bool
    tracked: frozenset[str]
    """Changed paths git already tracks (what a gate must not change)."""
    snapshot: GitSnapshot
    """The same output as the finish decision's snapshot (no second ``git status``)."""

    @property
    def paths(self) -> list[str]:
        return [c.path for c in self.changes]


async def read_status(
    project: Path, spec: list[str], env: Mapping[str, str] | None = None
) -> Status | None:
    """``git status`` of ``project`` inside ``spec`` (``None``: git failed)."""
    done = await git(project, *STATUS_ARGS, *spec, env=env)
    if not done.ok:
        return None
    entries = done.stdout.split("\0")
    changes: list[Change] = []
    tracked: set[str] = set()
    detached = False
    i = 0
    while i < len(entries):
        entry = entries[i]
        i += 1
        if not entry:
            continue
        if entry.startswith("# branch.head "):
            detached = entry.endswith("(detached)")
            continue
        if entry.startswith("#"):
            continue
        kind = entry[0]
        if kind == "?":
            path = entry[2:]
            try:
                size: int | None = os.lstat(project / path).st_size
            except OSError:
                size = None
            changes.append(Change(path, untracked=True, size=size))
            continue
        if kind == "1":
            path = entry.split(" ", 8)[8]
        elif kind == "2":
            path = entry.split(" ", 9)[9]
            origin = entries[i]
            i += 1  # a rename's origin is the next entry
            changes.append(Change(origin))
            tracked.add(origin)
        elif kind == "u":
            path = entry.split(" ", 10)[10]
        else:
            continue
        changes.append(Change(path))
        tracked.add(path)
    snapshot = snapshot_of(project, os.fsencode(done.stdout))
    return Status(tuple(changes), detached, frozenset(tracked), snapshot)


async def _filtered(project: Path, paths: list[str]) -> set[str]:
    """The paths with a ``filter=`` attribute (LFS)."""
    found: set[str] = set()
    for at in range(0, len(paths), 200):
        done = await git(project, "check-attr", "-z", "filter", "--", *paths[at : at + 200])
        fields = done.stdout.split("\0")
        for k in range(0, len(fields) - 2, 3):
            if fields[k + 2] not in ("unspecified", "unset", ""):
                found.add(fields[k])
    return found


def git_dir(project: Path) -> Path | None:
    """The work tree's git directory (a worktree's own), found without running git."""
    dot = project / ".git"
    if dot.is_dir():
        return dot
    try:
        line = dot.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None
    if not line.startswith("gitdir:"):
        return None
    found = Path(line.removeprefix("gitdir:").strip())
    return found if found.is_absolute() else (project / found).resolve()


def _inside(path: str, roots: tuple[str, ...]) -> bool:
    return any(path == root or path.startswith(root + os.sep) for root in roots)


def lock_holders(project: Path, gitdir: Path) -> list[int]:
    """Pids of this user's ``git`` processes working in ``project`` or its git directory."""
    import psutil

    roots = (str(project.resolve()), str(gitdir.resolve()))
    uid = os.getuid()
    found: list[int] = []
    for proc in psutil.process_iter(["name", "uids"]):
        try:
            if proc.info["name"] != "git" or proc.info["uids"].real != uid:
                continue
            if _inside(proc.cwd(), roots):
                found.append(proc.pid)
        except (psutil.Error, AttributeError):
            continue
    return found


def identity_env(*, name: bool, email: bool) -> dict[str, str]:
    """The ``GIT_AUTHOR_*``/``GIT_COMMITTER_*`` the loop and its agent use for what git's
    identity lacks (``name``/``email``: it has that part; empty: it has both)."""
    fallback_name, fallback_email = FALLBACK_IDENTITY
    env: dict[str, str] = {}
    for role in ("AUTHOR", "COMMITTER"):
        if not name:
            env[f"GIT_{role}_NAME"] = fallback_name
        if not email:
            env[f"GIT_{role}_EMAIL"] = fallback_email
    return env


class LoopDelivery(LoopState):
    """The delivery part of the loop (a base of the loop; its state is :class:`LoopState`)."""

    @property
    def pathspec(self) -> list[str]:
        """The one pathspec of the checkpoint, the clean check and the git snapshot."""
        try:
            log_dir = self.log_root.relative_to(self.project).as_posix()
        except ValueError:
            log_dir = ""  # outside the project: git does not see it
        return exclude_pathspec(log_dir)

    def git_env(self) -> dict[str, str]:
        """The loop's environment for git, with the fallback identity when there is none."""
        return {**self.opts.env, **self.git_identity}

    async def identity(self) -> tuple[bool, bool]:
        """Whether git knows the name and the email of who commits here (its config, or
        ``GIT_AUTHOR_*`` and ``GIT_COMMITTER_*``)."""
        env = self.opts.env
        known = []
        for part in ("name", "email"):
            upper = part.upper()
            if env.get(f"GIT_AUTHOR_{upper}") and env.get(f"GIT_COMMITTER_{upper}"):
                known.append(True)
                continue
            done = await git(self.project, "config", "--get", f"user.{part}", env=env)
            known.append(bool(done.stdout.strip()))
        return known[0], known[1]

    async def dirty_paths(self, limit: int | None = _SHOWN) -> list[str] | None:
        """Changed paths inside the pathspec, less those changed at the loop's start, at most
        ``limit`` of them (``None``: not a git repository or git failed)."""
        if not self.git_repo:
            return None
        status = await read_status(self.project, self.pathspec, self.opts.env)
        if status is None:
            return None
        start = set(self.record.dirty_at_start)
        return [p for p in status.paths if p not in start][:limit]

    async def tracked_changes(self) -> frozenset[str]:
        """Tracked paths that differ from HEAD (what a gate must leave alone)."""
        status = await read_status(self.project, self.pathspec, self.opts.env)
        return status.tracked if status is not None else frozenset()

    async def clear_locks(self, since: float) -> str | None:
        """Remove a stale ``index.lock``/``HEAD.lock``; wait :data:`LOCK_WAIT` for a live
        one (``FORGEFLARE_TIME_SCALE`` scales it). Returns why the checkpoint must be
        skipped (a lock held), or ``None``."""
        gitdir = git_dir(self.project)
        if gitdir is None:
            return None
        deadline = time.monotonic() + LOCK_WAIT * self.time_scale
        for name in _LOCKS:
            lock = gitdir / name
            while True:
                try:
                    mtime = lock.stat().st_mtime
                except OSError:
                    break  # no lock
                holders = await trio.to_thread.run_sync(lock_holders, self.project, gitdir)
                if lock_is_stale(lock_mtime=mtime, since=since, holders=holders):
                    try:
                        lock.unlink()
                    except FileNotFoundError:
                        break
                    except OSError as exc:
                        return f"cannot remove the stale {name}: {exc.strerror}"
                    self.display.warn(
                        f"removed a stale {lock} (no git process holds it; a crash left it)"
                    )
                    self.lock_removed = name
                    break
                if time.monotonic() >= deadline:
                    pid = str(holders[0]) if holders else "unknown"
                    return f"lock held by pid {pid} ({name})"
                await trio.sleep(_POLL)
        return None

    async def checkpoint(self, number: int, since: float) -> Delivered:
        """Commit what the agent left uncommitted after iteration ``number`` (see module)."""
        mode = self.cfg.fresher.checkpoint
        self.lock_removed = None
        if not self.git_repo:
            return Delivered(CheckpointRecord(skipped="not a git repository"))
        if mode == "off":
            return Delivered(CheckpointRecord(skipped="checkpoint = off"))
        held = await self.clear_locks(since)
        if held is not None:
            self.display.warn(f"iteration {number}: checkpoint skipped: {held}")
            return Delivered(CheckpointRecord(skipped=held, lock_removed=self.lock_removed))
        status = await read_status(self.project, self.pathspec, self.opts.env)
        if status is None:
            failed = CheckpointRecord(failed="git status failed", lock_removed=self.lock_removed)
            return Delivered(failed)
        start = set(self.record.dirty_at_start)
        everything = [p for p in status.paths if p not in start][:_SHOWN]
        plan = await self._plan(status)
        left = [p.rsplit(": ", 1)[0] for p in plan.left_out]
        left = [p for p in left if p not in start][:_SHOWN]
        record = CheckpointRecord(
            left_out=list(plan.left_out[:_SHOWN]), lock_removed=self.lock_removed
        )
        fresh = [p for p in plan.left_out if not p.endswith(": changed before the loop started")]
        if fresh:
            more = f" and {len(fresh) - 3} more" if len(fresh) > 3 else ""
            self.display.warn(
                f"iteration {number}: left out of the checkpoint: {'; '.join(fresh[:3])}{more}"
            )
        if plan.skip is not None:
            if plan.skip != "nothing to commit":
                self.display.warn(f"iteration {number}: checkpoint skipped: {plan.skip}")
            dirty = left if plan.skip == "nothing to commit" else everything
            skipped = record.model_copy(update={"skipped": plan.skip})
            return Delivered(skipped, dirty, status.snapshot)
        if mode == "warn":
            self.display.warn(
                f"iteration {number}: {len(plan.add)} uncommitted path(s) left (checkpoint = warn)"
            )
            warned = record.model_copy(update={"skipped": "checkpoint = warn"})
            return Delivered(warned, everything, status.snapshot)
        made = await self._commit(number, plan)
        return Delivered(
            record.model_copy(update=made), left if "sha" in made else everything, None
        )

    async def _plan(self, status: Status) -> CheckpointPlan:
        gitdir = git_dir(self.project)
        in_progress = None
        if gitdir is not None:
            in_progress = next(
                (what for name, what in _IN_PROGRESS if (gitdir / name).exists()), None
            )
        start = set(self.record.dirty_at_start)
        paths = [c.path for c in status.changes if c.path not in start]
        filtered = await _filtered(self.project, paths) if paths else set()
        changes = [Change(c.path, c.untracked, c.size, c.path in filtered) for c in status.changes]
        return plan_checkpoint(
            changes,
            at_start=self.record.dirty_at_start,
            in_progress=in_progress,
            detached=status.detached,
        )

    async def _commit(self, number: int, plan: CheckpointPlan) -> dict[str, str]:
        env = self.git_env()
        message = (
            f"forgeflare: checkpoint after iteration {number}\n\n"
            f"Forgeflare-Run: {self.record.run_id}\n"
        )
        paths = list(plan.add)
        added = await git(self.project, "add", "-A", "--", *paths, env=env)
        done = added
        if added.ok:
            # --only the planned paths: what the agent staged beyond them stays out.
            done = await git(
                self.project, "commit", "-q", "--no-verify", "-m", message, "--", *paths, env=env
            )
        if not done.ok:
            lines = (done.stderr or done.stdout).strip().splitlines() or [f"exit {done.returncode}"]
            why = next((ln for ln in lines if ln.startswith(("fatal", "error"))), lines[0])
            self.display.error(f"iteration {number}: the checkpoint commit failed: {why}")
            return {"failed": why}
        head = await git(self.project, "rev-parse", "HEAD", env=env)
        sha = head.stdout.strip()
        self.display.info(
            f"iteration {number}: checkpoint {sha[:10]}: committed {len(paths)} path(s) the "
            "agent left uncommitted"
        )
        return {"sha": sha}

    async def undelivered(self, it: IterationRecord) -> str | None:
        """Why iteration ``it``'s claim cannot complete: its work is not in git (one line with
        the command to look), or ``None``."""
        if not self.git_repo:
            return None  # complete keeps its 0.3 meaning (the banner said so)
        checkpoint = it.checkpoint
        dirty = it.dirty if checkpoint is not None else await self.dirty_paths() or []
        rec = self.record
        checked = 0
        if rec.plan_unchecked_at_start is not None and it.plan_unchecked is not None:
            checked = max(0, rec.plan_unchecked_at_start - it.plan_unchecked)
        return undelivered_reason(
            checkpoint_failed=checkpoint.failed if checkpoint is not None else None,
            dirty=dirty,
            commits=rec.totals.commits + it.commits,
            boxes_checked=checked,
            where=str(self.project),
        )

    def note_claim(self, claim: ClaimRecord) -> None:
        """Keep the claim's fate for the hooks (FRESHER_LAST_CLAIM and its reason file)."""
        self.last_claim = "accepted" if claim.accepted else "refused"
        self.last_claim_reason = "" if claim.accepted else claim.why
        path = self.store.dir / CLAIM_REASON_FILE
        try:
            path.write_text(self.last_claim_reason + "\n" if self.last_claim_reason else "")
        except OSError as exc:
            self.display.warn(f"{path}: cannot write: {exc.strerror}")
