"""One step of the loop: the checks between iterations, the agent (or a skip), the evidence,
the verdict, and what the verdict makes the loop do (finish, wait, pause or go on).

The verdict is :func:`~._finish.decide`'s (pure); the step asks the loop's parts in turn and
holds only what passes from one step to the next: the next prompt's preamble, the wait
streaks, and whether a question was notified.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime

import trio

from forgeflare._evidence import stall_warning
from forgeflare._review import OVER_BUDGET
from forgeflare.supervisor.agents._fallback import Choice
from forgeflare.supervisor.evidence._finish import (
    Finish,
    FinishType,
    IterationFacts,
    IterationOutcome,
    RunGate,
    Skip,
    Streaks,
    Verdict,
    claimed,
    decide,
    hook_verdict,
)
from forgeflare.supervisor.evidence._waits import WaitFor, WaitStreaks
from forgeflare.supervisor.records._blocked import take_answer
from forgeflare.supervisor.records._records import ClaimRecord, IterationRecord
from forgeflare.supervisor.run._checkpoint import CLAIM_REASON_FILE, LoopDelivery
from forgeflare.supervisor.run._checks import LoopChecks, hook_record
from forgeflare.supervisor.run._hand import hint_preamble
from forgeflare.supervisor.run._iteration import IterationRunner
from forgeflare.supervisor.run._lifecycle import HookContext
from forgeflare.supervisor.run._proof import LoopProof
from forgeflare.supervisor.run._runbook import RunBook
from forgeflare.supervisor.run._setup import LoopSetup
from forgeflare.supervisor.run._switching import AgentSwitching
from forgeflare.supervisor.run._waiting import LoopWaits

__all__ = ["LoopParts", "LoopStep"]


@dataclass(frozen=True)
class LoopParts:
    """The loop's parts, each built alone from the setup and the run's book."""

    agent: AgentSwitching
    iteration: IterationRunner
    delivery: LoopDelivery
    evidence: LoopProof
    checks: LoopChecks
    waits: LoopWaits

    @classmethod
    def build(cls, setup: LoopSetup, book: RunBook) -> LoopParts:
        """The parts of a loop over ``setup`` and its run ``book``, each given what it uses."""
        agent = AgentSwitching(setup, book)
        delivery = LoopDelivery(setup, book)
        iteration = IterationRunner(setup, book, agent=agent, delivery=delivery)
        checks = LoopChecks(setup, book)
        waits = LoopWaits(setup, book)
        evidence = LoopProof(
            setup,
            book,
            checks=checks,
            delivery=delivery,
            waits=waits,
            task=iteration.prompt_text,
        )
        return cls(agent, iteration, delivery, evidence, checks, waits)


class LoopStep:
    """One step of the loop over its parts (see module)."""

    def __init__(self, setup: LoopSetup, book: RunBook, parts: LoopParts) -> None:
        self.setup = setup
        self.book = book
        self.parts = parts
        self.preamble = ""
        """What the next iteration's prompt starts with (a refused claim, a stall warning)."""
        self.wait_streaks = WaitStreaks()
        self.notified_blocked = False

    def begin_with(self, preamble: str) -> None:
        """The first prompt starts with ``preamble`` (a resumed question's answer)."""
        self.preamble = preamble

    def context(self, *, iteration: int | None = None, finish_type: str = "") -> HookContext:
        """The run as the hooks (and the agent's environment) see it."""
        setup, rec, parts = self.setup, self.book.record, self.parts
        return HookContext(
            mode=rec.mode,
            max_iterations=setup.cfg.fresher.max_iterations,
            project_dir=setup.project,
            log_dir=self.book.store.dir,
            started_at=rec.started_at,
            plan_file=setup.project / setup.cfg.paths.plan_file,
            spec_dir=setup.project / setup.cfg.paths.spec_dir,
            run_id=rec.run_id,
            iteration=rec.iterations_done if iteration is None else iteration,
            last_exit_code=parts.iteration.last_exit,
            last_duration=parts.iteration.last_duration,
            commits_made=rec.totals.commits,
            total_iterations=rec.totals.iterations,
            duration=self.book.elapsed(),
            finish_type=finish_type,
            finish_reason=(rec.finish_reason or "") if finish_type else "",
            last_gate=parts.evidence.last_gate,
            last_claim=parts.delivery.last_claim,
            last_claim_reason_file=self.book.store.dir / CLAIM_REASON_FILE,
        )

    async def iterate(self) -> FinishType | None:
        """One pass of the loop: ``None`` to go on."""
        parts = self.parts
        await parts.waits.hold_while_paused()
        await parts.waits.hold_for_requests()
        early = await parts.checks.before_iteration()
        if early is not None:
            return early
        choice = parts.agent.choose()
        if choice.agent is None:
            return await self.no_agent(choice)
        rec = self.book.record
        number = rec.iterations_done + 1
        hook = await parts.checks.hook("next_iteration", self.context(iteration=number))
        verdict = hook_verdict(
            hook.status.value, stopped=self.setup.stop.stop.is_set(), skippable=True
        )
        if isinstance(verdict, Finish):
            return verdict.type
        if isinstance(verdict, Skip) and parts.delivery.last_claim == "refused":
            # A refusal is work for the agent, whatever the plan (or a hook) says.
            self.setup.display.warn(
                f"iteration {number}: next_iteration asked to skip, but the last claim was "
                "refused: the agent runs with the reasons"
            )
            verdict = None
        it, outcome = await self.agent_or_skip(number, skip=isinstance(verdict, Skip))
        it.next_iteration_hook = hook_record(hook, number)
        return await self.apply(it, await self.judge(it, outcome))

    async def agent_or_skip(
        self, number: int, *, skip: bool
    ) -> tuple[IterationRecord, IterationOutcome]:
        """Iteration ``number``: its agent's run, or the record of a skip."""
        parts = self.parts
        if skip:
            self.setup.display.warn(f"iteration {number} skipped by next_iteration")
            it, outcome = parts.iteration.skip(number)
        else:
            hint = parts.waits.take_user_hint()
            if hint is not None:
                self.preamble = hint_preamble(hint) + self.preamble
            it, outcome = await parts.iteration.run_agent(
                number,
                context=self.context(iteration=number),
                preamble=self.preamble,
                requests_left=parts.waits.requests_left,
            )
            it.hint = hint
            parts.delivery.count(it)
        return it, outcome

    async def judge(self, it: IterationRecord, outcome: IterationOutcome) -> Verdict:
        """The verdict on iteration ``it``: its evidence, a claim held against it, the
        delivery rules; the next prompt's preamble is kept."""
        parts = self.parts
        gate = await parts.evidence.stall_gate(it, outcome)
        await parts.evidence.measure(it, outcome, gate, parts.iteration.last_tree)
        facts = self.facts(it, outcome)
        ruling = decide(facts)
        claim = claimed(outcome)
        preamble = ""
        action = ruling.action
        judged = isinstance(action, RunGate) or (
            isinstance(action, Finish) and action.type is FinishType.COMPLETE
        )
        undelivered = await parts.delivery.undelivered(it) if claim is not None and judged else None
        if claim is not None and undelivered is not None:
            # Never complete on work that is not in git: the gate and reviewer need not run.
            it.claim = ClaimRecord(
                by=claim, accepted=False, rejected_by="delivery", why=undelivered
            )
            self.setup.display.error(undelivered)
            ruling = replace(ruling, action=Finish(FinishType.UNDELIVERED, undelivered))
        elif isinstance(ruling.action, RunGate) and claim is not None:
            passed, preamble = await parts.evidence.check_claim(it, claim, gate)
            ruling = decide(replace(facts, gate_passed=passed))
            if it.review is not None and (it.review.error or "").startswith(OVER_BUDGET):
                # The reviewer's request would pass the cap: the budget ends the run.
                over = replace(outcome, outcome="budget")
                ruling = decide(replace(facts, gate_passed=passed, outcome=over))
                self.book.say_why(f"stopped: the reviewer was {it.review.error}")
        elif claim is not None:
            done = isinstance(ruling.action, Finish) and ruling.action.type is FinishType.COMPLETE
            it.claim = ClaimRecord(by=claim, accepted=done)
        if it.claim is not None:
            parts.delivery.note_claim(it.claim)
        ruling = parts.delivery.delivery_rules(ruling)
        warning = stall_warning(
            parts.evidence.no_progress,
            self.setup.limits.stall_after,
            it.progress.why if it.progress else "",
        )
        self.preamble = preamble + (warning or "")
        return ruling

    async def no_agent(self, choice: Choice) -> FinishType | None:
        """No agent is open: finish when none will be again, else wait for the first window."""
        if choice.wait_until is None:
            self.book.say_why(choice.reason)
            self.setup.display.error(f"no agent left: {choice.reason}")
            return FinishType.QUOTA if self.parts.agent.any_spent() else FinishType.ERROR
        self.setup.display.warn(f"no agent open: {choice.reason}")
        left = (choice.wait_until - datetime.now(UTC)).total_seconds()
        opens_in = seconds = left / self.setup.time_scale if self.setup.time_scale else 0.0
        if self.setup.limits.max_runtime:  # never past max_runtime (the next check finishes)
            seconds = min(seconds, max(0.0, self.setup.limits.max_runtime - self.book.elapsed()))
        wait = self.parts.waits.wait
        await wait("limit_wait", max(0.0, seconds), choice.wait_until, opens_in=opens_in)
        return None  # the checks between iterations again (a stop, the runtime)

    def facts(self, it: IterationRecord, outcome: IterationOutcome) -> IterationFacts:
        """What the loop's rules decide on after iteration ``it``."""
        return IterationFacts(
            outcome=outcome,
            limits=self.setup.limits,
            counted=self.book.record.counted_iterations,
            elapsed=self.book.elapsed(),
            streaks=Streaks(**self.book.record.streaks),
            waits=self.wait_streaks,
            now=datetime.now(UTC),
            stopped=self.setup.stop.stop.is_set(),
            no_progress=self.parts.evidence.no_progress,
            stall_why=it.progress.why if it.progress and not it.progress.made else "",
        )

    async def apply(self, it: IterationRecord, ruling: Verdict) -> FinishType | None:
        """Record the iteration as the verdict says and act on it: finish, wait or go on."""
        action = ruling.action
        self.wait_streaks = ruling.waits
        self.book.record.streaks = asdict(ruling.streaks)
        # A spent quota or a deterministic failure ends the night only when no fallback is
        # left to go on with.
        quota_fallback = (
            isinstance(action, Finish) and action.agent_only and bool(self.parts.agent.fallbacks)
        )
        if isinstance(action, Finish) and action.reason is not None and not quota_fallback:
            self.book.say_why(action.reason)
        if isinstance(action, Finish) and action.type is FinishType.BLOCKED:
            return await self.blocked(it, ruling)
        if ruling.notify is not None:
            detail = f"{ruling.streaks.errors} error iterations in a row"
            summary = self.book.summary()
            await self.setup.notifier.send(ruling.notify, {**summary, "detail": detail})
        self.book.finish_iteration(it, ruling.label, counted=ruling.counted)
        if quota_fallback:
            assert isinstance(action, Finish)
            if action.type is FinishType.QUOTA:
                self.parts.agent.spend_quota()
            else:
                self.parts.agent.give_up(action.reason or "")
            return None
        if isinstance(action, Finish):
            return action.type
        if isinstance(action, WaitFor):
            if action.kind == "limit_wait":
                self.parts.agent.learn_window((action.until - datetime.now(UTC)).total_seconds())
                if self.parts.agent.fallbacks:
                    return None  # the next iteration's choice: a fallback, or the wait
            await self.parts.waits.wait(action.kind, action.seconds, action.until)
            return None
        if ruling.pause > 0:
            self.setup.display.warn(
                f"error iteration ({ruling.streaks.errors} in a row): pausing {ruling.pause:g}s"
            )
            with trio.move_on_after(ruling.pause):
                await self.setup.stop.stop.wait()
        return None

    async def blocked(self, it: IterationRecord, ruling: Verdict) -> FinishType | None:
        """The agent asked a question: record it, say it, wait for an answer if asked to."""
        rec = self.book.record
        rec.question = it.question
        self.preamble = ""
        self.book.finish_iteration(it, ruling.label, counted=ruling.counted)
        self.setup.display.warn(f"iteration {it.number}: the agent asks:\n{it.question}")
        self.book.store.event("blocked", number=it.number, question=it.question)
        await self.setup.notifier.send("blocked", {**self.book.summary(), "detail": it.question})
        self.notified_blocked = True
        answer_wait = self.setup.answer_wait
        if answer_wait is None or not await self.parts.waits.wait_for_answer(answer_wait):
            return FinishType.BLOCKED
        preamble = take_answer(self.book.store.dir, rec)
        if preamble is None:  # the file vanished between the poll and now
            return FinishType.BLOCKED
        self.preamble = preamble
        self.book.say_why(None)
        # A new row object: the store serialises a row once, so a changed one must be new.
        rec.iterations[-1] = it.model_copy(update={"decision": "answered"})
        self.book.save()
        self.setup.display.info("answered: the next iteration's prompt starts with the answer")
        return None
