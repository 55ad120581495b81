"""The Ralph loop: lifecycle hooks, one fresh agent per iteration, the finish decision.

One trio task runs the loop; a second (when on a terminal) redraws the status line; the CLI
adds a third that turns SIGINT / SIGTERM into stop requests. Each iteration:

1. limits (iterations, runtime); 2. ``next_iteration`` hook (1 skips, 2 aborts);
3. the agent, prompt on stdin, in its own process group, output to ``iteration-NNN.log`` and
the terminal, killed (TERM, grace, KILL) at the iteration timeout or the runtime limit;
4. the pure :func:`~forgeflare.supervisor._finish.decide`.

Stale ``convergence.json``: before each agent starts, the supervisor deletes the file and
takes its stat (inode, mtime, size) if it could not. After the agent, only a file that exists
and differs from that stat counts, so an earlier iteration's ``final`` (or a file from an
agent that never writes one) can never complete a run.
"""

from __future__ import annotations

import math
import os
import signal
import sys
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path

import trio

from forgeflare._clock import utc_timestamp
from forgeflare._errors import ConfigError
from forgeflare._process import kill_group
from forgeflare.hooks._convergence import (
    ConvergenceError,
    ConvergenceState,
    clear_convergence,
    convergence_path,
    read_convergence,
)
from forgeflare.supervisor._agentproc import (
    ChildResult,
    StopControl,
    exit_status,
    supervise,
)
from forgeflare.supervisor._config import LoopConfig, default_prompt
from forgeflare.supervisor._display import Display
from forgeflare.supervisor._finish import (
    Continue,
    FinishType,
    IterationOutcome,
    Limits,
    Streaks,
    check_limits,
    count_unchecked,
    decide,
    is_error,
)
from forgeflare.supervisor._git import GitSnapshot, commits_between, git_snapshot
from forgeflare.supervisor._lifecycle import (
    HookContext,
    HookName,
    HookResult,
    HookStatus,
    hook_env,
    run_hook,
)
from forgeflare.supervisor._records import (
    HookRecord,
    InProgress,
    IterationRecord,
    RecordError,
    RunRecord,
    RunStore,
    find_resumable,
    new_run_id,
    orphan_group,
)

__all__ = ["FileStamp", "LoopOptions", "LoopResult", "is_fresh", "run_loop", "watch_signals"]

FileStamp = tuple[int, int, int]
"""(inode, mtime_ns, size) of a file."""


def _stamp(path: Path) -> FileStamp | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size)


def is_fresh(before: FileStamp | None, after: FileStamp | None) -> bool:
    """Whether the file after an iteration was written during it (see module docstring)."""
    return after is not None and after != before


@dataclass
class LoopOptions:
    """What ``forgeflare loop`` was asked to do."""

    project_dir: Path
    config: LoopConfig = field(default_factory=LoopConfig)
    resume: bool = False
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    python: str = sys.executable
    warnings: list[str] = field(default_factory=list)


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


_HOOK_SWITCH = {
    "started": "started_enabled",
    "next_iteration": "next_iteration_enabled",
    "finished": "finished_enabled",
}


