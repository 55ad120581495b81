"""The evidence an iteration leaves: the gate's run, progress against the stall rule, and a
completion claim held against the gate and the reviewer.

The rules are :mod:`forgeflare._evidence`'s (pure); this is the shell: it runs the gate (output
kept as ``gate-NNN.log``), asks the reviewer and records what each said on the iteration's row.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field

from forgeflare._evidence import (
    ClaimBy,
    GateRun,
    Measures,
    Progress,
    gate_tail,
    judge_progress,
    rejection_text,
    stall_streak,
)
from forgeflare.disk import atomic_write_text, read_limited_text
from forgeflare.security import GateBox, collect_diff, gate_box
from forgeflare.security import run_gate as run_boxed_gate
from forgeflare.supervisor.backends._report import Tokens
from forgeflare.supervisor.evidence._finish import IterationOutcome
from forgeflare.supervisor.evidence._git import tree_of
from forgeflare.supervisor.records._records import (
    ClaimRecord,
    IterationRecord,
    ProgressRecord,
    ReviewRecord,
)
from forgeflare.supervisor.run._checkpoint import LoopDelivery
from forgeflare.supervisor.run._checks import LoopChecks
from forgeflare.supervisor.run._runbook import RunBook
from forgeflare.supervisor.run._setup import LoopSetup
from forgeflare.supervisor.run._waiting import LoopWaits

__all__ = ["LoopProof"]


@dataclass(eq=False)
class LoopProof:
    """The evidence of the loop's iterations: the gate, the stall rule's measures and the
    reviewer's verdicts.

    ``task``: the run's task as the reviewer reads it (asked only when a reviewer judges)."""

    setup: LoopSetup
    book: RunBook
    _: KW_ONLY
    checks: LoopChecks
    delivery: LoopDelivery
    waits: LoopWaits
    task: Callable[[], str]
    measures: Measures = field(init=False, default_factory=Measures)
    """What progress is measured against: the last iteration's plan, gate and tree."""
    seen_trees: set[str] = field(init=False, default_factory=set)
    no_progress: int = field(init=False, default=0)
    last_review: tuple[str, ReviewRecord] | None = field(init=False, default=None)
    """The digest of the diff the reviewer last judged, and its verdict (it stands while
    the diff is the same)."""
    gate_box: GateBox | None = field(init=False, default=None)
    """Where the gate and the reviewer's diff run, decided before either first runs
    (whatever the backend)."""
    gate_said: bool = field(init=False, default=False)
    """Whether the banner said where the gate runs."""
    last_gate: str = field(init=False, default="")
    """``passed`` / ``failed`` once the gate ran (FRESHER_LAST_GATE for next_iteration)."""

    async def baseline(self) -> None:
        """Where progress is measured from: the plan and (with the stall rule) the gate's
        failures before the first iteration (after a resume: as the last row left them)."""
        if self.delivery.git_repo and self.setup.limits.stall_after:
            # The trees the run has had: the start, then each commit's (a resume loses the
            # ones between, so an undo across a crash counts once as progress).
            start = await tree_of(self.setup.project, self.book.record.head_at_start)
            if start:
                self.seen_trees.add(start)
        rows = [r for r in self.book.record.iterations if r.progress is not None]
        if self.setup.opts.resume and rows:
            last = rows[-1]
            self.no_progress = last.progress.no_progress if last.progress else 0
            self.measures = Measures(
                plan_unchecked=last.plan_unchecked,
                gate=last.progress.gate_signature if last.progress else None,
            )
            return
        gate: str | None = None
        if self.setup.cfg.limits.gate and self.setup.limits.stall_after:
            gate = (await self.run_gate(0)).signature
        self.measures = Measures(plan_unchecked=self.book.record.plan_unchecked_at_start, gate=gate)

    async def stall_gate(self, it: IterationRecord, outcome: IterationOutcome) -> GateRun | None:
        """With a gate and the stall rule, the gate runs after every iteration that did work:
        its failures are the progress measure."""
        if (
            not self.setup.cfg.limits.gate
            or not self.setup.limits.stall_after
            or outcome.skipped
            or outcome.outcome in ("rate_limited", "api_error")
            or self.setup.stop.stop.is_set()
        ):
            return None
        return await self.run_gate(it.number)

    async def measure(
        self,
        it: IterationRecord,
        outcome: IterationOutcome,
        gate: GateRun | None,
        last_tree: str | None,
    ) -> None:
        """Judge the iteration's progress (pure rule in ``_evidence``) and keep the streak;
        ``last_tree``: the tree of the iteration's newest commit."""
        if not self.setup.limits.stall_after or outcome.skipped:
            return
        if outcome.outcome in ("rate_limited", "api_error"):
            return  # a wait, not an attempt
        tree = last_tree if it.commits else None
        before = self.measures
        after = Measures(
            plan_unchecked=it.plan_unchecked,
            gate=gate.signature if gate is not None else before.gate,
            commits=it.commits,
            tree=tree,
        )
        if after.plan_unchecked is None and gate is None and not self.delivery.git_repo:
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
        held = await self._hold_claim(it, claim, gate)
        # What init's next_iteration hook reads: a red gate is work for the agent, no skip.
        refused = it.claim is not None and it.claim.rejected_by == "gate"
        self.last_gate = "failed" if refused else "passed"
        return held

    async def _hold_claim(
        self, it: IterationRecord, claim: ClaimBy, gate: GateRun | None
    ) -> tuple[bool, str]:
        if self.setup.cfg.limits.gate:
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
                self.setup.display.warn(f"complete claimed ({claim}), but the gate failed ({code})")
                text = rejection_text(by=claim, rejected_by="gate", gate=gate)
                return False, text
            changed = await self.gate_changed(it)
            if changed:
                why = "the gate changed tracked files: " + ", ".join(changed[:5])
                it.claim = ClaimRecord(by=claim, accepted=False, rejected_by="gate", why=why)
                self.setup.display.warn(f"complete claimed ({claim}), but {why}")
                text = (
                    f"# The last iteration claimed completion, but it was refused\n\n{why}. "
                    "A gate must pass on the committed tree without changing it: make the "
                    "change the gate makes yourself (and commit it), or fix the gate.\n\n"
                )
                return False, text
        if self.setup.cfg.finish.reviewer:
            await self.waits.hold_for_requests(pending=[it])  # the review is a request too
            review = await self.review(it, claim, gate)
            it.review = review
            if review.complete is not True:
                if review.complete is None:
                    why = f"the reviewer gave no verdict: {review.error}"
                    self.setup.display.warn(f"complete claimed ({claim}), but {why}: going on")
                    text = ""
                else:
                    why = "; ".join(review.reasons) or "the reviewer judged it not complete"
                    self.setup.display.warn(
                        f"complete claimed ({claim}), but the reviewer said: {why}"
                    )
                    text = rejection_text(
                        by=claim,
                        rejected_by="reviewer",
                        gate=gate,
                        reasons=tuple(review.reasons),
                        missing=tuple(review.missing),
                    )
                it.claim = ClaimRecord(by=claim, accepted=False, rejected_by="reviewer", why=why)
                return False, text
            self.setup.display.info(f"reviewer {review.model}: complete")
        it.claim = ClaimRecord(by=claim, accepted=True)
        return True, ""

    async def gate_changed(self, it: IterationRecord) -> list[str]:
        """Tracked paths the gate changed (they were clean after the checkpoint)."""
        if not self.delivery.git_repo:
            return []
        before = {*it.dirty, *self.book.record.dirty_at_start}
        return sorted(p for p in await self.delivery.tracked_changes() if p not in before)

    async def review(
        self, it: IterationRecord, claim: ClaimBy, gate: GateRun | None
    ) -> ReviewRecord:
        """Ask ``[finish] reviewer`` (see ``_reviewer``); never raises. The same diff is not
        judged twice: the last verdict stands (no new request, no new spend)."""
        from forgeflare.supervisor.evidence._reviewer import ReviewInput, run_review

        # A claim over changed git internals or hooks is never accepted: the loop ends there.
        untrusted = await self.checks.untrusted_now()
        if untrusted is not None:
            return ReviewRecord(
                model=self.setup.cfg.finish.reviewer, error=f"not asked: {untrusted}"
            )
        max_diff = int(self.setup.cfg.finish.reviewer_max_diff)
        # In the box, like the gate: a diff program the agent planted never runs on the host.
        collected = await collect_diff(
            self.setup.project,
            self.book.record.head_at_start,
            box=await self.box(),
            env=self.setup.opts.env,
            budget=max_diff,
        )
        diff, stat = collected.diff, collected.stat
        digest = hashlib.sha256(diff.encode(errors="replace")).hexdigest()
        last = self.last_review
        if last is not None and last[0] == digest and last[1].complete is not None:
            self.setup.display.info("reviewer: the diff is unchanged: its last verdict stands")
            return last[1].model_copy(update={"tokens": Tokens(), "cost_usd": None, "file": None})
        plan = self.setup.project / self.setup.cfg.paths.plan_file
        try:
            plan_text = read_limited_text(plan, folder=self.setup.project, errors="replace")
        except OSError:
            plan_text = ""
        review = await run_review(
            ReviewInput(
                model=self.setup.cfg.finish.reviewer,
                task=self.setup.opts.task or self.task(),
                plan=plan_text,
                diff=diff,
                diff_stat=stat,
                max_diff=max_diff,
                gate=gate,
                final_message=self.output_tail(it),
                claim=claim,
            ),
            env=self.setup.opts.env,
            save_to=self.book.store.dir / f"review-{it.number:03d}.json",
            # The run's known spend so far: this iteration is not in the totals yet.
            cap=self.setup.cfg.limits.max_cost or None,
            spent=(self.book.record.totals.cost_usd or 0.0) + (it.cost_usd or 0.0),
        )
        self.last_review = (digest, review)
        return review

    async def box(self) -> GateBox:
        """Where the agent's work runs for the loop (the gate, the reviewer's diff): decided
        once per run from ``[security]``."""
        if self.gate_box is None:
            settings = self.setup.cfg.security.box()
            self.gate_box = await gate_box(self.setup.project, settings, self.setup.opts.env)
        return self.gate_box

    def output_tail(self, it: IterationRecord) -> str:
        """The end of the iteration's log: the agent's last words (what it claimed with)."""
        if not it.log:
            return ""
        try:
            with open(self.book.store.dir / it.log, "rb") as f:
                f.seek(max(0, f.seek(0, os.SEEK_END) - 4000))
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    async def run_gate(self, number: int) -> GateRun:
        """Run ``[limits] gate`` in the project (bounded by the iteration timeout) through the
        one gate runner (in the box, without secrets); its output is kept in the run folder
        as ``gate-NNN.log``."""
        gate = self.setup.cfg.limits.gate
        untrusted = await self.checks.untrusted_now()
        if untrusted is not None:
            return GateRun(gate, None, f"not run: {untrusted}")
        if not self.gate_said:
            self.gate_said = True
            self.setup.display.info((await self.box()).line)
        self.setup.display.info(f"gate: {gate}")
        done = await run_boxed_gate(
            gate,
            project=self.setup.project,
            env=self.setup.opts.env,
            box=await self.box(),
            grace=self.setup.cfg.agent.kill_grace,
            timeout=self.setup.cfg.limits.iteration_timeout or None,
            stop=self.setup.stop.stop,
        )
        text = done.output
        for line in text.splitlines()[-20:]:
            self.setup.display.output(line + "\n", prefix="[gate] ")
        log = self.book.store.dir / f"gate-{number:03d}.log"
        try:
            atomic_write_text(log, text, fsync=False)
        except OSError as exc:
            self.setup.display.warn(f"{log}: cannot write: {exc.strerror}")
        code = done.exit_code
        self.book.store.event("gate", command=gate, exit_code=code, iteration=number, log=log.name)
        return done
