"""One step of the loop: the checks between iterations, the agent (or a skip), the evidence,
the verdict, and what the verdict makes the loop do (finish, wait, pause or go on).

The verdict is :func:`~._finish.decide`'s (pure); starting, watching, reading and recording
the agent is :class:`~._iteration.IterationRunner`'s.
"""

from __future__ import annotations

from dataclasses import asdict, replace
from datetime import UTC, datetime

import trio

from forgeflare._clock import utc_timestamp
from forgeflare._evidence import stall_warning
from forgeflare._review import OVER_BUDGET
from forgeflare.supervisor._blocked import take_answer
from forgeflare.supervisor._checks import hook_record
from forgeflare.supervisor._fallback import Choice, Window
from forgeflare.supervisor._finish import (
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
from forgeflare.supervisor._loopstate import LoopState
from forgeflare.supervisor._records import ClaimRecord, IterationRecord
from forgeflare.supervisor._waits import WaitFor

__all__ = ["LoopStep"]

_FAILURES = 2
"""Checkpoint commits failing this many times in a row end the loop ``undelivered``."""


class LoopStep(LoopState):
    """One step of the loop (a base of the loop; its state is :class:`LoopState`)."""

    async def iterate(self) -> FinishType | None:
        """One pass of the loop: ``None`` to go on."""
        await self.hold_while_paused()
        await self.hold_for_requests()
        early = await self.before_iteration()
        if early is not None:
            return early
        choice = self.choose()
        if choice.agent is None:
            return await self.no_agent(choice)
        rec = self.record
        number = rec.iterations_done + 1
        hook = await self.hook("next_iteration", self.context(iteration=number))
        verdict = hook_verdict(hook.status.value, stopped=self.stop.stop.is_set(), skippable=True)
        if isinstance(verdict, Finish):
            return verdict.type
        if isinstance(verdict, Skip) and self.last_claim == "refused":
            # A refusal is work for the agent, whatever the plan (or a hook) says.
            self.display.warn(
                f"iteration {number}: next_iteration asked to skip, but the last claim was "
                "refused: the agent runs with the reasons"
            )
            verdict = None
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
            hint = self.take_user_hint()
            it, outcome = await self.run_agent(number)
            it.hint = hint
            failed = it.checkpoint is not None and it.checkpoint.failed is not None
            self.checkpoint_failures = self.checkpoint_failures + 1 if failed else 0
        it.next_iteration_hook = hook_record(hook, number)
        gate = await self.stall_gate(it, outcome)
        await self.measure(it, outcome, gate)
        facts = self.facts(it, outcome)
        ruling = decide(facts)
        claim = claimed(outcome)
        preamble = ""
        action = ruling.action
        judged = isinstance(action, RunGate) or (
            isinstance(action, Finish) and action.type is FinishType.COMPLETE
        )
        undelivered = await self.undelivered(it) if claim is not None and judged else None
        if claim is not None and undelivered is not None:
            # Never complete on work that is not in git: the gate and reviewer need not run.
            it.claim = ClaimRecord(
                by=claim, accepted=False, rejected_by="delivery", why=undelivered
            )
            self.display.error(undelivered)
            ruling = replace(ruling, action=Finish(FinishType.UNDELIVERED, undelivered))
        elif isinstance(ruling.action, RunGate) and claim is not None:
            passed, preamble = await self.check_claim(it, claim, gate)
            # What init's next_iteration hook reads: a red gate is work for the agent, no skip.
            refused = it.claim is not None and it.claim.rejected_by == "gate"
            self.last_gate = "failed" if refused else "passed"
            ruling = decide(replace(facts, gate_passed=passed))
            if it.review is not None and (it.review.error or "").startswith(OVER_BUDGET):
                # The reviewer's request would pass the cap: the budget ends the run.
                over = replace(outcome, outcome="budget")
                ruling = decide(replace(facts, gate_passed=passed, outcome=over))
                self.finish_reason = f"stopped: the reviewer was {it.review.error}"
        elif claim is not None:
            done = isinstance(ruling.action, Finish) and ruling.action.type is FinishType.COMPLETE
            it.claim = ClaimRecord(by=claim, accepted=done)
        if it.claim is not None:
            self.note_claim(it.claim)
        ruling = self.delivery_rules(ruling)
        warning = stall_warning(
            self.no_progress, self.limits.stall_after, it.progress.why if it.progress else ""
        )
        self.preamble = preamble + (warning or "")
        return await self.apply(it, ruling)

    async def no_agent(self, choice: Choice) -> FinishType | None:
        """No agent is open: finish when none will be again, else wait for the first window."""
        if choice.wait_until is None:
            self.finish_reason = choice.reason
            self.display.error(f"no agent left: {choice.reason}")
            spent = any(w.reason == "quota spent" for w in self.windows.values())
            return FinishType.QUOTA if spent else FinishType.ERROR
        self.display.warn(f"no agent open: {choice.reason}")
        left = (choice.wait_until - datetime.now(UTC)).total_seconds()
        opens_in = seconds = left / self.time_scale if self.time_scale else 0.0
        if self.limits.max_runtime:  # never past max_runtime (the next check finishes)
            seconds = min(seconds, max(0.0, self.limits.max_runtime - self.elapsed()))
        await self.wait("limit_wait", max(0.0, seconds), choice.wait_until, opens_in=opens_in)
        return None  # the checks between iterations again (a stop, the runtime)

    def facts(self, it: IterationRecord, outcome: IterationOutcome) -> IterationFacts:
        """What the loop's rules decide on after iteration ``it``."""
        return IterationFacts(
            outcome=outcome,
            limits=self.limits,
            counted=self.record.counted_iterations,
            elapsed=self.elapsed(),
            streaks=Streaks(**self.record.streaks),
            waits=self.wait_streaks,
            now=datetime.now(UTC),
            stopped=self.stop.stop.is_set(),
            no_progress=self.no_progress,
            stall_why=it.progress.why if it.progress and not it.progress.made else "",
        )

    def delivery_rules(self, ruling: Verdict) -> Verdict:
        """Checkpoints that keep failing end the loop; an unchanged iteration after a refusal
        says the refusal."""
        action = ruling.action
        if self.checkpoint_failures >= _FAILURES and not isinstance(action, Finish):
            why = (
                f"undelivered: {self.checkpoint_failures} checkpoint commits failed in a row; "
                f"see `git -C {self.project} status`"
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

    async def apply(self, it: IterationRecord, ruling: Verdict) -> FinishType | None:
        """Record the iteration as the verdict says and act on it: finish, wait or go on."""
        action = ruling.action
        self.wait_streaks = ruling.waits
        self.record.streaks = asdict(ruling.streaks)
        # A spent quota or a deterministic failure ends the night only when no fallback is
        # left to go on with.
        quota_fallback = isinstance(action, Finish) and action.agent_only and bool(self.fallbacks)
        if isinstance(action, Finish) and action.reason is not None and not quota_fallback:
            self.finish_reason = action.reason
        if isinstance(action, Finish) and action.type is FinishType.BLOCKED:
            return await self.blocked(it, ruling)
        if ruling.notify is not None:
            detail = f"{ruling.streaks.errors} error iterations in a row"
            await self.notifier.send(ruling.notify, {**self.summary(), "detail": detail})
        self.finish_iteration(it, ruling.label, counted=ruling.counted)
        if quota_fallback:
            assert isinstance(action, Finish)
            spent = action.type is FinishType.QUOTA
            self.windows[self.current] = Window(
                None, "quota spent" if spent else action.reason or ""
            )
            return None
        if isinstance(action, Finish):
            return action.type
        if isinstance(action, WaitFor):
            if action.kind == "limit_wait":
                self.learn_window((action.until - datetime.now(UTC)).total_seconds())
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