class _Loop:
    def __init__(self, opts: LoopOptions, display: Display, stop: StopControl) -> None:
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
        )
        self.store: RunStore
        self.record: RunRecord
        self.last_exit = 0
        self.last_duration = 0.0
        self.git_repo = False

    # -- bookkeeping ------------------------------------------------------------------------
    def elapsed(self) -> float:
        return self.base_active + time.monotonic() - self.t0

    def save(self) -> None:
        self.record.totals.active_seconds = round(self.elapsed(), 3)
        self.store.save(self.record)

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
        )

    def open_run(self) -> None:
        if self.opts.resume:
            store = find_resumable(self.log_root)
            if store is None:
                raise RecordError(f"--resume: no unfinished run in {self.log_root}")
            self.store, self.record = store, store.load()
            self.record.resumes += 1
            self.base_active = self.record.totals.active_seconds
            pgid = orphan_group(self.record)
            if pgid is not None:
                self.display.warn(f"killing the agent the killed supervisor left (group {pgid})")
                kill_group(pgid, signal.SIGKILL)
            self.record.current = None
            agent_runs = [it for it in self.record.iterations if not it.skipped]
            if agent_runs:
                self.last_exit = agent_runs[-1].exit_code or 0
                self.last_duration = agent_runs[-1].duration
            self.display.info(
                f"resuming run {self.record.run_id} after iteration {self.record.iterations_done}"
            )
            self.save()
            self.store.event("run_resumed", run_id=self.record.run_id)
            return
        run_id = new_run_id()
        self.store = RunStore(self.log_root / run_id)
        self.store.create()
        self.record = RunRecord(
            run_id=run_id,
            mode=self.cfg.fresher.mode,
            project_dir=str(self.project),
            started_at=utc_timestamp(),
            max_iterations=self.cfg.fresher.max_iterations,
        )
        self.save()
        self.store.event("run_started", run_id=run_id, mode=self.record.mode)
        self.display.info(f"run {run_id} ({self.record.mode} mode) in {self.store.dir}")

    # -- hooks ------------------------------------------------------------------------------
    async def hook(self, name: HookName, ctx: HookContext) -> HookResult:
        hooks = self.cfg.hooks
        hooks_dir = self.project / self.cfg.paths.hooks_dir
        if not hooks.enabled or not getattr(hooks, _HOOK_SWITCH[name]):
            result = HookResult(name, HookStatus.DISABLED)
        else:
            path = hooks_dir / name
            if path.is_file() and os.access(path, os.X_OK):
                self.display.info(f"Running hook: {name}")
            result = await run_hook(
                name,
                hooks_dir=hooks_dir,
                cwd=self.project,
                env={**self.opts.env, **hook_env(name, ctx)},
                timeout=hooks.timeout,
                fail_behavior=hooks.fail_behavior,
                stop=self.stop.escalated() if name == "finished" else self.stop,
                on_line=lambda line: self.display.output(line, prefix=f"[{name}] "),
            )
        self.report_hook(result, hooks.timeout)
        if result.status is not HookStatus.MISSING:
            self.store.event(
                "hook",
                hook=name,
                status=result.status.value,
                exit_code=result.exit_code,
                duration=round(result.duration, 3),
                iteration=ctx.iteration,
            )
        return result

    def report_hook(self, result: HookResult, timeout: float) -> None:
        name, code = result.name, result.exit_code
        match result.status:
            case HookStatus.NOT_EXECUTABLE:
                self.display.warn(f"Hook {name} exists but is not executable (skipped)")
            case HookStatus.OK:
                self.display.info(f"Hook {name} completed successfully")
            case HookStatus.WARNING:
                self.display.warn(f"Hook {name} returned warning (exit 1)")
            case HookStatus.ABORT:
                self.display.error(f"Hook {name} requested abort (exit {code})")
            case HookStatus.TIMEOUT:
                self.display.error(f"Hook {name} timed out after {timeout:g}s (exit 124)")
            case HookStatus.ERROR:
                self.display.error(f"Hook {name} failed with exit code {code}")
            case _:
                pass

    # -- one agent run ----------------------------------------------------------------------
    def prompt(self) -> str:
        path = self.project / ".fresher" / f"PROMPT.{self.record.mode}.md"
        try:
            return path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return default_prompt(self.record.mode)
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path}: cannot read the prompt: {exc}") from exc

    def plan_unchecked(self) -> int | None:
        path = self.project / self.cfg.paths.plan_file
        try:
            return count_unchecked(path.read_text(encoding="utf-8", errors="replace"))
        except FileNotFoundError:
            return None
        except OSError as exc:
            self.display.warn(f"{path}: cannot read the plan: {exc.strerror}")
            return None

    async def snapshot(self) -> GitSnapshot | None:
        if not self.git_repo:
            return None
        return await git_snapshot(self.project, excluded=(self.log_root,))

    async def run_agent(self, number: int) -> tuple[IterationRecord, IterationOutcome, bool]:
        """Run iteration ``number``'s agent. Returns its record, outcome, and whether the
        runtime limit (not the iteration timeout) ended it."""
        conv = convergence_path(self.project)
        warning = clear_convergence(conv)
        if warning:
            self.display.warn(warning)
        before = _stamp(conv)
        git_before = await self.snapshot()
        prompt = self.prompt()
        argv = self.cfg.agent_argv(self.opts.python)
        env = {**self.opts.env, **hook_env("agent", self.context(iteration=number))}
        timeout = self.cfg.limits.iteration_timeout or math.inf
        runtime_left = math.inf
        if self.limits.max_runtime > 0:
            runtime_left = max(0.0, self.limits.max_runtime - self.elapsed())
        budget = min(timeout, runtime_left)
        it = IterationRecord(number=number, started_at=utc_timestamp())
        self.record.current = InProgress(number=number, started_at=it.started_at)
        self.save()

        def on_start(pid: int) -> None:
            assert self.record.current is not None
            self.record.current.agent_pid = pid
            self.save()

        self.display.info(f"iteration {number}: starting {argv[0]}")
        self.display.start_iteration(number, self.limits.max_iterations)
        log_path = self.store.iteration_log(number)
        # Plain blocking writes: a local append per line is cheaper than a thread hop.
        with open(log_path, "wb") as log:  # noqa: ASYNC230

            def on_line(line: bytes) -> None:
                log.write(line)
                log.flush()
                self.display.output(line)

            try:
                result = await supervise(
                    argv,
                    cwd=self.project,
                    env=env,
                    stdin=prompt.encode(),
                    timeout=None if math.isinf(budget) else budget,
                    grace=self.cfg.agent.kill_grace,
                    stop=self.stop,
                    on_line=on_line,
                    on_start=on_start,
                )
            except OSError as exc:
                msg = f"cannot start the agent {argv[0]!r}: {exc.strerror or exc}"
                log.write(f"forgeflare loop: {msg}\n".encode())
                self.display.error(msg)
                result = ChildResult(returncode=127, timed_out=False, stopped=False, duration=0.0)
            finally:
                self.display.end_iteration()
        runtime_hit = result.timed_out and runtime_left < timeout
        state: ConvergenceState | None = None
        if is_fresh(before, _stamp(conv)):
            try:
                state = read_convergence(conv)
            except ConvergenceError as exc:
                self.display.warn(str(exc))
        git_after = await self.snapshot()
        commits = 0
        changed: bool | None = None
        if git_before is not None and git_after is not None:
            commits = await commits_between(self.project, git_before.head, git_after.head)
            changed = commits > 0 or git_before != git_after
        final = state.final if state else None
        it.duration = round(result.duration, 3)
        it.exit_code = exit_status(result)
        it.timed_out = result.timed_out
        it.final_reason = final.reason if final else None
        it.observations = [o.model_dump() for o in state.observations] if state else []
        it.tokens = (
            final.total_tokens if final and final.total_tokens else self.display.status.tokens
        )
        it.commits = commits
        it.changed = changed
        it.plan_unchecked = self.plan_unchecked()
        outcome = IterationOutcome(
            mode="planning" if self.record.mode == "planning" else "building",
            exit_code=result.exit_code,
            timed_out=result.timed_out,
            final_reason=it.final_reason,
            final_expected=self.cfg.final_expected,
            plan_unchecked=it.plan_unchecked,
            git_changed=changed,
        )
        if result.timed_out:
            what = "runtime limit" if runtime_hit else "iteration timeout"
            self.display.error(f"iteration {number}: agent killed at the {what}")
        self.display.info(
            f"iteration {number}: exit {it.exit_code}, final {it.final_reason}, "
            f"{it.duration:.1f}s, commits {commits}"
        )
        self.last_exit, self.last_duration = it.exit_code, it.duration
        return it, outcome, runtime_hit

    # -- the loop ---------------------------------------------------------------------------
    def finish_iteration(self, it: IterationRecord, decision: str) -> None:
        it.decision = decision
        rec = self.record
        rec.iterations.append(it)
        rec.current = None
        if not it.skipped:
            rec.totals.iterations += 1
        rec.totals.commits += it.commits
        rec.totals.tokens += it.tokens
        self.save()
        self.store.event("iteration", **it.model_dump(exclude={"observations"}))

    async def iterate(self) -> FinishType | None:
        """One pass of the loop: ``None`` to go on."""
        if self.stop.stop.is_set():
            return FinishType.MANUAL
        rec = self.record
        limit = check_limits(
            iterations_done=rec.iterations_done, elapsed=self.elapsed(), limits=self.limits
        )
        if limit is not None:
            return limit
        number = rec.iterations_done + 1
        streaks = Streaks(**rec.streaks)
        hook = await self.hook("next_iteration", self.context(iteration=number))
        if self.stop.stop.is_set():
            return FinishType.MANUAL
        if hook.status is HookStatus.ABORT:
            return FinishType.HOOK_ABORT
        runtime_hit = False
        if hook.status is HookStatus.WARNING:
            self.display.warn(f"iteration {number} skipped by next_iteration")
            it = IterationRecord(number=number, started_at=utc_timestamp(), skipped=True)
            it.plan_unchecked = self.plan_unchecked()
            outcome = IterationOutcome(
                mode="planning" if rec.mode == "planning" else "building",
                skipped=True,
                plan_unchecked=it.plan_unchecked,
            )
        else:
            it, outcome, runtime_hit = await self.run_agent(number)
        it.next_iteration_hook = _hook_record(hook, number)
        if self.stop.stop.is_set():
            self.finish_iteration(it, FinishType.MANUAL.value)
            return FinishType.MANUAL
        new_streaks, decision = decide(
            outcome=outcome,
            streaks=streaks,
            iteration=number,
            elapsed=self.elapsed(),
            limits=self.limits,
        )
        if runtime_hit and decision != FinishType.COMPLETE:
            decision = FinishType.TIMEOUT
        rec.streaks = asdict(new_streaks)
        self.finish_iteration(it, "continue" if isinstance(decision, Continue) else decision.value)
        if not isinstance(decision, Continue):
            return decision
        pause = self.cfg.limits.error_pause
        if is_error(outcome) and pause > 0:
            self.display.warn(
                f"error iteration ({new_streaks.errors} in a row): pausing {pause:g}s"
            )
            with trio.move_on_after(pause):
                await self.stop.stop.wait()
        return None

    async def run(self) -> LoopResult:
        self.open_run()
        for warning in self.opts.warnings:
            self.display.warn(warning)
        self.git_repo = await git_snapshot(self.project) is not None
        if not self.git_repo:
            self.display.info(
                "not a git repository: commits are not counted and no_changes never applies"
            )
        finish: FinishType | None = None
        if not self.opts.resume:
            started = await self.hook("started", self.context())
            self.record.hooks.append(_hook_record(started, 0))
            self.save()
            if self.stop.stop.is_set():
                finish = FinishType.MANUAL
            elif started.status is HookStatus.ABORT:
                finish = FinishType.HOOK_ABORT
        while finish is None:
            finish = await self.iterate()
        if finish is FinishType.MANUAL:
            self.display.warn(f"stopped by {self.stop.signal_name or 'request'}")
        self.display.info(f"finishing: {finish.value}")
        rec = self.record
        rec.current = None
        finished = await self.hook(
            "finished", self.context(finish_type=finish.value, iteration=rec.iterations_done)
        )
        rec.hooks.append(_hook_record(finished, rec.iterations_done))
        rec.finished_at = utc_timestamp()
        rec.finish_type = finish.value
        rec.exit_code = finish.exit_code
        self.save()
        self.store.event(
            "run_finished",
            finish_type=finish.value,
            exit_code=finish.exit_code,
            iterations=rec.totals.iterations,
            commits=rec.totals.commits,
        )
        self.display.summary(rec)
        return LoopResult(finish_type=finish, run_dir=self.store.dir, record=rec)


def _hook_record(result: HookResult, iteration: int) -> HookRecord:
    return HookRecord(
        name=result.name,
        status=result.status.value,
        exit_code=result.exit_code,
        duration=round(result.duration, 3),
        iteration=iteration,
    )


async def run_loop(
    opts: LoopOptions,
    *,
    display: Display | None = None,
    stop: StopControl | None = None,
    signals: bool = False,
) -> LoopResult:
    """Run the loop to its finish and return how it ended (records are in ``run_dir``).

    ``stop`` lets a caller request a stop; ``signals=True`` (the CLI) also turns SIGINT /
    SIGTERM into stop requests (:func:`watch_signals`).
    Raises ``ConfigError`` / ``RecordError`` for a problem the user must fix.
    """
    display = display or Display()
    stop = stop or StopControl()
    loop = _Loop(opts, display, stop)
    if not display.live and not signals:
        return await loop.run()
    failure: Exception | None = None
    async with trio.open_nursery() as nursery:
        if signals:
            await nursery.start(watch_signals, stop, display)
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


async def _tick(display: Display) -> None:
    while True:
        display.refresh()
        await trio.sleep(0.5)


async def watch_signals(
    stop: StopControl,
    display: Display,
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
