"""One iteration of a loop: start its agent, watch it, read what it did, record it.

:class:`IterationRunner` is the iteration part of the loop supervisor: the loop
(:mod:`forgeflare.supervisor.run._loop`) keeps the run and its finish; one step of it
(:mod:`._step`) calls :meth:`IterationRunner.run_agent` once per iteration.

``convergence.json`` counts only when it was written during the iteration: :func:`is_fresh`
compares the file's (inode, mtime, size) before and after, so a stale ``final`` from an earlier
iteration never ends a run.
"""

from __future__ import annotations

import contextlib
import io
import math
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import trio

from forgeflare._budget import passes_cap
from forgeflare._clock import parse_time, utc_timestamp
from forgeflare._completion import count_unchecked
from forgeflare._errors import ConfigError
from forgeflare._units import format_cost
from forgeflare.disk import (
    ConvergenceError,
    ConvergenceState,
    clear_convergence,
    convergence_path,
    open_regular,
    read_convergence,
    read_limited_text,
)
from forgeflare.platform import end_marked_processes
from forgeflare.security import (
    KEY_FD_ENV,
    PASS_ENV_VAR,
    SandboxChoice,
    child_environment,
    loop_sandbox,
    secrets_fd,
)
from forgeflare.supervisor.agents._agentkey import KeyPlan, key_file, plan_agent_key
from forgeflare.supervisor.agents._agentproc import ChildResult, StopControl, exit_status, supervise
from forgeflare.supervisor.agents._deterministic import iteration_failure
from forgeflare.supervisor.backends import (
    COMPLETE_TAG,
    REPORT_ENV,
    ChildEnd,
    IterationReport,
    LineReader,
)
from forgeflare.supervisor.config._config import default_prompt
from forgeflare.supervisor.evidence._finish import IterationOutcome, agent_time
from forgeflare.supervisor.evidence._git import GitSnapshot, commits_and_tree
from forgeflare.supervisor.records._records import (
    InProgress,
    IterationRecord,
    RecordError,
)
from forgeflare.supervisor.run._checkpoint import LoopDelivery
from forgeflare.supervisor.run._lifecycle import HookContext, hook_env
from forgeflare.supervisor.run._runbook import RunBook
from forgeflare.supervisor.run._setup import LoopSetup
from forgeflare.supervisor.run._switching import AgentSwitching

__all__ = ["FileStamp", "IterationRunner", "is_fresh"]

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


