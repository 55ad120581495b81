"""The Ralph loop: lifecycle hooks, one fresh agent per iteration, the finish decision.

One trio task runs the loop; a second (when on a terminal) redraws the status line; the CLI
adds a third that turns SIGINT / SIGTERM into stop requests. Each iteration:

1. limits (iterations, runtime); 2. ``next_iteration`` hook (1 skips, 2 aborts);
3. the agent, prompt on stdin, in its own process group, output to ``iteration-NNN.log`` and
the terminal, killed (TERM, grace, KILL) at the iteration timeout or the runtime limit;
4. the pure :func:`~forgeflare.supervisor._finish.decide`.

The loop keeps the run and its finish (open or resume the run, the ``started`` and
``finished`` hooks, the summary); its parts are bases of :class:`_Loop`, each in its own
module: one step (:mod:`._step`), the checks before anything of the project runs
(:mod:`._checks`), the evidence of an iteration (:mod:`._proof`), running one iteration's
agent (:mod:`._iteration`), the waits (:mod:`._waiting`) and the agent switching
(:mod:`._switching`). The state they share is declared once, in :mod:`._loopstate`.

Stale ``convergence.json``: before each agent starts, the supervisor deletes the file and
takes its stat (inode, mtime, size) if it could not. After the agent, only a file that exists
and differs from that stat counts, so an earlier iteration's ``final`` (or a file from an
agent that never writes one) can never complete a run.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import trio

from forgeflare._budget import overshoot_line
from forgeflare._clock import format_wait, utc_timestamp
from forgeflare._evidence import Measures
from forgeflare._gitguard import git_fingerprint
from forgeflare._pgroup import become_subreaper, escaped_descendants, process_started
from forgeflare._sandbox import loop_sandbox
from forgeflare._secrets import child_environment
from forgeflare._words import plural
from forgeflare.supervisor._agentproc import StopControl
from forgeflare.supervisor._blocked import take_answer
from forgeflare.supervisor._checkpoint import (
    CLAIM_REASON_FILE,
    FALLBACK_IDENTITY,
    LoopDelivery,
    identity_env,
)
from forgeflare.supervisor._checks import LoopChecks, hook_record
from forgeflare.supervisor._config import parse_on_blocked
from forgeflare.supervisor._display import LoopDisplay
from forgeflare.supervisor._dryrun import bounds_words
from forgeflare.supervisor._fallback import AgentSpec, parse_agent_spec
from forgeflare.supervisor._finish import Finish, FinishType, Limits, hook_verdict
from forgeflare.supervisor._git import git_snapshot
from forgeflare.supervisor._history import finish_reason
from forgeflare.supervisor._iteration import IterationRunner
from forgeflare.supervisor._lifecycle import HookContext
from forgeflare.supervisor._notify import Notifier, notify_urls
from forgeflare.supervisor._options import LoopOptions
from forgeflare.supervisor._proof import LoopProof
from forgeflare.supervisor._records import (
    RUN_MARKER,
    RecordError,
    RunRecord,
    RunSettings,
    RunStore,
    new_run_id,
)
from forgeflare.supervisor._resume import open_resumable
from forgeflare.supervisor._step import LoopStep
from forgeflare.supervisor._stop import clear_stop, stop_request_age
from forgeflare.supervisor._switching import AgentSwitching
from forgeflare.supervisor._waiting import LoopWaits
from forgeflare.supervisor._waits import WaitSettings, WaitStreaks
from forgeflare.supervisor._windowstore import window_store_path
from forgeflare.supervisor.backends import BACKENDS
from forgeflare.trust import TrustError, default_trust_file, trust_override

__all__ = ["LoopResult", "run_loop", "watch_signals"]


@dataclass
class LoopResult:
    """How the loop ended and where its records are."""

    finish_type: FinishType
    run_dir: Path
    record: RunRecord

    @property
    def exit_code(self) -> int:
        """The supervisor's exit status."""
        return self.finish_type.exit_code


