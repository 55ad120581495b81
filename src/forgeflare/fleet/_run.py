"""``forgeflare fleet run``: many ``forgeflare loop`` processes, each in its own worktree.

The fleet supervisor is trio: a capacity limiter runs ``parallel`` loops at once; each loop is
an ordinary ``forgeflare loop`` subprocess in a git worktree on its own branch, with its own
records; a watcher task sums the spend of every loop against the fleet's ``max_cost`` and
shows the usage window a loop met (the machine's window store, which every loop of the same
backend reads before each iteration, so the others wait or fall back). A loop
that finishes ``complete`` with commits is landed (see ``_land``). Everything the fleet knows is
in ``fleet.json``, replaced atomically on every change, so ``--resume`` after a ``kill -9``
ends what the dead fleet left running and goes on where it stopped.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import secrets
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import trio

from forgeflare._clock import utc_timestamp
from forgeflare._errors import ConfigError, ForgeflareError
from forgeflare.disk import RUNTIME_PATTERNS
from forgeflare.fleet._config import FleetFile, FleetLoop
from forgeflare.fleet._land import Landing, LandResult, is_land_outcome, land, land_pr
from forgeflare.fleet._state import (
    FleetRecord,
    LoopRecord,
    ended_without_finish,
    load_record,
    save_record,
    state_dir,
)
from forgeflare.platform import end_marked_processes, end_pids, is_alive, process_started, run_child
from forgeflare.security import hand_over, split_secrets
from forgeflare.supervisor import (
    GitResult,
    newest_run,
    read_windows,
    run_git,
    runs_root,
    window_store_path,
)

__all__ = [
    "FleetInterrupted",
    "FleetOptions",
    "end_leftovers",
    "finished_fleet",
    "fleet_spent",
    "land_one",
    "run_fleet",
]

# Every process of one fleet loop carries it: found however it detached, ended with the loop.
_LOOP_MARKER = "FORGEFLARE_FLEET_LOOP"
_LAND_MARKER = "FORGEFLARE_FLEET_LAND"


@contextlib.contextmanager
def _landing_lock(sdir: Path) -> Iterator[None]:
    """The fleet's landing lock (``landing.lock``, ``flock``): one landing at a time, also
    between a fleet and a ``fleet land`` of the same fleet. Released when its holder dies."""
    with open(sdir / "landing.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


class FleetInterrupted(ForgeflareError):
    """SIGINT or SIGTERM ended the fleet: its loops were ended; ``--resume`` goes on."""

    exit_code = 130


async def _on_signals(scope: trio.CancelScope, got: list[int]) -> None:
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for signum in signals:
            got.append(signum)
            scope.cancel()
            return


def end_leftovers(record: FleetRecord, grace: float) -> list[int]:
    """End the loop processes a dead fleet supervisor left running (TERM, grace, KILL).

    A loop ends its own agent and hooks on TERM and writes its records; KILL is the last resort.
    Only processes whose start time matches the record are signalled (pids are reused).
    """
    pids = [
        loop.pid
        for loop in record.loops
        if loop.pid is not None and is_alive(loop.pid, loop.pid_started)
    ]
    return end_pids(pids, grace)


@dataclass
class FleetOptions:
    """How to run a fleet."""

    fleet_file: Path
    fleet: FleetFile
    resume: bool = False
    again: bool = False
    """Start a new run of a finished fleet (its records are kept beside the new ones)."""
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    python: str = sys.executable
    log: Callable[[str], None] = print
    poll: float = 0.5
    grace: float = 10.0
    gate_timeout: float = 3600.0
    no_sandbox: bool = False
    """``fleet run --no-sandbox``: every loop runs its Bash commands unconfined."""


def _git(cwd: Path, *args: str) -> GitResult:
    return run_git(cwd, *args)


def _is_url(repo: str) -> bool:
    return "://" in repo or repo.startswith("git@")


def _repo_path(opts: FleetOptions, sdir: Path, loop: FleetLoop) -> Path:
    """The loop's repository on this machine (a URL is cloned once into the state folder)."""
    if not _is_url(loop.repo):
        path = Path(loop.repo)
        return (path if path.is_absolute() else opts.fleet_file.resolve().parent / path).resolve()
    clone = sdir / "clones" / hashlib.sha256(loop.repo.encode()).hexdigest()[:12]
    if not clone.is_dir():
        done = _git(sdir, "clone", "--quiet", loop.repo, str(clone))
        if done.returncode != 0:
            raise ConfigError(f"loop {loop.name}: cannot clone {loop.repo}: {done.stderr.strip()}")
    return clone