def _open_log(log_path: Path) -> io.FileIO:
    """Open an iteration's log for the agent's output, or raise :class:`RecordError`."""
    # Plain blocking writes: a local append per line is cheaper than a thread hop.
    # Unbuffered, so that a full disk fails the write, not the close.
    try:
        # Never through a link or into a FIFO someone put in the run folder.
        fd = open_regular(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        return open(fd, "wb", buffering=0)
    except OSError as exc:
        raise RecordError(f"{log_path}: cannot write: {exc.strerror}") from exc


@dataclass
class _Start:
    """What an iteration knew when its agent started (read again once it ended)."""

    number: int
    before: FileStamp | None
    """convergence.json's stamp before the agent ran."""
    git_before: GitSnapshot | None
    report_path: Path
    log_path: Path
    started_at: str
    context: HookContext
    """What the agent's environment tells it of the run (as the hooks see it)."""
    preamble: str = ""
    """What the prompt starts with (a refused claim, a stall warning, a hint)."""
    requests_left: int | None = None
    """What ``[limits] max_requests_per_hour`` leaves the agent (``None``: no limit)."""
    runtime_bound: bool = False
    over_budget: float | None = None
    """The agent's streamed cost when the loop ended it for passing ``max_cost``."""


class IterationRunner:
    """One iteration's agent: its box, its prompt, command and environment, the run itself,
    and what it did read into its record; what the last iteration left (git, exit)."""

    def __init__(
        self,
        setup: LoopSetup,
        book: RunBook,
        *,
        agent: AgentSwitching,
        delivery: LoopDelivery,
    ) -> None:
        self.setup = setup
        self.book = book
        self.agent = agent
        self.delivery = delivery
        self.sandbox: SandboxChoice | None = None
        self.sandbox_env: dict[str, str] = {}
        """The agent's sandbox variables, decided once at the start (empty: none)."""
        self.git_last: GitSnapshot | None = None
        self.last_tree: str | None = None
        """The tree of the last iteration's newest commit (``None``: no commit, or unknown)."""
        self.last_exit = 0
        self.last_duration = 0.0

    async def choose_sandbox(self) -> SandboxChoice | None:
        """Decide the agent's sandbox once, at the start; returns it."""
        setup = self.setup
        self.sandbox, self.sandbox_env = await loop_sandbox(
            setup.project,
            setup.cfg.security.box(),
            backend=self.agent.backend.name,
            box=self.agent.backend.box,
            env=child_environment(setup.opts.env, setup.opts.pass_env),
        )
        return self.sandbox

    def resume_from(self, rows: list[IterationRecord]) -> None:
        """A resumed run: the last agent's exit and duration are the hooks' ``last_*``."""
        agent_runs = [it for it in rows if not it.skipped]
        if agent_runs:
            self.last_exit = agent_runs[-1].exit_code or 0
            self.last_duration = agent_runs[-1].duration

    # -- one agent run -------------------------------------------------------------------------
    def prompt(self, preamble: str = "") -> str:
        """The iteration's prompt: what the last iteration left to say (a refused claim, a
        stall warning) first, then the mode's prompt."""
        return preamble + self.prompt_text()

    def prompt_text(self) -> str:
        """The mode's prompt (with a fleet loop's task first)."""
        path = self.setup.project / ".fresher" / f"PROMPT.{self.book.record.mode}.md"
        try:
            text = read_limited_text(path)
        except FileNotFoundError:
            paths = self.setup.cfg.paths
            text = default_prompt(
                self.book.record.mode, spec_dir=paths.spec_dir, plan_file=paths.plan_file
            )
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path}: cannot read the prompt: {exc}") from exc
        if self.setup.opts.task:
            # A fleet loop's own task comes first: each loop completes on its own.
            text = f"{self.setup.opts.task.strip()}\n\n---\n\n{text}"
        return text + self.agent.backend.prompt_suffix

    def plan_unchecked(self) -> int | None:
        path = self.setup.project / self.setup.cfg.paths.plan_file
        try:
            return count_unchecked(
                read_limited_text(path, folder=self.setup.project, errors="replace")
            )
        except FileNotFoundError:
            return None
        except OSError as exc:
            self.setup.display.warn(f"{path}: cannot read the plan: {exc.strerror}")
            return None

    def agent_argv(self, requests_left: int | None = None) -> list[str]:
        argv = self.setup.cfg.agent_argv(
            self.setup.opts.python, self.agent.backend, self.agent.profile
        )
        max_cost = self.setup.cfg.limits.max_cost
        if max_cost:
            argv += self.agent.backend.budget_argv(
                max_cost - (self.book.record.totals.cost_usd or 0.0)
            )
        if requests_left is not None:
            argv += self.agent.backend.requests_argv(requests_left)
        return argv

    def agent_env(self, number: int, report_path: Path, ctx: HookContext) -> KeyPlan:
        """The agent's environment (no secrets but those passed), the run's variables, and
        how its key reaches it (:mod:`~forgeflare.supervisor.agents._agentkey`)."""
        plan = plan_agent_key(self.agent.backend, self.setup.opts.env, self.setup.opts.pass_env)
        env = plan.env
        env.update(hook_env("agent", ctx))
        env.update(
            self.setup.cfg.profile_env(self.agent.profile)
        )  # the profile's account, e.g. CODEX_HOME
        env[REPORT_ENV] = str(report_path)
        if self.setup.opts.pass_env:
            env[PASS_ENV_VAR] = ",".join(self.setup.opts.pass_env)
        security = self.setup.cfg.security
        if security.allow_paths:
            env["FORGEFLARE_ALLOW_PATHS"] = os.pathsep.join(
                str((self.setup.project / p).resolve()) for p in security.allow_paths
            )
        env.update(self.sandbox_env)
        env.update(self.delivery.git_identity)  # git has none: the agent commits as the loop does
        env.update(self.agent.backend.agent_env(env, self.setup.project))  # its own variables
        return plan

    @contextlib.contextmanager
    def key_handover(self, plan: KeyPlan, argv: list[str], number: int) -> Iterator[list[int]]:
        """Hand the agent its key as ``plan`` says: a descriptor (its number goes in the
        environment, the descriptor in the list yielded) or the one-shot key file (the
        backend's ``helper_argv`` added to ``argv``); both are gone when the agent is."""
        with contextlib.ExitStack() as stack:
            fds: list[int] = []
            if plan.through_fd:
                fds.append(secrets_fd(plan.through_fd))
                stack.callback(os.close, fds[0])
                plan.env[KEY_FD_ENV] = str(fds[0])
            if plan.helper_key is not None:
                path = stack.enter_context(
                    key_file(self.book.store.dir / f".key-{number:03d}", plan.helper_key)
                )
                argv += self.agent.backend.helper_argv(path)
            yield fds

    async def run_agent(
        self,
        number: int,
        *,
        context: HookContext,
        preamble: str = "",
        requests_left: int | None = None,
    ) -> tuple[IterationRecord, IterationOutcome]:
        """Run iteration ``number``'s agent (``context`` as the hooks see the run, ``preamble``
        first in its prompt); returns its record and the decision's outcome."""
        conv = convergence_path(self.setup.project)
        warning = clear_convergence(conv)
        if warning:
            self.setup.display.warn(warning)
        git_before = self.git_last if self.git_last is not None else await self.delivery.snapshot()
        start = _Start(
            number=number,
            before=_stamp(conv),
            git_before=git_before,
            report_path=self.book.store.dir / f"iteration-{number:03d}.report.json",
            log_path=self.book.store.iteration_log(number),
            started_at=utc_timestamp(),
            context=context,
            preamble=preamble,
            requests_left=requests_left,
        )
        start.report_path.unlink(missing_ok=True)
        budget, start.runtime_bound = agent_time(self.setup.limits, self.book.elapsed())
        head_before = git_before.head if git_before else None
        self.book.record.current = InProgress(number=number, started_at=start.started_at)
        self.book.store.event(
            "iteration_started", number=number, head=head_before, log=start.log_path.name
        )
        result, reader = await self.watch_agent(start, budget)
        return await self.read_iteration(start, result, reader)

    async def watch_agent(self, start: _Start, budget: float) -> tuple[ChildResult, LineReader]:
        """Start the agent, show and log its output until it ends (or is ended)."""
        number, log_path = start.number, start.log_path
        prompt = self.prompt(start.preamble)
        argv = self.agent_argv(start.requests_left)
        plan = self.agent_env(number, start.report_path, start.context)
        env = plan.env
        failed: list[Exception] = []

        def on_start(pid: int) -> None:
            assert self.book.record.current is not None
            self.book.record.current.agent_pid = pid
            try:
                self.book.save()
            except RecordError as exc:
                failed.append(exc)  # raised once the agent is done: it must not be left running

        self.setup.display.info(f"iteration {number}: starting {argv[0]} ({self.agent.label})")
        self.setup.display.start_iteration(number, self.setup.limits.max_iterations)
        reader = self.agent.backend.start_reader(argv=argv, env=env)
        cap, spent = self.setup.cfg.limits.max_cost, self.book.record.totals.cost_usd or 0.0
        streamed = getattr(reader, "streamed_cost_usd", None)  # CLI streams that tell a cost
        halt: StopControl = self.setup.stop
        with _open_log(log_path) as log:

            def on_line(line: bytes) -> None:
                if not failed:
                    try:
                        log.write(line)
                    except OSError as exc:
                        # A full disk must not cut the iteration short: the terminal still
                        # shows the output, and the records' failure ends the loop after it.
                        failed.append(RecordError(f"{log_path}: cannot write: {exc.strerror}"))
                shown = reader.feed(line.decode("utf-8", errors="replace"))
                if getattr(reader, "end_reason", None) and not halt.stop.is_set():
                    halt.stop.set()  # the backend's reader asks for its end (a long retry wait)
                if streamed is not None and start.over_budget is None:
                    cost = streamed()
                    if passes_cap(spent=spent, streamed=cost, cap=cap):
                        start.over_budget = cost
                        self.setup.display.warn(
                            f"iteration {number}: the agent's cost so far ({format_cost(cost)}) "
                            f"passes the budget of ${cap:g} (${spent:.2f} spent before): ending it"
                        )
                        halt.stop.set()  # this agent only: the loop finishes budget after it
                if self.setup.opts.raw:
                    self.setup.display.output(line)
                    return
                for text in shown:
                    self.setup.display.output(text + "\n")

            try:
                with (
                    self.key_handover(plan, argv, number) as pass_fds,
                    self.setup.stop.scoped() as halt,
                ):
                    result = await supervise(
                        argv,
                        cwd=self.setup.project,
                        env=env,
                        stdin=prompt.encode(),
                        timeout=None if math.isinf(budget) else budget,
                        grace=self.setup.cfg.agent.kill_grace,
                        stop=halt,
                        on_line=on_line,
                        on_start=on_start,
                        pass_fds=pass_fds,
                    )
            except OSError as exc:
                result = self._not_started(argv[0], exc, log)
            finally:
                self.setup.display.end_iteration()
        await self._end_leftovers()
        self.book.hold_failure(failed[0] if failed else None)
        return result, reader

    async def read_iteration(
        self, start: _Start, result: ChildResult, reader: LineReader
    ) -> tuple[IterationRecord, IterationOutcome]:
        """Read what the agent did (its report, convergence.json, git) into its record."""
        number, conv, before = start.number, convergence_path(self.setup.project), start.before
        git_before, report_path, log_path = start.git_before, start.report_path, start.log_path
        started_at, runtime_bound = start.started_at, start.runtime_bound
        head_before = git_before.head if git_before else None
        state = self._fresh_convergence(conv, before)
        # Delivery first: the loop commits what the agent left, so the commits and the
        # change below count it, and a claim is judged on what is in git.
        delivered = await self.delivery.checkpoint(number, time.time())
        git_after = delivered.snapshot or await self.delivery.snapshot()
        dirty = delivered.dirty
        if dirty is None:  # checkpoint off (or failed): what is left, asked once more
            dirty = await self.delivery.dirty_paths() or []
        self.git_last = git_after
        commits = 0
        self.last_tree = None
        changed: bool | None = None
        if git_before is not None and git_after is not None:
            commits, self.last_tree = await commits_and_tree(
                self.setup.project, git_before.head, git_after.head
            )
            changed = commits > 0 or git_before != git_after
        final = state.final if state else None
        report = self.agent.backend.report(
            reader,
            ChildEnd(
                exit_code=result.exit_code,
                timed_out=result.timed_out,
                stopped=result.stopped,
                signalled=result.returncode < 0 and not result.stopped,
            ),
            final,
            report_path if report_path.exists() else None,
        )
        if start.over_budget is not None:
            # Ended before its result line: what it streamed is what it cost.
            billed = max(report.cost_usd or 0.0, start.over_budget)
            report = report.model_copy(update={"outcome": "budget", "cost_usd": billed})
        it = IterationRecord.from_report(
            report,
            number=number,
            started_at=started_at,
            backend=self.agent.backend.name,
            profile=self.agent.profile,
            duration=round(result.duration, 3),
            exit_code=exit_status(result),
            timed_out=result.timed_out,
            observations=[o.model_dump() for o in state.observations] if state else [],
            head_before=head_before,
            head_after=git_after.head if git_after else None,
            log=log_path.name,
            commits=commits,
            changed=changed,
            plan_unchecked=self.plan_unchecked(),
            checkpoint=delivered.record,
            dirty=dirty,
        )
        outcome = IterationOutcome(
            mode=self._mode(),
            exit_code=result.exit_code,
            timed_out=result.timed_out,
            stop_reason=report.stop_reason,
            plan_unchecked=it.plan_unchecked,
            git_changed=changed,
            outcome=report.outcome,
            signal_complete=report.signal == COMPLETE_TAG,
            runtime_bound=runtime_bound,
            transient=report.transient,
            resets_at=parse_time(report.resets_at),
            question=report.question,
            deterministic=self.deterministic(report),
        )
        self._show_end(it, outcome, result, report.tokens.total, commits)
        self.last_exit, self.last_duration = exit_status(result), it.duration
        return it, outcome

    def skip(self, number: int) -> tuple[IterationRecord, IterationOutcome]:
        """Iteration ``number`` skipped (by ``next_iteration``): its record and outcome."""
        it = IterationRecord(number=number, started_at=utc_timestamp(), skipped=True)
        it.plan_unchecked = self.plan_unchecked()
        outcome = IterationOutcome(
            mode=self._mode(), skipped=True, plan_unchecked=it.plan_unchecked
        )
        return it, outcome

    def _mode(self) -> Literal["planning", "building"]:
        """The run's mode as the decision knows it."""
        return "planning" if self.book.record.mode == "planning" else "building"

    def deterministic(self, report: IterationReport) -> str | None:
        """The agent's line when this iteration failed in a way retrying cannot fix (a
        backend may say which of its errors are such, and whether its ``detail`` is error
        text whose repetition counts)."""
        backend, profile = self.agent.backend, self.agent.profile
        earlier = [
            row
            for row in self.book.record.iterations
            if (row.backend, row.profile) == (backend.name, profile)
        ]
        if not getattr(backend, "structured_errors", False):
            earlier = []  # its last line of output, not error text: only its table decides
        table = getattr(backend, "deterministic_errors", ())
        return iteration_failure(report, earlier, table=table)

    def _not_started(self, program: str, exc: OSError, log: io.FileIO) -> ChildResult:
        """The result of an agent that could not start (exit 127), said in its log and shown."""
        msg = f"cannot start the agent {program!r}: {exc.strerror or exc}"
        with contextlib.suppress(OSError):
            log.write(f"forgeflare loop: {msg}\n".encode())
        self.setup.display.error(msg)
        return ChildResult(returncode=127, timed_out=False, stopped=False, duration=0.0)

    async def _end_leftovers(self) -> None:
        """End the processes the agent left running."""
        # Descendants that left the agent's process group (a new session) carry the run's marker.
        leftovers = await trio.to_thread.run_sync(
            end_marked_processes,
            "FRESHER_RUN_ID",
            self.book.record.run_id,
            self.setup.cfg.agent.kill_grace,
        )
        if leftovers:
            self.setup.display.warn(f"ended {len(leftovers)} process(es) the agent left running")

    def _fresh_convergence(self, conv: Path, before: FileStamp | None) -> ConvergenceState | None:
        """The convergence file the agent wrote this iteration (``None``: none, or unreadable,
        with a warning)."""
        if is_fresh(before, _stamp(conv)):
            try:
                return read_convergence(conv)
            except ConvergenceError as exc:
                self.setup.display.warn(str(exc))
        return None

    def _show_end(
        self,
        it: IterationRecord,
        outcome: IterationOutcome,
        result: ChildResult,
        tokens: int,
        commits: int,
    ) -> None:
        """Show how the iteration ended: a kill at a time limit, then its one-line summary."""
        number = it.number
        if result.timed_out:
            what = "runtime limit" if outcome.runtime_hit else "iteration timeout"
            self.setup.display.error(f"iteration {number}: agent killed at the {what}")
        cost = f", {format_cost(it.cost_usd)}"
        stop_words = "" if it.stop_reason is None else f", stop {it.stop_reason}"
        self.setup.display.info(
            f"iteration {number}: {it.outcome}, exit {it.exit_code}{stop_words}, "
            f"{it.duration:.1f}s, tokens {tokens}{cost}, commits {commits}"
        )
