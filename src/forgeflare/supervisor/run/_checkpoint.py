"""The loop's checkpoint: after every iteration, what the agent left uncommitted is committed
by the loop (``[fresher] checkpoint``), and the clean check a claim is judged on.

The decisions are :mod:`._delivery`'s (pure); this is the shell: ``git status``, attributes,
stale locks (psutil finds a live git), the commit, and what the terminal says.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

import trio

from forgeflare._words import plural
from forgeflare.supervisor.backends import Backend
from forgeflare.supervisor.evidence._delivery import (
    Change,
    CheckpointPlan,
    Delivered,
    exclude_pathspec,
    lock_is_stale,
    plan_checkpoint,
    undelivered_reason,
)
from forgeflare.supervisor.evidence._finish import Finish, FinishType, Verdict
from forgeflare.supervisor.evidence._git import (
    STATUS_ARGS,
    GitSnapshot,
    git,
    git_snapshot,
    snapshot_of,
)
from forgeflare.supervisor.records._records import CheckpointRecord, ClaimRecord, IterationRecord
from forgeflare.supervisor.run._runbook import RunBook
from forgeflare.supervisor.run._setup import LoopSetup

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
_FAILURES = 2
"""Checkpoint commits failing this many times in a row end the loop ``undelivered``."""


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


class LoopDelivery:
    """The loop's delivery: git's state, the checkpoint after every iteration, the clean
    check a claim is judged on, and the last claim's fate."""

    def __init__(self, setup: LoopSetup, book: RunBook) -> None:
        self.setup = setup
        self.book = book
        self.git_repo = False
        """Whether the project is a git repository (known once :meth:`start` ran)."""
        self.git_identity: dict[str, str] = {}
        """``GIT_AUTHOR_*``/``GIT_COMMITTER_*`` when git has no identity (empty: it has one)."""
        self.lock_removed: str | None = None
        self.checkpoint_failures = 0
        """Checkpoints in a row whose commit failed."""
        self.last_claim = "none"
        """``none`` / ``accepted`` / ``refused``: the last claim's fate (FRESHER_LAST_CLAIM)."""
        self.last_claim_reason = ""
        """Why the last claim was refused (the file FRESHER_LAST_CLAIM_REASON_FILE names)."""

    async def start(self) -> bool:
        """Learn whether the project is a git repository; returns it."""
        self.git_repo = await git_snapshot(self.setup.project) is not None
        return self.git_repo

    async def snapshot(self) -> GitSnapshot | None:
        """Git's state inside the pathspec (``None``: no git repository)."""
        if not self.git_repo:
            return None
        return await git_snapshot(self.setup.project, spec=self.pathspec)

    def count(self, it: IterationRecord) -> None:
        """Keep the streak of failed checkpoint commits with iteration ``it``'s."""
        failed = it.checkpoint is not None and it.checkpoint.failed is not None
        self.checkpoint_failures = self.checkpoint_failures + 1 if failed else 0

    def delivery_rules(self, ruling: Verdict) -> Verdict:
        """Checkpoints that keep failing end the loop; an unchanged iteration after a refusal
        says the refusal."""
        action = ruling.action
        if self.checkpoint_failures >= _FAILURES and not isinstance(action, Finish):
            why = (
                f"undelivered: {self.checkpoint_failures} checkpoint commits failed in a row; "
                f"see `git -C {self.setup.project} status`"
            )
            return replace(ruling, action=Finish(FinishType.UNDELIVERED, why))
        if (
            isinstance(action, Finish)
            and action.type is FinishType.NO_CHANGES
            and self.last_claim == "refused"
            and self.last_claim_reason
        ):
            why = f"no_changes: nothing changed after the refused claim ({self.last_claim_reason})"
            return replace(ruling, action=Finish(FinishType.NO_CHANGES, why))
        return ruling

    async def delivery_banner(self, backend: Backend) -> None:
        """What the checkpoint will do: no git, no identity, changes it will never commit."""
        display, cfg = self.setup.display, self.setup.cfg
        if not self.git_repo:
            display.info(
                "no checkpoint outside git: complete means the agent's claim held (as in 0.3)"
            )
            return
        has_name, has_email = await self.identity()
        if not (has_name and has_email):
            self.git_identity = identity_env(name=has_name, email=has_email)
            name, email = FALLBACK_IDENTITY
            if has_name or has_email:
                what, used = ("user.email", email) if has_name else ("user.name", name)
                said = f"git has no {what} here: the loop and the agent commit with {used}"
            else:
                said = (
                    f"git has no identity here: the loop and the agent commit as {name} <{email}>"
                )
            display.warn(said + " (GIT_AUTHOR_*/GIT_COMMITTER_*)")
        dirty = self.book.record.dirty_at_start
        if dirty:
            shown = ", ".join(dirty[:3]) + (f" and {len(dirty) - 3} more" if len(dirty) > 3 else "")
            display.warn(
                f"{plural(len(dirty), 'path')} changed before the loop started ({shown}): "
                "left as they are, never committed by the loop"
            )
        if not backend.commits_itself and cfg.fresher.checkpoint == "commit":
            display.info(
                f"the {backend.name} agent cannot commit in its sandbox: the loop's "
                "checkpoint commits its work after every iteration"
            )
        if cfg.fresher.checkpoint != "commit":
            display.warn(
                f"checkpoint = {cfg.fresher.checkpoint}: the loop does not commit what the "
                "agent leaves; a claim completes only on a clean work tree"
            )

    async def resume_delivery(self, *, killed: bool) -> None:
        """Before the first iteration of a resume: stale locks go, and the killed iteration's
        leftovers are checkpointed on its ``killed`` row (``killed``: the resume recorded one)."""
        rec = self.book.record
        if not killed or not rec.iterations:
            held = await self.clear_locks(time.time())
            if held is not None:
                self.setup.display.warn(f"resume: {held}")
            return
        row = rec.iterations[-1]
        delivered = await self.checkpoint(row.number, time.time())
        checkpoint = delivered.record
        commits = row.commits + (1 if checkpoint.sha else 0)
        rec.totals.commits += commits - row.commits
        # A new row object: the store serialises a row once, so a changed one must be new.
        rec.iterations[-1] = row.model_copy(
            update={
                "checkpoint": checkpoint,
                "commits": commits,
                "head_after": checkpoint.sha or row.head_after,
                "dirty": delivered.dirty or [],
            }
        )
        self.book.save()

    @property
    def pathspec(self) -> list[str]:
        """The one pathspec of the checkpoint, the clean check and the git snapshot."""
        try:
            log_dir = self.setup.log_root.relative_to(self.setup.project).as_posix()
        except ValueError:
            log_dir = ""  # outside the project: git does not see it
        return exclude_pathspec(log_dir)

    def git_env(self) -> dict[str, str]:
        """The loop's environment for git, with the fallback identity when there is none."""
        return {**self.setup.opts.env, **self.git_identity}

    async def identity(self) -> tuple[bool, bool]:
        """Whether git knows the name and the email of who commits here (its config, or
        ``GIT_AUTHOR_*`` and ``GIT_COMMITTER_*``)."""
        env = self.setup.opts.env
        known = []
        for part in ("name", "email"):
            upper = part.upper()
            if env.get(f"GIT_AUTHOR_{upper}") and env.get(f"GIT_COMMITTER_{upper}"):
                known.append(True)
                continue
            done = await git(self.setup.project, "config", "--get", f"user.{part}", env=env)
            known.append(bool(done.stdout.strip()))
        return known[0], known[1]

    async def dirty_paths(self, limit: int | None = _SHOWN) -> list[str] | None:
        """Changed paths inside the pathspec, less those changed at the loop's start, at most
        ``limit`` of them (``None``: not a git repository or git failed)."""
        if not self.git_repo:
            return None
        status = await read_status(self.setup.project, self.pathspec, self.setup.opts.env)
        if status is None:
            return None
        start = set(self.book.record.dirty_at_start)
        return [p for p in status.paths if p not in start][:limit]

    async def tracked_changes(self) -> frozenset[str]:
        """Tracked paths that differ from HEAD (what a gate must leave alone)."""
        status = await read_status(self.setup.project, self.pathspec, self.setup.opts.env)
        return status.tracked if status is not None else frozenset()

    async def clear_locks(self, since: float) -> str | None:
        """Remove a stale ``index.lock``/``HEAD.lock``; wait :data:`LOCK_WAIT` for a live
        one (``FORGEFLARE_TIME_SCALE`` scales it). Returns why the checkpoint must be
        skipped (a lock held), or ``None``."""
        gitdir = git_dir(self.setup.project)
        if gitdir is None:
            return None
        deadline = time.monotonic() + LOCK_WAIT * self.setup.time_scale
        for name in _LOCKS:
            lock = gitdir / name
            while True:
                try:
                    mtime = lock.stat().st_mtime
                except OSError:
                    break  # no lock
                holders = await trio.to_thread.run_sync(lock_holders, self.setup.project, gitdir)
                if lock_is_stale(lock_mtime=mtime, since=since, holders=holders):
                    try:
                        lock.unlink()
                    except FileNotFoundError:
                        break
                    except OSError as exc:
                        return f"cannot remove the stale {name}: {exc.strerror}"
                    self.setup.display.warn(
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
        mode = self.setup.cfg.fresher.checkpoint
        self.lock_removed = None
        if not self.git_repo:
            return Delivered(CheckpointRecord(skipped="not a git repository"))
        if mode == "off":
            return Delivered(CheckpointRecord(skipped="checkpoint = off"))
        held = await self.clear_locks(since)
        if held is not None:
            self.setup.display.warn(f"iteration {number}: checkpoint skipped: {held}")
            return Delivered(CheckpointRecord(skipped=held, lock_removed=self.lock_removed))
        status = await read_status(self.setup.project, self.pathspec, self.setup.opts.env)
        if status is None:
            failed = CheckpointRecord(failed="git status failed", lock_removed=self.lock_removed)
            return Delivered(failed)
        start = set(self.book.record.dirty_at_start)
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
            self.setup.display.warn(
                f"iteration {number}: left out of the checkpoint: {'; '.join(fresh[:3])}{more}"
            )
        if plan.skip is not None:
            if plan.skip != "nothing to commit":
                self.setup.display.warn(f"iteration {number}: checkpoint skipped: {plan.skip}")
            dirty = left if plan.skip == "nothing to commit" else everything
            skipped = record.model_copy(update={"skipped": plan.skip})
            return Delivered(skipped, dirty, status.snapshot)
        if mode == "warn":
            self.setup.display.warn(
                f"iteration {number}: {len(plan.add)} uncommitted path(s) left (checkpoint = warn)"
            )
            warned = record.model_copy(update={"skipped": "checkpoint = warn"})
            return Delivered(warned, everything, status.snapshot)
        made = await self._commit(number, plan)
        return Delivered(
            record.model_copy(update=made), left if "sha" in made else everything, None
        )

    async def _plan(self, status: Status) -> CheckpointPlan:
        gitdir = git_dir(self.setup.project)
        in_progress = None
        if gitdir is not None:
            in_progress = next(
                (what for name, what in _IN_PROGRESS if (gitdir / name).exists()), None
            )
        start = set(self.book.record.dirty_at_start)
        paths = [c.path for c in status.changes if c.path not in start]
        filtered = await _filtered(self.setup.project, paths) if paths else set()
        changes = [Change(c.path, c.untracked, c.size, c.path in filtered) for c in status.changes]
        return plan_checkpoint(
            changes,
            at_start=self.book.record.dirty_at_start,
            in_progress=in_progress,
            detached=status.detached,
        )

    async def _commit(self, number: int, plan: CheckpointPlan) -> dict[str, str]:
        env = self.git_env()
        message = (
            f"forgeflare: checkpoint after iteration {number}\n\n"
            f"Forgeflare-Run: {self.book.record.run_id}\n"
        )
        paths = list(plan.add)
        added = await git(self.setup.project, "add", "-A", "--", *paths, env=env)
        done = added
        if added.ok:
            # --only the planned paths: what the agent staged beyond them stays out.
            done = await git(
                self.setup.project,
                "commit",
                "-q",
                "--no-verify",
                "-m",
                message,
                "--",
                *paths,
                env=env,
            )
        if not done.ok:
            lines = (done.stderr or done.stdout).strip().splitlines() or [f"exit {done.returncode}"]
            why = next((ln for ln in lines if ln.startswith(("fatal", "error"))), lines[0])
            self.setup.display.error(f"iteration {number}: the checkpoint commit failed: {why}")
            return {"failed": why}
        head = await git(self.setup.project, "rev-parse", "HEAD", env=env)
        sha = head.stdout.strip()
        self.setup.display.info(
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
        rec = self.book.record
        checked = 0
        if rec.plan_unchecked_at_start is not None and it.plan_unchecked is not None:
            checked = max(0, rec.plan_unchecked_at_start - it.plan_unchecked)
        return undelivered_reason(
            checkpoint_failed=checkpoint.failed if checkpoint is not None else None,
            dirty=dirty,
            commits=rec.totals.commits + it.commits,
            boxes_checked=checked,
            where=str(self.setup.project),
        )

    def note_claim(self, claim: ClaimRecord) -> None:
        """Keep the claim's fate for the hooks (FRESHER_LAST_CLAIM and its reason file)."""
        self.last_claim = "accepted" if claim.accepted else "refused"
        self.last_claim_reason = "" if claim.accepted else claim.why
        path = self.book.store.dir / CLAIM_REASON_FILE
        try:
            path.write_text(self.last_claim_reason + "\n" if self.last_claim_reason else "")
        except OSError as exc:
            self.setup.display.warn(f"{path}: cannot write: {exc.strerror}")