def _exclude_runtime_files(repo: Path) -> None:
    """Add forgeflare's run-time files to the repository's ``info/exclude`` (every worktree
    reads it), so an agent's ``git add -A`` never commits a loop's lock or records, even in a
    repository whose ``.gitignore`` does not list them."""
    done = _git(repo, "rev-parse", "--git-path", "info/exclude")
    if done.returncode != 0:
        return
    path = Path(done.stdout.strip())
    path = path if path.is_absolute() else repo / path
    try:
        old = path.read_text(encoding="utf-8") if path.exists() else ""
        have = {line.strip() for line in old.splitlines()}
        missing = [p for p in RUNTIME_PATTERNS if p not in have]
        if missing:
            path.parent.mkdir(parents=True, exist_ok=True)
            sep = "" if not old or old.endswith("\n") else "\n"
            block = "\n".join(["# forgeflare: what the loop writes", *missing])
            path.write_text(f"{old}{sep}{block}\n", encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot write: {exc.strerror or exc}") from exc


def _prepare_worktree(repo: Path, tree: Path, branch: str, base: str) -> None:
    _exclude_runtime_files(repo)
    if tree.is_dir() and (tree / ".git").exists():
        return
    if _git(repo, "rev-parse", "--verify", "--quiet", f"refs/heads/{base}").returncode != 0:
        raise ConfigError(f"{repo}: no branch {base!r} to start from")
    exists = _git(repo, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}").returncode == 0
    args = ["worktree", "add", "--quiet", str(tree)]
    args += [branch] if exists else ["-b", branch, base]
    done = _git(repo, *args)
    if done.returncode != 0:
        raise ConfigError(f"{repo}: cannot add a worktree for {branch}: {done.stderr.strip()}")


def fleet_spent(loops: list[LoopRecord]) -> float | None:
    """What the loops spent; ``None`` (cost unknown) when they used tokens and none had a price."""
    if not any(loop.cost_usd is not None for loop in loops) and any(loop.tokens for loop in loops):
        return None
    return round(sum(loop.cost_usd or 0.0 for loop in loops), 6)


class _Fleet:
    def __init__(self, opts: FleetOptions, record: FleetRecord, sdir: Path) -> None:
        self.opts = opts
        self.record = record
        self.sdir = sdir
        self.path = sdir / "fleet.json"
        self.limiter = trio.CapacityLimiter(opts.fleet.fleet.parallel)
        self.running: dict[str, trio.Process] = {}
        self.landing = trio.Lock()
        """One landing at a time: each rebases onto the base branch the one before moved."""
        self.saving = threading.Lock()
        """A landing saves from its worker thread while the other loops save from trio's: one
        writer at a time, each writing the record as it is then (never an older copy last)."""

    def save(self) -> None:
        with self.saving:
            save_record(self.path, self.record)

    def spend(self) -> float:
        total = 0.0
        for loop in self.record.loops:
            total += loop.cost_usd or 0.0
        return total

    def spent(self) -> float | None:
        return fleet_spent(self.record.loops)

    def _runs_root(self, loop: LoopRecord) -> Path | None:
        """Where the loop's runs are: its worktree's ``[paths] log_dir``."""
        return runs_root(Path(loop.worktree), self.opts.env) if loop.worktree else None

    def _refresh(self, loop: LoopRecord) -> None:
        root = self._runs_root(loop)
        newest = newest_run(root) if root is not None else None
        if newest is None:
            return
        run = newest[1]
        if run.run_id not in loop.runs:
            loop.runs.append(run.run_id)
        totals = run.totals
        loop.cost_usd, loop.tokens, loop.commits = totals.cost_usd, totals.tokens, totals.commits
        loop.finish_type = run.finish_type
        loop.question = run.question

    def _window(self) -> str | None:
        """The latest reset the machine's window store holds for one of the fleet's backends."""
        backends = {spec.backend for spec in self.opts.fleet.loop}
        windows = read_windows(window_store_path(self.opts.env))
        resets = [
            w.resets_at for s, w in windows.items() if s.agent.backend in backends and w.resets_at
        ]
        return utc_timestamp(max(resets)) if resets else None

    async def watch(self, done: trio.Event) -> None:
        """Spend across loops against the budget; one loop's usage limit shared with all."""
        max_cost = self.opts.fleet.fleet.max_cost
        while not done.is_set():
            for loop in self.record.loops:
                if loop.status == "running":
                    self._refresh(loop)
            self.record.spent_usd = self.spent()
            if max_cost and self.spend() >= max_cost and not self.record.budget_hit:
                self.record.budget_hit = True
                self.opts.log(f"fleet budget ${max_cost:g} spent: stopping the loops")
                for proc in self.running.values():
                    proc.send_signal(signal.SIGTERM)
            # The latest window met is kept once it has reset: fleet status says it was met.
            window = self._window()
            if window and window > (self.record.window_until or ""):
                self.record.window_until = window
                self.opts.log(f"usage limit reported: every loop waits until {window}")
            self.save()
            with trio.move_on_after(self.opts.poll):
                await done.wait()

    async def run_loop(self, spec: FleetLoop) -> None:
        loop = self.record.loop(spec.name)
        async with self.limiter:
            max_cost = self.opts.fleet.fleet.max_cost
            # The spend of a loop that just ended is counted before its slot frees: check it
            # here, not only the watcher's flag (a loop given --max-cost 0 would have no cap).
            if self.record.budget_hit or (max_cost and self.spend() >= max_cost):
                self.record.budget_hit = True
                loop.status, loop.reason = "stopped", "the fleet budget was spent first"
                self.save()
                return
            if (self.sdir / "stop").exists():
                loop.status, loop.reason = "stopped", "the fleet was stopped (fleet stop)"
                self.save()
                return
            await self._start_and_wait(spec, loop)
        self.save()  # finished is known before landing: a resumed fleet lands, never reruns it
        if loop.status == "finished":
            await self.land_only(spec)
        self.save()

    async def land_only(self, spec: FleetLoop) -> None:
        """Land one finished loop: one landing at a time in this fleet and across processes
        (``landing.lock``), recorded as ``landing`` with its gate's marker while it runs."""
        async with self.landing:
            await trio.to_thread.run_sync(self._land_locked, spec, self.record.loop(spec.name))
        self.save()

    def _land_locked(self, spec: FleetLoop, loop: LoopRecord) -> None:
        with _landing_lock(self.sdir):
            loop.status, loop.landing = "landing", secrets.token_hex(8)
            self.save()
            try:
                self._land(spec, loop)
            finally:
                loop.landing = None
                if loop.status == "landing":  # it raised: said as not landed, never lost
                    loop.status, loop.reason = "not_landed", "landing failed"
                self.save()

    def _argv(self, spec: FleetLoop, loop: LoopRecord, task: Path) -> list[str]:
        # -P: never the working directory first on sys.path (a committed trio.py there).
        argv = [self.opts.python, "-P", "-m", "forgeflare", "loop", "--dir", loop.worktree]
        argv += ["--mode", spec.mode, "--max-iterations", str(spec.max_iterations)]
        argv += ["--max-runtime", spec.max_runtime, "--task-file", str(task)]
        max_cost = spec.max_cost
        fleet_cost = self.opts.fleet.fleet.max_cost
        if fleet_cost:
            left = max(0.0, fleet_cost - self.spend())
            max_cost = left if max_cost is None else min(max_cost, left)
        if max_cost is not None:
            argv += ["--max-cost", f"{max_cost:.6f}"]
        if spec.backend != "forgeflare":
            argv += ["--backend", spec.backend]
        if spec.model:
            argv += ["--model", spec.model]
        if spec.agent_command:
            argv += ["--agent-cmd", spec.agent_command]
        if self.opts.no_sandbox:
            argv.append("--no-sandbox")
        return argv

    async def _start_and_wait(self, spec: FleetLoop, loop: LoopRecord) -> None:
        task = self.sdir / "tasks" / f"{spec.name}.md"
        task.parent.mkdir(parents=True, exist_ok=True)
        task.write_text(spec.prompt + "\n", encoding="utf-8")
        env = dict(self.opts.env)
        for key in ("FRESHER_LOG_DIR", "FRESHER_PLAN_FILE", "FRESHER_MODE"):
            env.pop(key, None)
        if spec.plan:
            env["FRESHER_PLAN_FILE"] = spec.plan
        marker = secrets.token_hex(8)
        log_path = self.sdir / "logs" / f"{spec.name}.log"
        log_path.parent.mkdir(parents=True, exist_ok=True)
        self.opts.log(f"{spec.name}: starting in {loop.worktree}")
        with log_path.open("ab") as log:

            def started(proc: trio.Process) -> None:
                self.running[spec.name] = proc
                loop.status, loop.pid = "running", proc.pid
                loop.pid_started = process_started(proc.pid)
                self.save()

            # The loop's own environment holds no secret (its children could read it): they
            # go through a descriptor the loop reads at start.
            env, key_fd = hand_over(*split_secrets(env))
            try:
                result = await run_child(
                    self._argv(spec, loop, task),
                    env={**env, _LOOP_MARKER: marker},
                    stdin=None,
                    on_output=log.write,
                    grace=self.opts.grace,
                    marker=(_LOOP_MARKER, marker),
                    on_start=started,
                    pass_fds=(key_fd,),
                )
            finally:
                os.close(key_fd)
                self.running.pop(spec.name, None)
        loop.exit_code = result.returncode
        loop.pid = loop.pid_started = None
        self._refresh(loop)
        if loop.finish_type is None:
            loop.status, loop.reason = ended_without_finish(
                result.returncode, budget_hit=self.record.budget_hit
            )
        else:
            loop.status = "finished"
        self.opts.log(f"{spec.name}: finished {loop.finish_type} (exit {result.returncode})")

    def _land(self, spec: FleetLoop, loop: LoopRecord) -> None:
        fleet = self.opts.fleet
        if self.record.budget_hit and loop.finish_type != "complete":
            # Ended by the fleet's budget (its own cap, or the TERM the watcher sent).
            loop.status = "stopped"
            loop.reason = f"the fleet budget was spent (the loop finished {loop.finish_type})"
            return
        if loop.question is not None:
            # Parked on a question: it waits for an answer, the other loops go on and land.
            loop.status = "not_landed"
            loop.reason = "blocked: the agent asks a question (forgeflare answer)"
            return
        if fleet.fleet.land == "none" or loop.finish_type != "complete":
            loop.status = "not_landed"
            loop.reason = (
                "land = none" if fleet.fleet.land == "none" else f"finished {loop.finish_type}"
            )
            return
        result = (
            self._land_pr(spec, loop) if fleet.fleet.land == "pr" else self._land_ff(spec, loop)
        )
        loop.land_status, loop.reason = result.status, result.reason
        loop.status = result.status if is_land_outcome(result.status) else "not_landed"
        self.opts.log(f"{spec.name}: {result.status}: {result.reason}")

    def _landing(self, spec: FleetLoop, loop: LoopRecord) -> Landing:
        return Landing(
            worktree=Path(loop.worktree),
            branch=loop.branch,
            base=spec.base,
            finish_type=loop.finish_type,
            gate=self.opts.fleet.fleet.gate,
            gate_timeout=self.opts.gate_timeout,
            marker=(_LAND_MARKER, loop.landing) if loop.landing else None,
        )

    def _land_ff(self, spec: FleetLoop, loop: LoopRecord) -> LandResult:
        return land(Path(loop.repo), self._landing(spec, loop))

    def _land_pr(self, spec: FleetLoop, loop: LoopRecord) -> LandResult:
        from forgeflare.fleet._report import loop_report_text

        task = spec.prompt.strip().splitlines()[0]
        title = f"{self.opts.fleet.fleet.name}/{spec.name}: {task}"
        title = title if len(title) <= 72 else title[:71] + "…"
        report = loop_report_text(loop) or "(no run record)"
        quoted = "\n".join(f"> {line}" for line in spec.prompt.strip().splitlines())
        body = (
            f"Loop `{spec.name}` of the forgeflare fleet `{self.opts.fleet.fleet.name}`.\n\n"
            f"Task:\n\n{quoted}\n\n```\n{report.rstrip()}\n```\n"
        )
        landing = self._landing(spec, loop)
        return land_pr(Path(loop.repo), landing, title=title, body=body, env=self.opts.env)


def _new_record(opts: FleetOptions, sdir: Path, attempt: int = 1) -> FleetRecord:
    fleet = opts.fleet
    # A later run gets branches and worktrees of its own: the earlier run's stay as they are.
    suffix = "" if attempt == 1 else f"-{attempt}"
    loops = []
    for spec in fleet.loop:
        repo = _repo_path(opts, sdir, spec)
        loops.append(
            LoopRecord(
                name=spec.name,
                branch=fleet.branch(spec) + suffix,
                worktree=str(sdir / "worktrees" / f"{spec.name}{suffix}"),
                repo=str(repo),
            )
        )
    return FleetRecord(
        name=fleet.fleet.name,
        fleet_file=str(opts.fleet_file.resolve()),
        started_at=utc_timestamp(),
        loops=loops,
        attempt=attempt,
    )


def finished_fleet(opts: FleetOptions) -> FleetRecord | None:
    """The record of this fleet when it has finished (``fleet run`` then says so and stops,
    unless ``again``), else ``None``."""
    old = load_record(state_dir(opts.fleet_file, opts.fleet.fleet.name) / "fleet.json")
    return old if old is not None and old.finished_at is not None else None


async def _fleet_record(opts: FleetOptions, sdir: Path) -> FleetRecord:
    """The record this run continues (--resume), or a new one (a first run, --again)."""
    path = sdir / "fleet.json"
    old = load_record(path)
    if old is not None and old.finished_at is None:
        if is_alive(old.pid, old.pid_started):
            raise ConfigError(f"fleet {old.name} is still running, pid {old.pid}")
        if not opts.resume:
            raise ConfigError(
                f"fleet {old.name} has an unfinished run (its supervisor died): "
                "continue it with `forgeflare fleet run --resume`"
            )
        gone = {loop.name for loop in old.loops if not is_alive(loop.pid, loop.pid_started)}
        ended = end_leftovers(old, opts.grace)
        if ended:
            opts.log(f"ended {len(ended)} loop process(es) the dead fleet left running")
        record = old
        await trio.to_thread.run_sync(_resume_landings, record, opts)
        _requeue_running(record, finished=_finished_by_itself(record, gone, opts.env))
    elif old is not None and not opts.again:
        raise ConfigError(
            f"fleet {old.name} has finished ({old.finished_at}): "
            "`forgeflare fleet run --again` starts a new run"
        )
    elif old is not None:
        # --again: the finished run's record is kept beside the new one.
        path.replace(sdir / f"fleet.{old.attempt}.json")
        record = _new_record(opts, sdir, old.attempt + 1)
    else:
        # git clone of a URL: in a worker thread, the event loop never waits on git.
        record = await trio.to_thread.run_sync(_new_record, opts, sdir)
    return record


def _requeue_running(record: FleetRecord, finished: frozenset[str] = frozenset()) -> None:
    """Loops recorded as running go back to pending (their process is gone), except those in
    ``finished``: their run ended by itself, so they are landed, not run again."""
    for loop in record.loops:
        if loop.status == "running":
            loop.status = "finished" if loop.name in finished else "pending"
            loop.pid = loop.pid_started = None


def _finished_by_itself(
    record: FleetRecord, gone: set[str], env: Mapping[str, str]
) -> frozenset[str]:
    """The loops recorded as running whose process had ended before this resume (not ended
    by it) and whose newest run has a finish: the dead fleet did not see them finish."""
    done: set[str] = set()
    for loop in record.loops:
        if loop.status != "running" or loop.name not in gone or not loop.worktree:
            continue
        newest = newest_run(runs_root(Path(loop.worktree), env))
        if newest is not None and newest[1].finish_type is not None:
            run = newest[1]
            if run.run_id not in loop.runs:
                loop.runs.append(run.run_id)
            loop.finish_type, loop.question = run.finish_type, run.question
            done.add(loop.name)
    return frozenset(done)


def _resume_landings(record: FleetRecord, opts: FleetOptions) -> None:
    """A landing the dead fleet left: end its gate (by its marker), undo a rebase it left half
    done, and mark the loop finished, so that it is landed again, one gate at a time."""
    for loop in record.loops:
        if loop.landing is None and loop.status != "landing":
            continue
        if loop.landing is not None:
            ended = end_marked_processes(_LAND_MARKER, loop.landing, opts.grace)
            if ended:
                opts.log(f"{loop.name}: ended the gate the dead fleet left running")
        if loop.worktree and Path(loop.worktree).is_dir():
            _git(Path(loop.worktree), "rebase", "--abort")  # fails harmlessly when none
        loop.status, loop.landing = "finished", None


async def run_fleet(opts: FleetOptions) -> FleetRecord:
    """Run (or resume) the fleet until every loop has finished and landed or not."""
    sdir = state_dir(opts.fleet_file, opts.fleet.fleet.name)
    sdir.mkdir(parents=True, exist_ok=True)
    ignore = sdir.parent / ".gitignore"
    if not ignore.exists():
        # The fleet file often sits in the repository it works on: keep the worktrees and
        # records out of that repository's status and `git add -A`.
        ignore.write_text("*\n", encoding="utf-8")
    record = await _fleet_record(opts, sdir)
    # A stop asked of an earlier run does not stop this one.
    (sdir / "stop").unlink(missing_ok=True)
    record.pid = os.getpid()
    record.pid_started = process_started(os.getpid())
    record.finished_at = None
    fleet = _Fleet(opts, record, sdir)
    for spec in opts.fleet.loop:
        loop = record.loop(spec.name)
        if loop.status == "pending":
            await trio.to_thread.run_sync(
                _prepare_worktree, Path(loop.repo), Path(loop.worktree), loop.branch, spec.base
            )
    fleet.save()
    done = trio.Event()
    got: list[int] = []
    async with trio.open_nursery() as outer:
        outer.start_soon(fleet.watch, done)
        loops = trio.CancelScope()
        outer.start_soon(_on_signals, loops, got)
        # Each loop's task ends its process (TERM, grace, KILL) when cancelled.
        with loops:
            async with trio.open_nursery() as nursery:
                for spec in opts.fleet.loop:
                    status = record.loop(spec.name).status
                    if status == "pending":
                        nursery.start_soon(fleet.run_loop, spec)
                    elif status == "finished":
                        # The dead fleet ended before landing this loop: land it now.
                        nursery.start_soon(fleet.land_only, spec)
        done.set()
        outer.cancel_scope.cancel()
    if got:
        _requeue_running(record)
        record.pid = record.pid_started = None
        fleet.save()
        name = signal.Signals(got[0]).name
        raise FleetInterrupted(
            f"{name}: the fleet's loops were ended; continue with `forgeflare fleet run --resume`"
        )
    record.spent_usd = fleet.spent()
    record.finished_at = utc_timestamp()
    fleet.save()
    return record


def land_one(opts: FleetOptions, name: str) -> LoopRecord:
    """``fleet land``: retry loop ``name``'s landing, the very step ``fleet run`` takes after
    a loop finishes, with how its newest run finished read anew (it may have run on since).

    Refused with a :class:`ConfigError` (exit 2) for a name the fleet file and record do not
    both have, a fleet that has not run or still runs (it lands its loops itself), ``land =
    "none"`` and a loop that has not finished. The record is saved whatever the outcome.
    """
    fleet_file, spec_file = opts.fleet_file, opts.fleet
    sdir = state_dir(fleet_file, spec_file.fleet.name)
    record = load_record(sdir / "fleet.json")
    if record is None:
        raise ConfigError(f"fleet {spec_file.fleet.name} has not run yet: forgeflare fleet run")
    names = [loop.name for loop in record.loops]
    spec = next((s for s in spec_file.loop if s.name == name), None)
    if spec is None or name not in names:
        raise ConfigError(f"{fleet_file}: no loop {name!r} (its loops: {', '.join(names)})")
    if record.finished_at is None and is_alive(record.pid, record.pid_started):
        raise ConfigError(
            f"fleet {record.name} is running (pid {record.pid}): it lands {name} itself"
        )
    if spec_file.fleet.land == "none":
        raise ConfigError(f'{fleet_file}: land = "none": the fleet lands nothing')
    loop = record.loop(name)
    if loop.status in ("pending", "running") or not loop.worktree:
        raise ConfigError(f"loop {name} has not finished: forgeflare fleet run --resume")
    if loop.status in ("landed", "pr_opened"):
        return loop
    fleet = _Fleet(opts, record, sdir)
    fleet._refresh(loop)
    try:
        fleet._land(spec, loop)
    finally:
        record.spent_usd = fleet.spent()
        fleet.save()
    return loop
