"""The Ralph loop: lifecycle hooks, one fresh agent per iteration, the finish decision.

The shape of a run::

    start   the agent's sandbox, the run opened (or resumed), git's starting point
    started hook                                  (an abort finishes before any iteration)
    baseline                                      (where progress is measured from)
    repeat  step: checks -> agent choice -> next_iteration hook -> agent or skip
                  -> evidence (gate, stall, delivery, reviewer) -> verdict -> record, act
    until   a verdict finishes the run
    finish  git's internals checked, the record closed, finished hook, summary, notify

The loop is a few parts, each an object in its own module that holds its own state behind
narrow methods and is built from explicit inputs (:meth:`._step.LoopParts.build`): the fixed
setup every part reads (:mod:`._setup`: options, config, effective limits, display, stop),
the run's book (:mod:`._runbook`: store, record, active time, why it ends), the agent choice
(:mod:`._switching`: windows, fallbacks, credit), one iteration's agent (:mod:`._iteration`:
start, watch, read), delivery (:mod:`._checkpoint`: git, checkpoint, the claim's fate), the
evidence (:mod:`._proof`: gate, stall, reviewer), the checks (:mod:`._checks`: trust, hooks,
the rules between iterations) and the waits (:mod:`._waiting`). One step over them is
:mod:`._step`'s; the decisions are pure (:func:`~._finish.decide` and
:func:`~._finish.before_iteration`). Each field is written by its own part only (a test
scans for it).

One trio task runs the loop; a second (when on a terminal) redraws the status line; the CLI
adds a third that turns SIGINT / SIGTERM into stop requests, and a fourth that notes
descendants that escaped the process group and the run's marker.

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
from dataclasses import dataclass
from pathlib import Path

import trio

from forgeflare._budget import overshoot_line
from forgeflare._clock import format_wait, utc_timestamp
from forgeflare.platform import become_subreaper, escaped_descendants, process_started
from forgeflare.supervisor.agents._agentproc import StopControl
from forgeflare.supervisor.backends import BACKENDS
from forgeflare.supervisor.config._config import bounds_words
from forgeflare.supervisor.config._options import LoopOptions
from forgeflare.supervisor.evidence._finish import Finish, FinishType, hook_verdict
from forgeflare.supervisor.records._blocked import take_answer
from forgeflare.supervisor.records._display import LoopDisplay
from forgeflare.supervisor.records._history import finish_reason
from forgeflare.supervisor.records._records import (
    RUN_MARKER,
    RecordError,
    RunRecord,
    RunSettings,
    RunStore,
    new_run_id,
)
from forgeflare.supervisor.run._checks import hook_record
from forgeflare.supervisor.run._resume import open_resumable
from forgeflare.supervisor.run._runbook import RunBook
from forgeflare.supervisor.run._setup import LoopSetup
from forgeflare.supervisor.run._step import LoopParts, LoopStep
from forgeflare.supervisor.run._stop import clear_stop, stop_request_age
from forgeflare.trust import TrustError, trust_override

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


class _Loop:
    """The run over the loop's parts: open it, step until a verdict, finish it."""

    def __init__(self, opts: LoopOptions, display: LoopDisplay, stop: StopControl) -> None:
        setup = self.setup = LoopSetup.build(opts, display, stop)
        book = self.book = RunBook(setup)
        self.parts = LoopParts.build(setup, book)
        self.step = LoopStep(setup, book, self.parts)
        self.resumed_killed = False

    async def run(self) -> LoopResult:
        """Start the run, step until a verdict finishes it, then finish it."""
        await self.start()
        finish: FinishType | None = None
        said = False
        try:
            if not self.setup.opts.resume:
                finish = await self.started_hook()
            if finish is None:
                await self.parts.evidence.baseline()
            while finish is None:
                finish = await self.step.iterate()
        except RecordError as exc:
            # Disk full or a read-only run folder: finish properly, say once what failed.
            self.setup.display.error(str(exc))
            self.book.say_why("stopped: the run records could not be written")
            finish = FinishType.ERROR
            said = True
        return await self.finish(finish, records_said=said)

    async def started_hook(self) -> FinishType | None:
        """The ``started`` hook: its abort (or a stop) finishes the run before any iteration."""
        started = await self.parts.checks.hook("started", self.step.context())
        self.book.record.hooks.append(hook_record(started, 0))
        self.book.save()
        stopped = self.setup.stop.stop.is_set()
        verdict = hook_verdict(started.status.value, stopped=stopped, skippable=False)
        return verdict.type if isinstance(verdict, Finish) else None

    def open_run(self) -> None:
        """Open a new run, or resume the newest one, and say so."""
        setup, display = self.setup, self.setup.display
        if setup.opts.resume:
            self.resume_run()
        else:
            self.new_run()
        rec, store = self.book.record, self.book.store
        rec.supervisor_pid = os.getpid()
        rec.supervisor_started = process_started(os.getpid())
        display.log_file = store.dir / "loop.log"
        display.hooks_log = store.dir / "hooks.log"
        self.book.save()
        if setup.opts.resume:
            store.event("run_resumed", run_id=rec.run_id)
        else:
            store.event("run_started", run_id=rec.run_id, mode=rec.mode)
            display.info(f"run {rec.run_id} ({rec.mode} mode) in {store.dir}")
        self.banner()
        self.parts.agent.check_credit(setup.log_root)

    def resume_run(self) -> None:
        """Resume the newest run: its killed iteration recorded, its question reopened."""
        setup, display = self.setup, self.setup.display
        resumed = open_resumable(setup.log_root, setup.project, grace=setup.cfg.agent.kill_grace)
        self.book.begin(resumed.store, resumed.record)
        rec = self.book.record
        rec.resumes += 1
        if resumed.ended:
            display.warn(f"ended {resumed.ended} process(es) the killed supervisor left running")
        if resumed.killed is not None:
            it = resumed.killed
            self.resumed_killed = True
            self.book.finish_iteration(it, "killed", counted=True)
            display.warn(
                f"iteration {it.number} was cut short by the crash: recorded as killed"
                + (f" with {it.commits} commit(s)" if it.commits else "")
            )
        self.reopen_blocked()
        self.parts.iteration.resume_from(rec.iterations)
        kept = " with the settings it started with" if rec.settings else ""
        display.info(f"resuming run {rec.run_id} after iteration {rec.iterations_done}{kept}")

    def new_run(self) -> None:
        """A new run's folder and record (a stop request from before it is dropped)."""
        setup, cfg, opts = self.setup, self.setup.cfg, self.setup.opts
        run_id = new_run_id()
        store = RunStore(setup.log_root / run_id)
        store.create()
        record = RunRecord(
            run_id=run_id,
            mode=cfg.fresher.mode,
            project_dir=str(setup.project),
            started_at=utc_timestamp(),
            max_iterations=cfg.fresher.max_iterations,
            backend=self.parts.agent.backend.name,
            max_runtime=cfg.limits.max_runtime,
            max_cost=cfg.limits.max_cost,
            plan_file=cfg.paths.plan_file,
            plan_unchecked_at_start=self.parts.iteration.plan_unchecked(),
            settings=RunSettings(
                config=cfg.model_dump(mode="json"),
                task=opts.task,
                pass_env=list(opts.pass_env),
                raw=opts.raw,
                trust_project=opts.trust_project,
                project_command=opts.project_command,
            ),
        )
        self.book.begin(store, record)
        stale = stop_request_age(setup.project)
        if stale is not None:
            setup.display.warn(
                f"dropped a stop request from {format_wait(stale)} ago (.fresher/stop-request):"
                " it was made before this loop started"
            )
        clear_stop(setup.project)

    def reopen_blocked(self) -> None:
        """A run that finished ``blocked`` goes on; its answer starts the next prompt."""
        rec = self.book.record
        if rec.finish_type != FinishType.BLOCKED.value:
            return
        rec.finished_at = rec.finish_type = rec.exit_code = rec.finish_reason = None
        preamble = take_answer(self.book.store.dir, rec)
        if preamble is not None:
            self.step.begin_with(preamble)
            self.setup.display.info("the question was answered: the next prompt starts with both")
        elif rec.question is not None:
            self.setup.display.warn(
                "resuming without an answer to the open question (forgeflare answer writes one)"
            )
            rec.question = None

    def banner(self) -> None:
        """Every bound of the night, and what is trusted how."""
        setup, display = self.setup, self.setup.display
        agent, sandbox = self.parts.agent, self.parts.iteration.sandbox
        fallbacks = [spec.label for spec in agent.fallbacks]
        display.info(f"bounds: {bounds_words(setup.cfg, agent.backend.name, fallbacks)}")
        if sandbox is not None:
            getattr(display, sandbox.level)(sandbox.line)
        if trust_override(setup.opts.env, setup.opts.trust_project):  # the one override parser
            display.warn("trusting the project's hooks without review (--trust-project)")

    async def start(self) -> None:
        """The sandbox decided once, the run opened (or resumed), git's starting point."""
        setup, parts, display = self.setup, self.parts, self.setup.display
        await parts.iteration.choose_sandbox()
        self.open_run()
        await parts.checks.note_git_start()
        for warning in setup.opts.warnings:
            display.warn(warning)
        git_repo = await parts.delivery.start()
        said_git = any(w.startswith(_NO_GIT) for w in setup.opts.warnings)
        rec = self.book.record
        if not git_repo and not said_git:  # the preflight said it already: once is enough
            display.info(
                "not a git repository: commits are not counted and no_changes never applies"
            )
        elif rec.head_at_start is None:
            snap = await parts.delivery.snapshot()
            rec.head_at_start = snap.head if snap else None
            if not setup.opts.resume:
                # every one of them: a path left off this list would be committed
                rec.dirty_at_start = await parts.delivery.dirty_paths(limit=None) or []
        await parts.delivery.delivery_banner(parts.agent.backend)
        if setup.opts.resume and git_repo:
            await parts.delivery.resume_delivery(killed=self.resumed_killed)
        elif git_repo:
            held = await parts.delivery.clear_locks(time.time())  # a crash before this run left one
            if held is not None:
                display.warn(f"at start: {held}")

    async def finish(self, finish: FinishType, *, records_said: bool) -> LoopResult:
        """Record how the run ended, run the finished hook, sum up and notify.

        ``records_said``: a records failure ended the run and was said already."""
        setup, book, display = self.setup, self.book, self.setup.display
        book.start_finishing()
        if finish is not FinishType.HOOK_ABORT:
            try:  # the last iteration's plants too: never a clean finish over them
                await trio.to_thread.run_sync(self.parts.checks.check_git_internals)
            except TrustError as exc:
                self.parts.checks.say_refusal(str(exc))
                book.say_why(f"stopped: {exc}")
                finish = FinishType.HOOK_ABORT
        if finish is FinishType.MANUAL:
            display.warn(f"stopped by {setup.stop.signal_name or 'request'}")
        display.info(f"finishing: {finish.value}")
        rec = book.record
        rec.current = None
        rec.finish_type = finish.value
        rec.exit_code = finish.exit_code
        rec.finished_at = utc_timestamp()
        rec.finish_reason = self.finish_reason(finish)
        finished = await self.parts.checks.hook(
            "finished", self.step.context(finish_type=finish.value, iteration=rec.iterations_done)
        )
        rec.hooks.append(hook_record(finished, rec.iterations_done))
        try:
            book.save()
            book.store.event(
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
                display.error(str(exc))
        display.summary(rec)
        if not (finish is FinishType.BLOCKED and self.step.notified_blocked):
            await setup.notifier.send("finish", book.summary())
        return LoopResult(finish_type=finish, run_dir=book.store.dir, record=rec)

    def finish_reason(self, finish: FinishType) -> str:
        """Why the run ended, in words: the parts' reason (or the record's words), the last
        refused claim, and the budget's overshoot bound."""
        rec, delivery = self.book.record, self.parts.delivery
        reason = self.book.finish_reason or finish_words(rec)
        refused = delivery.last_claim_reason if delivery.last_claim == "refused" else ""
        if finish in (FinishType.COMPLETE, FinishType.MANUAL, FinishType.BLOCKED):
            refused = ""
        if refused and refused not in reason:
            reason += f"; the last claim was refused: {refused}"
        if finish is FinishType.BUDGET:
            used = [it.backend or rec.backend for it in rec.iterations if not it.skipped]
            bounds = {name: BACKENDS[name].overshoot for name in used or [rec.backend]}
            reason += f"; {overshoot_line(bounds)}"
        return reason


_NO_GIT = ("not a git repository", "git is not installed")


ESCAPE_POLL = 0.5
"""Seconds between looks for descendants that left both the group and the marker behind."""


async def _note_escapes(loop: _Loop) -> None:
    """Record in events.jsonl each descendant in another session without the run's marker, so
    a ``--resume`` after this supervisor was killed can end it (nothing else could find it)."""
    seen: set[int] = set()
    while True:
        await trio.sleep(ESCAPE_POLL)
        if not loop.book.opened:
            continue
        store = loop.book.store
        found = await trio.to_thread.run_sync(
            escaped_descendants, RUN_MARKER, loop.book.record.run_id
        )
        for pid, started in found:
            if pid not in seen:
                seen.add(pid)
                with contextlib.suppress(RecordError):
                    store.event("escaped", pid=pid, started=started)


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
