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

import contextlib
import os
import signal
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

import trio

from forgeflare._clock import format_wait, utc_timestamp
from forgeflare._evidence import (
    ClaimBy,
    GateRun,
    Measures,
    Progress,
    gate_tail,
    judge_progress,
    rejection_text,
    stall_streak,
    stall_warning,
)
from forgeflare._pgroup import become_subreaper, escaped_descendants, process_started
from forgeflare._process import run_child
from forgeflare._secrets import child_environment
from forgeflare._words import plural
from forgeflare.agent.tools._sandbox import SandboxChoice, loop_sandbox
from forgeflare.supervisor._agentproc import (
    StopControl,
)
from forgeflare.supervisor._blocked import take_answer
from forgeflare.supervisor._config import LoopConfig, parse_on_blocked
from forgeflare.supervisor._display import LoopDisplay
from forgeflare.supervisor._fallback import AgentSpec, Window, parse_agent_spec
from forgeflare.supervisor._finish import (
    Between,
    Finish,
    FinishType,
    IterationFacts,
    IterationOutcome,
    Limits,
    RunGate,
    Skip,
    Streaks,
    Verdict,
    before_iteration,
    claimed,
    decide,
    hook_verdict,
)
from forgeflare.supervisor._git import GitSnapshot, diff_since, git_snapshot, tree_of
from forgeflare.supervisor._history import finish_reason
from forgeflare.supervisor._iteration import IterationRunner
from forgeflare.supervisor._lifecycle import (
    HookContext,
    HookName,
    HookStatus,
    LifecycleResult,
    hook_env,
    hook_words,
    run_lifecycle_hook,
)
from forgeflare.supervisor._notify import Notifier, notify_urls
from forgeflare.supervisor._records import (
    RUN_MARKER,
    ClaimRecord,
    HookRecord,
    IterationRecord,
    ProgressRecord,
    RecordError,
    ReviewRecord,
    RunRecord,
    RunSettings,
    RunStore,
    new_run_id,
)
from forgeflare.supervisor._resume import open_resumable
from forgeflare.supervisor._stop import clear_stop, stop_request_age, stop_requested
from forgeflare.supervisor._switching import AgentSwitching
from forgeflare.supervisor._trust import loop_trust_items
from forgeflare.supervisor._waiting import LoopWaits
from forgeflare.supervisor._waits import WaitFor, WaitSettings, WaitStreaks
from forgeflare.supervisor._windowstore import window_store_path
from forgeflare.trust._policy import TrustError, trust_override
from forgeflare.trust._store import require_trust

__all__ = ["LoopOptions", "LoopResult", "run_loop", "watch_signals"]


@dataclass
class LoopOptions:
    """What ``forgeflare loop`` was asked to do."""

    project_dir: Path
    config: LoopConfig = field(default_factory=LoopConfig)
    resume: bool = False
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    python: str = sys.executable
    warnings: list[str] = field(default_factory=list)
    task: str | None = None
    """A fleet loop's task: put first in the prompt of every iteration."""
    trust_project: bool = False
    """``--trust-project``: run the project's hooks without a recorded trust."""
    pass_env: Sequence[str] = ()
    """Secret-looking variables to pass to hooks and tools anyway (``--pass-env``)."""
    raw: bool = False
    """Show the agent's output as it is (``--raw``), not as the backend reads it."""
    project_command: bool = True
    """The agent command came from the project's config.toml (so trust covers it)."""


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