class _Loop(
    LoopStep, LoopProof, LoopDelivery, LoopChecks, IterationRunner, LoopWaits, AgentSwitching
):
    def __init__(self, opts: LoopOptions, display: LoopDisplay, stop: StopControl) -> None:
        self.opts = opts
        self.cfg = opts.config
        self.display = display
        self.stop = stop
        self.project = opts.project_dir.resolve()
        self.log_root = self.project / self.cfg.paths.log_dir
        self.t0 = time.monotonic()
        self.base_active = 0.0
        self.limits = Limits(
            max_iterations=self.cfg.fresher.max_iterations,
            max_runtime=self.cfg.limits.max_runtime,
            smart_termination=self.cfg.fresher.smart_termination,
            max_consecutive_errors=self.cfg.limits.max_consecutive_errors,
            stuck_after=self.cfg.limits.stuck_after,
            max_skips=self.cfg.limits.max_skips,
            iteration_timeout=self.cfg.limits.iteration_timeout,
            max_cost=self.cfg.limits.max_cost,
            error_pause=self.cfg.limits.error_pause * _time_scale(opts.env),
            gate=bool(self.cfg.limits.gate or self.cfg.finish.reviewer),
            stall_after=self.cfg.limits.stall_after,
            waits=WaitSettings(max_outage=self.cfg.limits.max_outage, jitter=5.0),
        )
        self.last_exit = 0
        self.last_duration = 0.0
        self.git_repo = False
        self.git_last = None
        self.backend = self.cfg.backend()
        self.profile = ""
        self.primary = self.current = AgentSpec(self.backend.name)
        self.fallbacks = [parse_agent_spec(text) for text in self.cfg.agent.fallback]
        if self.fallbacks:
            display.agent = self.primary.label
        self.windows = {}
        self.window_file = window_store_path(opts.env)
        self.wait_streaks = WaitStreaks()
        self.finish_reason = None
        self.last_gate = ""
        self.finishing = False
        self.records_failure = None
        self.time_scale = _time_scale(opts.env)
        self.answer_wait = parse_on_blocked(self.cfg.limits.on_blocked)
        self.notified_blocked = False
        self.sandbox = None
        self.sandbox_env = {}
        self.preamble = ""
        self.no_progress = 0
        self.measures = Measures()
        self.seen_trees = set()
        self.last_tree = None
        self.refused = ""
        self.git_identity = {}
        self.resumed_killed = False
        self.lock_removed = None
        self.checkpoint_failures = 0
        self.last_claim = "none"
        self.last_claim_reason = ""
        self.last_review = None
        config_dir = default_trust_file(opts.env).parent
        self.notifier = Notifier(
            command=self.cfg.notify.command,
            urls=notify_urls(opts.env, config_dir),
            on=tuple(e.strip() for e in self.cfg.notify.on.split(",") if e.strip()),
            cwd=self.project,
            env=child_environment(opts.env, opts.pass_env),
            log=self.display.warn,
        )

    def context(self, *, iteration: int | None = None, finish_type: str = "") -> HookContext:
        rec = self.record
        return HookContext(
            mode=rec.mode,
            max_iterations=self.cfg.fresher.max_iterations,
            project_dir=self.project,
            log_dir=self.store.dir,
            started_at=rec.started_at,
            plan_file=self.project / self.cfg.paths.plan_file,
            spec_dir=self.project / self.cfg.paths.spec_dir,
            run_id=rec.run_id,
            iteration=rec.iterations_done if iteration is None else iteration,
            last_exit_code=self.last_exit,
            last_duration=self.last_duration,
            commits_made=rec.totals.commits,
            total_iterations=rec.totals.iterations,
            duration=self.elapsed(),
            finish_type=finish_type,
            finish_reason=(rec.finish_reason or "") if finish_type else "",
            last_gate=self.last_gate,
            last_claim=self.last_claim,
            last_claim_reason_file=self.store.dir / CLAIM_REASON_FILE,
        )

    def open_run(self) -> None:
        if self.opts.resume:
            resumed = open_resumable(self.log_root, self.project, grace=self.cfg.agent.kill_grace)
            self.store, self.record = resumed.store, resumed.record
            self.record.resumes += 1
            self.base_active = self.record.totals.active_seconds
            if resumed.ended:
                self.display.warn(
                    f"ended {resumed.ended} process(es) the killed supervisor left running"
                )
            if resumed.killed is not None:
                it = resumed.killed
                self.resumed_killed = True
                self.finish_iteration(it, "killed", counted=True)
                self.display.warn(
                    f"iteration {it.number} was cut short by the crash: recorded as killed"
                    + (f" with {it.commits} commit(s)" if it.commits else "")
                )
            self.reopen_blocked()
            agent_runs = [it for it in self.record.iterations if not it.skipped]
            if agent_runs:
                self.last_exit = agent_runs[-1].exit_code or 0
                self.last_duration = agent_runs[-1].duration
            kept = " with the settings it started with" if self.record.settings else ""
            self.display.info(
                f"resuming run {self.record.run_id} after iteration "
                f"{self.record.iterations_done}{kept}"
            )
        else:
            run_id = new_run_id()
            self.store = RunStore(self.log_root / run_id)
            self.store.create()
            self.record = RunRecord(
                run_id=run_id,
                mode=self.cfg.fresher.mode,
                project_dir=str(self.project),
                started_at=utc_timestamp(),
                max_iterations=self.cfg.fresher.max_iterations,
                backend=self.backend.name,
                max_runtime=self.cfg.limits.max_runtime,
                max_cost=self.cfg.limits.max_cost,
                plan_file=self.cfg.paths.plan_file,
                plan_unchecked_at_start=self.plan_unchecked(),
                settings=RunSettings(
                    config=self.cfg.model_dump(mode="json"),
                    task=self.opts.task,
                    pass_env=list(self.opts.pass_env),
                    raw=self.opts.raw,
                    trust_project=self.opts.trust_project,
                    project_command=self.opts.project_command,
                ),
            )
            stale = stop_request_age(self.project)
            if stale is not None:
                self.display.warn(
                    f"dropped a stop request from {format_wait(stale)} ago (.fresher/stop-request):"
                    " it was made before this loop started"
                )
            clear_stop(self.project)
        self.record.supervisor_pid = os.getpid()
        self.record.supervisor_started = process_started(os.getpid())
        self.display.log_file = self.store.dir / "loop.log"
        self.display.hooks_log = self.store.dir / "hooks.log"
        self.save()
        if self.opts.resume:
            self.store.event("run_resumed", run_id=self.record.run_id)
        else:
            self.store.event("run_started", run_id=self.record.run_id, mode=self.record.mode)
            self.display.info(
                f"run {self.record.run_id} ({self.record.mode} mode) in {self.store.dir}"
            )
        self.banner()
        self.check_credit(self.log_root)

    def reopen_blocked(self) -> None:
        """A run that finished ``blocked`` goes on; its answer starts the next prompt."""
        rec = self.record
        if rec.finish_type != FinishType.BLOCKED.value:
            return
        rec.finished_at = rec.finish_type = rec.exit_code = rec.finish_reason = None
        preamble = take_answer(self.store.dir, rec)
        if preamble is not None:
            self.preamble = preamble
            self.display.info("the question was answered: the next prompt starts with both")
        elif rec.question is not None:
            self.display.warn(
                "resuming without an answer to the open question (forgeflare answer writes one)"
            )
            rec.question = None

    def banner(self) -> None:
        """Every bound of the night, and what is trusted how."""
        fallbacks = [spec.label for spec in self.fallbacks]
        self.display.info(f"bounds: {bounds_words(self.cfg, self.backend.name, fallbacks)}")
        if self.sandbox is not None:
            getattr(self.display, self.sandbox.level)(self.sandbox.line)
        if trust_override(self.opts.env, self.opts.trust_project):  # the one override parser
            self.display.warn("trusting the project's hooks without review (--trust-project)")

    async def run(self) -> LoopResult:
        """Start the run, step until a verdict finishes it, then finish it."""
        await self.start()
        finish: FinishType | None = None
        said = False
        try:
            if not self.opts.resume:
                started = await self.hook("started", self.context())
                self.record.hooks.append(hook_record(started, 0))
                self.save()
                verdict = hook_verdict(
                    started.status.value, stopped=self.stop.stop.is_set(), skippable=False
                )
                if isinstance(verdict, Finish):
                    finish = verdict.type
            if finish is None:
                await self.baseline()
            while finish is None:
                finish = await self.iterate()
        except RecordError as exc:
            # Disk full or a read-only run folder: finish properly, say once what failed.
            self.display.error(str(exc))
            self.finish_reason = "stopped: the run records could not be written"
            finish = FinishType.ERROR
            said = True
        return await self.finish(finish, records_said=said)

    async def start(self) -> None:
        """The sandbox decided once, the run opened (or resumed), git's starting point."""
        security = self.cfg.security
        self.sandbox, self.sandbox_env = await loop_sandbox(
            self.project,
            setting=security.sandbox,
            backend=self.backend.name,
            box=self.backend.box,
            network=security.sandbox_network,
            writable=security.writable,
            sockets=security.sockets,
            env=child_environment(self.opts.env, self.opts.pass_env),
            readable=security.readable,
        )
        self.open_run()
        self.git_start = await trio.to_thread.run_sync(git_fingerprint, self.project)
        for warning in self.opts.warnings:
            self.display.warn(warning)
        self.git_repo = await git_snapshot(self.project) is not None
        said_git = any(w.startswith(_NO_GIT) for w in self.opts.warnings)
        if not self.git_repo and not said_git:  # the preflight said it already: once is enough
            self.display.info(
                "not a git repository: commits are not counted and no_changes never applies"
            )
        elif self.record.head_at_start is None:
            snap = await self.snapshot()
            self.record.head_at_start = snap.head if snap else None
            if not self.opts.resume:
                # every one of them: a path left off this list would be committed
                self.record.dirty_at_start = await self.dirty_paths(limit=None) or []
        await self.delivery_banner()
        if self.opts.resume and self.git_repo:
            await self.resume_delivery()
        elif self.git_repo:
            held = await self.clear_locks(time.time())  # a crash before this run left one
            if held is not None:
                self.display.warn(f"at start: {held}")

    async def delivery_banner(self) -> None:
        """What the checkpoint will do: no git, no identity, changes it will never commit."""
        if not self.git_repo:
            self.display.info(
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
            self.display.warn(said + " (GIT_AUTHOR_*/GIT_COMMITTER_*)")
        dirty = self.record.dirty_at_start
        if dirty:
            shown = ", ".join(dirty[:3]) + (f" and {len(dirty) - 3} more" if len(dirty) > 3 else "")
            self.display.warn(
                f"{plural(len(dirty), 'path')} changed before the loop started ({shown}): "
                "left as they are, never committed by the loop"
            )
        if not self.backend.commits_itself and self.cfg.fresher.checkpoint == "commit":
            self.display.info(
                f"the {self.backend.name} agent cannot commit in its sandbox: the loop's "
                "checkpoint commits its work after every iteration"
            )
        if self.cfg.fresher.checkpoint != "commit":
            self.display.warn(
                f"checkpoint = {self.cfg.fresher.checkpoint}: the loop does not commit what the "
                "agent leaves; a claim completes only on a clean work tree"
            )

    async def resume_delivery(self) -> None:
        """Before the first iteration of a resume: stale locks go, and the killed iteration's
        leftovers are checkpointed on its ``killed`` row."""
        rec = self.record
        if not self.resumed_killed or not rec.iterations:
            held = await self.clear_locks(time.time())
            if held is not None:
                self.display.warn(f"resume: {held}")
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
        self.save()

    async def finish(self, finish: FinishType, *, records_said: bool) -> LoopResult:
        """Record how the run ended, run the finished hook, sum up and notify.

        ``records_said``: a records failure ended the run and was said already."""
        self.finishing = True
        if finish is not FinishType.HOOK_ABORT:
            try:  # the last iteration's plants too: never a clean finish over them
                await trio.to_thread.run_sync(self.check_git_internals)
            except TrustError as exc:
                self.say_refusal(str(exc))
                self.finish_reason = f"stopped: {exc}"
                finish = FinishType.HOOK_ABORT
        if finish is FinishType.MANUAL:
            self.display.warn(f"stopped by {self.stop.signal_name or 'request'}")
        self.display.info(f"finishing: {finish.value}")
        rec = self.record
        rec.current = None
        rec.finish_type = finish.value
        rec.exit_code = finish.exit_code
        rec.finished_at = utc_timestamp()
        rec.finish_reason = self.finish_reason or finish_words(rec)
        refused = self.last_claim_reason if self.last_claim == "refused" else ""
        if finish in (FinishType.COMPLETE, FinishType.MANUAL, FinishType.BLOCKED):
            refused = ""
        if refused and refused not in rec.finish_reason:
            rec.finish_reason += f"; the last claim was refused: {refused}"
        if finish is FinishType.BUDGET:
            used = [it.backend or rec.backend for it in rec.iterations if not it.skipped]
            bounds = {name: BACKENDS[name].overshoot for name in used or [rec.backend]}
            rec.finish_reason += f"; {overshoot_line(bounds)}"
        finished = await self.hook(
            "finished", self.context(finish_type=finish.value, iteration=rec.iterations_done)
        )
        rec.hooks.append(hook_record(finished, rec.iterations_done))
        try:
            self.save()
            self.store.event(
                "run_finished",
                finish_type=finish.value,
                exit_code=finish.exit_code,
                iterations=rec.totals.iterations,
                commits=rec.totals.commits,
            )
        except RecordError as exc:
            # Said once already, or the first failure: run.json is rewritten in place where
            # the record fits, so the run is not left resumable.
            if not records_said:
                self.display.error(str(exc))
        self.display.summary(rec)
        if not (finish is FinishType.BLOCKED and self.notified_blocked):
            await self.notifier.send("finish", self.summary())
        return LoopResult(finish_type=finish, run_dir=self.store.dir, record=rec)


_NO_GIT = ("not a git repository", "git is not installed")


ESCAPE_POLL = 0.5
"""Seconds between looks for descendants that left both the group and the marker behind."""


async def _note_escapes(loop: _Loop) -> None:
    """Record in events.jsonl each descendant in another session without the run's marker, so
    a ``--resume`` after this supervisor was killed can end it (nothing else could find it)."""
    seen: set[int] = set()
    while True:
        await trio.sleep(ESCAPE_POLL)
        store = getattr(loop, "store", None)
        if store is None:
            continue
        found = await trio.to_thread.run_sync(escaped_descendants, RUN_MARKER, loop.record.run_id)
        for pid, started in found:
            if pid not in seen:
                seen.add(pid)
                with contextlib.suppress(RecordError):
                    store.event("escaped", pid=pid, started=started)


def _time_scale(env: Mapping[str, str]) -> float:
    """``FORGEFLARE_TIME_SCALE`` shrinks every wait and pause (tests and demos); default 1."""
    try:
        value = float(env.get("FORGEFLARE_TIME_SCALE", "1"))
    except ValueError:
        return 1.0
    return value if 0 <= value <= 1 else 1.0


def finish_words(record: RunRecord) -> str:
    """Why a run ended, in words, from its record (the report reads the same)."""
    return finish_reason(record)


async def run_loop(
    opts: LoopOptions,
    *,
    display: LoopDisplay | None = None,
    stop: StopControl | None = None,
    signals: bool = False,
) -> LoopResult:
    """Run the loop to its finish and return how it ended (records are in ``run_dir``).

    ``stop`` lets a caller request a stop; ``signals=True`` (the CLI) also turns SIGINT /
    SIGTERM into stop requests (:func:`watch_signals`).
    Raises ``ConfigError`` / ``RecordError`` for a problem the user must fix.
    """
    display = display or LoopDisplay()
    stop = stop or StopControl()
    if signals:
        # The CLI's own process (not a test's or a library caller's): orphans of the agent and
        # the hooks adopt the loop, so even descendants in a new session with a clean
        # environment (no marker) are ended with them.
        become_subreaper()
    loop = _Loop(opts, display, stop)
    if not display.live and not signals:
        return await loop.run()
    failure: Exception | None = None
    async with trio.open_nursery() as nursery:
        if signals:
            await nursery.start(watch_signals, stop, display)
            nursery.start_soon(_note_escapes, loop)
        if display.live:
            nursery.start_soon(_tick, display)
        try:
            return await loop.run()
        except Exception as exc:
            # Raised after the nursery, so callers see the error itself, not a group.
            failure = exc
        finally:
            nursery.cancel_scope.cancel()
    assert failure is not None
    raise failure


async def _tick(display: LoopDisplay) -> None:
    while True:
        display.refresh()
        await trio.sleep(0.5)


async def watch_signals(
    stop: StopControl,
    display: LoopDisplay,
    *,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Turn SIGINT / SIGTERM into stop requests (the second one kills at once)."""
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        task_status.started()
        async for signum in signals:
            name = signal.Signals(signum).name
            if stop.stop.is_set():
                display.warn(f"{name} again: killing at once")
            else:
                display.warn(
                    f"{name}: stopping (TERM to the agent, then KILL after "
                    "the grace period; Ctrl+C again kills at once)"
                )
            stop.request(name)