class _Loop(IterationRunner, LoopWaits, AgentSwitching):
    opts: LoopOptions

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
        self.store: RunStore
        self.record: RunRecord
        self.last_exit = 0
        self.last_duration = 0.0
        self.git_repo = False
        self.git_last: GitSnapshot | None = None
        self.backend = self.cfg.backend()
        self.profile = ""
        self.primary = self.current = AgentSpec(self.backend.name)
        self.fallbacks = [parse_agent_spec(text) for text in self.cfg.agent.fallback]
        if self.fallbacks:
            display.agent = self.primary.label
        self.windows: dict[AgentSpec, Window] = {}
        self.window_file = window_store_path(opts.env)
        self.wait_streaks = WaitStreaks()
        self.finish_reason: str | None = None
        self.last_gate = ""
        """``passed`` / ``failed`` once the gate ran (FRESHER_LAST_GATE for next_iteration)."""
        self.finishing = False
        """Set once the loop is finishing: a records failure then no longer stops anything."""
        self.records_failure: Exception | None = None
        """A write that failed during the agent: raised once its iteration is recorded."""
        self.time_scale = _time_scale(opts.env)
        self.answer_wait = parse_on_blocked(self.cfg.limits.on_blocked)
        """Seconds to wait for an answer before finishing ``blocked`` (``None``: do not)."""
        self.notified_blocked = False
        self.sandbox: SandboxChoice | None = None
        self.sandbox_env: dict[str, str] = {}
        """The agent's sandbox variables, decided once at the start (empty: none)."""
        self.preamble = ""
        """What the next iteration's prompt starts with (a refused claim, a stall warning)."""
        self.no_progress = 0
        self.measures = Measures()
        self.seen_trees: set[str] = set()
        self.last_tree: str | None = None
        self.refused = ""
        """The last trust refusal printed."""
        from forgeflare.trust._store import default_trust_file

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
        cfg = self.cfg
        n = cfg.fresher.max_iterations
        most = plural(n, "iteration") if n else "unlimited iterations"
        runtime = format_wait(cfg.limits.max_runtime) if cfg.limits.max_runtime else "unlimited"
        cost = f"${cfg.limits.max_cost:g}" if cfg.limits.max_cost else "no cost cap"
        per_iteration = cfg.limits.iteration_timeout
        timeout = format_wait(per_iteration) if per_iteration else "none"
        self.display.info(
            f"bounds: {most}, runtime {runtime}, {cost}, iteration timeout "
            f"{timeout}, agent {self.backend.name}"
            + "".join(f", then {spec.label}" for spec in self.fallbacks)
        )
        if self.sandbox is not None:
            getattr(self.display, self.sandbox.level)(self.sandbox.line)
        if trust_override(self.opts.env, self.opts.trust_project):  # the one override parser
            self.display.warn("trusting the project's hooks without review (--trust-project)")

    # -- hooks ------------------------------------------------------------------------------
    async def hook(self, name: HookName, ctx: HookContext) -> LifecycleResult:
        hooks = self.cfg.hooks
        hooks_dir = self.project / self.cfg.paths.hooks_dir
        refusal = None
        if not hooks.enabled or not getattr(hooks, _HOOK_SWITCH[name]):
            result = LifecycleResult(name, HookStatus.DISABLED)
        elif (refusal := await self.untrusted_now()) is not None:
            # Checked before every call: the agent may have rewritten the hook meanwhile.
            result = LifecycleResult(name, HookStatus.ABORT)
        else:
            path = hooks_dir / name
            if path.is_file() and os.access(path, os.X_OK):
                self.display.info(f"Running hook: {name}")
            result = await run_lifecycle_hook(
                name,
                hooks_dir=hooks_dir,
                cwd=self.project,
                env={
                    **child_environment(self.opts.env, self.opts.pass_env),
                    **hook_env(name, ctx),
                    "PYTHONDONTWRITEBYTECODE": "1",  # no __pycache__ in the trusted hooks dir
                },
                timeout=hooks.timeout,
                fail_behavior=hooks.fail_behavior,
                stop=self.stop.escalated() if name == "finished" else self.stop,
                on_line=lambda line: self.display.output(line, prefix=f"[{name}] "),
            )
        if refusal is None and (said := hook_words(result, hooks.timeout)) is not None:
            getattr(self.display, said[0])(said[1])
        if result.status is not HookStatus.MISSING:
            try:
                self.store.event(
                    "hook",
                    hook=name,
                    status=result.status.value,
                    exit_code=result.exit_code,
                    duration=round(result.duration, 3),
                    iteration=ctx.iteration,
                )
            except RecordError:
                if not self.finishing:
                    raise
        return result

    async def before_iteration(self) -> FinishType | None:
        """Checks between iterations (the rules are :func:`before_iteration`'s)."""
        trust_error: str | None = None
        try:
            await trio.to_thread.run_sync(self.check_trust)
        except TrustError as exc:
            trust_error = str(exc)
        verdict = before_iteration(
            Between(
                limits=self.limits,
                counted=self.record.counted_iterations,
                elapsed=self.elapsed(),
                stopped=self.stop.stop.is_set(),
                stop_requested=stop_requested(self.project),
                spent=self.record.totals.cost_usd,
                trust_error=trust_error,
                now=datetime.now(UTC),
            )
        )
        if verdict is None:
            return None
        if verdict.type is FinishType.STOPPED:
            clear_stop(self.project)
        elif verdict.type is FinishType.HOOK_ABORT and trust_error is not None:
            self.say_refusal(trust_error)
        if verdict.reason is not None:
            self.finish_reason = verdict.reason
        return verdict.type

    def check_trust(self) -> None:
        """Raise TrustError when a project hook or command changed since the start."""
        if trust_override(self.opts.env, self.opts.trust_project):
            return  # nothing to gather: everything is trusted
        now = loop_trust_items(self.project, self.cfg, project_command=self.opts.project_command)
        require_trust(self.project, now, self.opts.env, flag=self.opts.trust_project)

    async def untrusted_now(self) -> str | None:
        """The one refusal line when what the project runs is no longer trusted, else None."""
        try:
            await trio.to_thread.run_sync(self.check_trust)
        except TrustError as exc:
            self.say_refusal(str(exc))
            return str(exc)
        return None

    def say_refusal(self, line: str) -> None:
        """Print a trust refusal once (the finished hook is refused for the same reason)."""
        if line != self.refused:
            self.refused = line
            self.display.error(line)

    async def iterate(self) -> FinishType | None:
        """One pass of the loop: ``None`` to go on."""
        early = await self.before_iteration()
        if early is not None:
            return early
        choice = self.choose()
        if choice.agent is None:
            if choice.wait_until is None:
                self.finish_reason = choice.reason
                self.display.error(f"no agent left: {choice.reason}")
                spent = any(w.resets_at is None for w in self.windows.values())
                return FinishType.QUOTA if spent else FinishType.ERROR
            self.display.warn(f"no agent open: {choice.reason}")
            left = (choice.wait_until - datetime.now(UTC)).total_seconds()
            seconds = left / self.time_scale if self.time_scale else 0.0
            if self.limits.max_runtime:  # never past max_runtime (the next check finishes)
                seconds = min(seconds, max(0.0, self.limits.max_runtime - self.elapsed()))
            await self.wait("limit_wait", max(0.0, seconds), choice.wait_until)
            return None  # the checks between iterations again (a stop, the runtime)
        rec = self.record
        number = rec.iterations_done + 1
        hook = await self.hook("next_iteration", self.context(iteration=number))
        verdict = hook_verdict(hook.status.value, stopped=self.stop.stop.is_set(), skippable=True)
        if isinstance(verdict, Finish):
            return verdict.type
        if isinstance(verdict, Skip):
            self.display.warn(f"iteration {number} skipped by next_iteration")
            it = IterationRecord(number=number, started_at=utc_timestamp(), skipped=True)
            it.plan_unchecked = self.plan_unchecked()
            outcome = IterationOutcome(
                mode="planning" if rec.mode == "planning" else "building",
                skipped=True,
                plan_unchecked=it.plan_unchecked,
            )
        else:
            it, outcome = await self.run_agent(number)
        it.next_iteration_hook = _hook_record(hook, number)
        gate = await self.stall_gate(it, outcome)
        await self.measure(it, outcome, gate)
        facts = IterationFacts(
            outcome=outcome,
            limits=self.limits,
            counted=self.record.counted_iterations,
            elapsed=self.elapsed(),
            streaks=Streaks(**rec.streaks),
            waits=self.wait_streaks,
            now=datetime.now(UTC),
            stopped=self.stop.stop.is_set(),
            no_progress=self.no_progress,
            stall_why=it.progress.why if it.progress and not it.progress.made else "",
        )
        ruling = decide(facts)
        claim = claimed(outcome)
        preamble = ""
        if isinstance(ruling.action, RunGate) and claim is not None:
            passed, preamble = await self.check_claim(it, claim, gate)
            # What init's next_iteration hook reads: a red gate is work for the agent, no skip.
            refused = it.claim is not None and it.claim.rejected_by == "gate"
            self.last_gate = "failed" if refused else "passed"
            ruling = decide(replace(facts, gate_passed=passed))
        elif claim is not None:
            done = isinstance(ruling.action, Finish) and ruling.action.type is FinishType.COMPLETE
            it.claim = ClaimRecord(by=claim, accepted=done)
        warning = stall_warning(
            self.no_progress, self.limits.stall_after, it.progress.why if it.progress else ""
        )
        self.preamble = preamble + (warning or "")
        return await self.apply(it, ruling)

    async def baseline(self) -> None:
        """Where progress is measured from: the plan and (with the stall rule) the gate's
        failures before the first iteration (after a resume: as the last row left them)."""
        if self.git_repo and self.limits.stall_after:
            # The trees the run has had: the start, then each commit's (a resume loses the
            # ones between, so an undo across a crash counts once as progress).
            start = await tree_of(self.project, self.record.head_at_start)
            if start:
                self.seen_trees.add(start)
        rows = [r for r in self.record.iterations if r.progress is not None]
        if self.opts.resume and rows:
            last = rows[-1]
            self.no_progress = last.progress.no_progress if last.progress else 0
            self.measures = Measures(
                plan_unchecked=last.plan_unchecked,
                gate=last.progress.gate_signature if last.progress else None,
            )
            return
        gate: str | None = None
        if self.cfg.limits.gate and self.limits.stall_after:
            gate = (await self.run_gate(0)).signature
        self.measures = Measures(plan_unchecked=self.record.plan_unchecked_at_start, gate=gate)

    async def stall_gate(self, it: IterationRecord, outcome: IterationOutcome) -> GateRun | None:
        """With a gate and the stall rule, the gate runs after every iteration that did work:
        its failures are the progress measure."""
        if (
            not self.cfg.limits.gate
            or not self.limits.stall_after
            or outcome.skipped
            or outcome.outcome in ("rate_limited", "api_error")
            or self.stop.stop.is_set()
        ):
            return None
        return await self.run_gate(it.number)

    async def measure(
        self, it: IterationRecord, outcome: IterationOutcome, gate: GateRun | None
    ) -> None:
        """Judge the iteration's progress (pure rule in ``_evidence``) and keep the streak."""
        if not self.limits.stall_after or outcome.skipped:
            return
        if outcome.outcome in ("rate_limited", "api_error"):
            return  # a wait, not an attempt
        tree = self.last_tree if it.commits else None
        before = self.measures
        after = Measures(
            plan_unchecked=it.plan_unchecked,
            gate=gate.signature if gate is not None else before.gate,
            commits=it.commits,
            tree=tree,
        )
        if after.plan_unchecked is None and gate is None and not self.git_repo:
            progress = Progress(True, "nothing to measure (no plan, gate or git)")
        else:
            progress = judge_progress(before, after, seen_trees=frozenset(self.seen_trees))
        if tree:
            self.seen_trees.add(tree)
        self.measures = after
        self.no_progress = stall_streak(self.no_progress, progress)
        it.progress = ProgressRecord(
            made=progress.made,
            why=progress.why,
            gate_exit=gate.exit_code if gate else None,
            gate_signature=gate.signature if gate else None,
            no_progress=self.no_progress,
        )

    async def check_claim(
        self, it: IterationRecord, claim: ClaimBy, gate: GateRun | None
    ) -> tuple[bool, str]:
        """Evidence for a claim: the gate, then the reviewer. Returns whether it holds and what
        the next prompt starts with when it does not."""
        if self.cfg.limits.gate:
            gate = gate or await self.run_gate(it.number)
            if not gate.passed:
                code = "could not run" if gate.exit_code is None else f"exit {gate.exit_code}"
                last = gate_tail(gate.output, 1)
                it.claim = ClaimRecord(
                    by=claim,
                    accepted=False,
                    rejected_by="gate",
                    why=f"gate {code}" + (f": {last}" if last else ""),
                )
                self.display.warn(f"complete claimed ({claim}), but the gate failed ({code})")
                text = rejection_text(by=claim, rejected_by="gate", gate=gate)
                return False, text
        if self.cfg.finish.reviewer:
            review = await self.review(it, claim, gate)
            it.review = review
            if review.complete is not True:
                if review.complete is None:
                    why = f"the reviewer gave no verdict: {review.error}"
                    self.display.warn(f"complete claimed ({claim}), but {why}: going on")
                    text = ""
                else:
                    why = "; ".join(review.reasons) or "the reviewer judged it not complete"
                    self.display.warn(f"complete claimed ({claim}), but the reviewer said: {why}")
                    text = rejection_text(
                        by=claim,
                        rejected_by="reviewer",
                        gate=gate,
                        reasons=tuple(review.reasons),
                        missing=tuple(review.missing),
                    )
                it.claim = ClaimRecord(by=claim, accepted=False, rejected_by="reviewer", why=why)
                return False, text
            self.display.info(f"reviewer {review.model}: complete")
        it.claim = ClaimRecord(by=claim, accepted=True)
        return True, ""

    async def review(
        self, it: IterationRecord, claim: ClaimBy, gate: GateRun | None
    ) -> ReviewRecord:
        """Ask ``[finish] reviewer`` (see ``_reviewer``); never raises."""
        from forgeflare.supervisor._reviewer import ReviewInput, run_review

        diff, stat = await diff_since(self.project, self.record.head_at_start)
        plan = self.project / self.cfg.paths.plan_file
        try:
            plan_text = plan.read_text(encoding="utf-8", errors="replace")
        except OSError:
            plan_text = ""
        return await run_review(
            ReviewInput(
                model=self.cfg.finish.reviewer,
                task=self.opts.task or self.prompt_text(),
                plan=plan_text,
                diff=diff,
                diff_stat=stat,
                max_diff=int(self.cfg.finish.reviewer_max_diff),
                gate=gate,
                final_message=self.output_tail(it),
                claim=claim,
            ),
            env=self.opts.env,
            save_to=self.store.dir / f"review-{it.number:03d}.json",
        )

    async def apply(self, it: IterationRecord, ruling: Verdict) -> FinishType | None:
        """Record the iteration as the verdict says and act on it: finish, wait or go on."""
        action = ruling.action
        self.wait_streaks = ruling.waits
        self.record.streaks = asdict(ruling.streaks)
        # A spent quota ends the night only when no fallback is left to go on with.
        quota_fallback = (
            isinstance(action, Finish) and action.type is FinishType.QUOTA and bool(self.fallbacks)
        )
        if isinstance(action, Finish) and action.reason is not None and not quota_fallback:
            self.finish_reason = action.reason
        if isinstance(action, Finish) and action.type is FinishType.BLOCKED:
            return await self.blocked(it, ruling)
        if ruling.notify is not None:
            detail = f"{ruling.streaks.errors} error iterations in a row"
            await self.notifier.send(ruling.notify, {**self.summary(), "detail": detail})
        self.finish_iteration(it, ruling.label, counted=ruling.counted)
        if quota_fallback:
            self.windows[self.current] = Window(None, "quota spent")
            return None
        if isinstance(action, Finish):
            return action.type
        if isinstance(action, WaitFor):
            if action.kind == "limit_wait":
                self.learn_window(action.seconds)
                if self.fallbacks:
                    return None  # the next iteration's choice: a fallback, or the wait
            await self.wait(action.kind, action.seconds, action.until)
            return None
        if ruling.pause > 0:
            self.display.warn(
                f"error iteration ({ruling.streaks.errors} in a row): pausing {ruling.pause:g}s"
            )
            with trio.move_on_after(ruling.pause):
                await self.stop.stop.wait()
        return None

    async def blocked(self, it: IterationRecord, ruling: Verdict) -> FinishType | None:
        """The agent asked a question: record it, say it, wait for an answer if asked to."""
        rec = self.record
        rec.question = it.question
        self.preamble = ""
        self.finish_iteration(it, ruling.label, counted=ruling.counted)
        self.display.warn(f"iteration {it.number}: the agent asks:\n{it.question}")
        self.store.event("blocked", number=it.number, question=it.question)
        await self.notifier.send("blocked", {**self.summary(), "detail": it.question})
        self.notified_blocked = True
        if self.answer_wait is None or not await self.wait_for_answer(self.answer_wait):
            return FinishType.BLOCKED
        preamble = take_answer(self.store.dir, rec)
        if preamble is None:  # the file vanished between the poll and now
            return FinishType.BLOCKED
        self.preamble = preamble
        self.finish_reason = None
        # A new row object: the store serialises a row once, so a changed one must be new.
        rec.iterations[-1] = it.model_copy(update={"decision": "answered"})
        self.save()
        self.display.info("answered: the next iteration's prompt starts with the answer")
        return None

    def output_tail(self, it: IterationRecord) -> str:
        """The end of the iteration's log: the agent's last words (what it claimed with)."""
        if not it.log:
            return ""
        try:
            with open(self.store.dir / it.log, "rb") as f:
                f.seek(max(0, f.seek(0, os.SEEK_END) - 4000))
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    async def run_gate(self, number: int) -> GateRun:
        """Run ``[limits] gate`` in the project (bounded by the iteration timeout); its output
        is kept in the run folder as ``gate-NNN.log``."""
        gate = self.cfg.limits.gate
        untrusted = await self.untrusted_now()
        if untrusted is not None:
            return GateRun(gate, None, f"not run: {untrusted}")
        self.display.info(f"gate: {gate}")
        out = bytearray()
        try:
            done = await run_child(
                ["bash", "-c", gate],
                cwd=self.project,
                env=child_environment(self.opts.env, self.opts.pass_env),
                on_output=out.extend,
                grace=self.cfg.agent.kill_grace,
                timeout=self.cfg.limits.iteration_timeout or None,
                stop=self.stop.stop,
            )
        except OSError as exc:
            return GateRun(gate, None, f"cannot run: {exc}")
        text = out.decode(errors="replace")
        for line in text.splitlines()[-20:]:
            self.display.output(line + "\n", prefix="[gate] ")
        log = self.store.dir / f"gate-{number:03d}.log"
        try:
            log.write_text(text, encoding="utf-8")
        except OSError as exc:
            self.display.warn(f"{log}: cannot write: {exc.strerror}")
        code = None if done.timed_out else done.exit_code
        self.store.event("gate", command=gate, exit_code=code, iteration=number, log=log.name)
        return GateRun(gate, code, text)

    async def run(self) -> LoopResult:
        security = self.cfg.security
        self.sandbox, self.sandbox_env = await loop_sandbox(
            self.project,
            setting=security.sandbox,
            backend=self.backend.name,
            network=security.sandbox_network,
            writable=security.writable,
            sockets=security.sockets,
            env=child_environment(self.opts.env, self.opts.pass_env),
        )
        self.open_run()
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
        finish: FinishType | None = None
        said = False
        try:
            if not self.opts.resume:
                started = await self.hook("started", self.context())
                self.record.hooks.append(_hook_record(started, 0))
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
        self.finishing = True
        if finish is FinishType.MANUAL:
            self.display.warn(f"stopped by {self.stop.signal_name or 'request'}")
        self.display.info(f"finishing: {finish.value}")
        rec = self.record
        rec.current = None
        rec.finish_type = finish.value
        rec.exit_code = finish.exit_code
        rec.finished_at = utc_timestamp()
        rec.finish_reason = self.finish_reason or finish_words(rec)
        finished = await self.hook(
            "finished", self.context(finish_type=finish.value, iteration=rec.iterations_done)
        )
        rec.hooks.append(_hook_record(finished, rec.iterations_done))
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
            if not said:
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


def _hook_record(result: LifecycleResult, iteration: int) -> HookRecord:
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
