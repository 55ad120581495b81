"""The finish decision: a pure function of one iteration's outcome and the loop's streaks.

Nothing here does I/O. The loop gathers an :class:`IterationOutcome` (agent exit, the
``final`` reason *this* iteration wrote, plan and git state) into :class:`IterationFacts` and
asks :func:`decide` whether to go on. Finish types (``FRESHER_FINISH_TYPE``) and the
supervisor's exit status for each:

==================  ====  ======================================================================
finish type         exit  when
==================  ====  ======================================================================
``complete``           0  ``final.reason`` is ``convergence_signal``, or (building mode) the plan
                          has no unchecked ``- [ ]`` box left; wins over every limit
``manual``           130  Ctrl+C / SIGTERM
``max_iterations``    10  the configured number of iterations ran (0 = unlimited)
``no_changes``        11  smart termination: no new commit and no work-tree change in a git repo
``error``             12  ``max_consecutive_errors`` error iterations in a row (agent crashed,
                          was killed, timed out, or ``final.reason`` is ``api_error``), or
                          an outage lasted ``max_outage``
``hook_abort``        13  ``started`` or ``next_iteration`` exited 2 (or failed, with
                          ``fail_behavior = "abort"``), or a project hook or command changed
                          during the run (the trust re-check before each iteration)
``timeout``           14  the loop's wall-clock limit (``max_runtime``) was reached
``stuck``             15  ``stuck_after`` iterations in a row ended with ``block_limit_*``
``skips``             16  ``next_iteration`` skipped ``max_skips`` iterations in a row
``budget``            17  ``max_cost`` is spent (before an iteration, or the agent ended on it)
``stopped``           18  ``forgeflare stop`` asked the loop to finish after its iteration
``stalled``           19  ``stall_after`` iterations in a row made no progress (``_evidence``)
``quota``             21  the agent's account has no quota or credit left (billing): waiting
                          cannot fix it, so the loop finishes at once
``blocked``           20  the agent asked a question (``<loop-done>BLOCKED</loop-done>``) and no
                          answer came (``[limits] on_blocked``)
``undelivered``       22  the work could not be committed: a claim was met with uncommitted
                          changes or a failed checkpoint, or 2 checkpoints failed in a row
==================  ====  ======================================================================

Everything that decides the loop's fate is here, pure, so that the loop (``_loop``) only does
I/O and applies the answer. Three questions, asked in this order each pass:

- :func:`before_iteration`: a stop, a ``forgeflare stop`` request, a limit, the budget, a trust
  re-check that failed, or a usage window another loop reported (wait first)?
- :func:`hook_verdict`: what the ``started`` / ``next_iteration`` hook's status means.
- :func:`decide`: after the iteration, from one :class:`IterationFacts` record: a stop during
  it, a usage-window or outage wait (``_waits``; the iteration then neither counts nor reaches
  the finish rule), the finish rule (:func:`finish_rule`), the gate, the error pause.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Literal

from forgeflare._evidence import ClaimBy, claim_by
from forgeflare.supervisor.config._config import FresherSection, LimitsSection
from forgeflare.supervisor.evidence._waits import (
    FinishNow,
    WaitFor,
    WaitSettings,
    WaitStreaks,
    after_iteration,
    budget_exhausted,
)

__all__ = [
    "FINISH_EXIT_CODES",
    "Between",
    "ContinueLoop",
    "Finish",
    "FinishDecision",
    "FinishType",
    "IterationFacts",
    "IterationOutcome",
    "Limits",
    "RunGate",
    "Skip",
    "Streaks",
    "Verdict",
    "agent_time",
    "before_iteration",
    "check_limits",
    "claimed",
    "decide",
    "error_pause",
    "finish_rule",
    "hook_verdict",
    "is_error",
]


class FinishType(StrEnum):
    """How a loop ended (the value of ``FRESHER_FINISH_TYPE``)."""

    COMPLETE = "complete"
    MANUAL = "manual"
    MAX_ITERATIONS = "max_iterations"
    NO_CHANGES = "no_changes"
    ERROR = "error"
    HOOK_ABORT = "hook_abort"
    TIMEOUT = "timeout"
    STUCK = "stuck"
    SKIPS = "skips"
    BUDGET = "budget"
    STOPPED = "stopped"
    STALLED = "stalled"
    QUOTA = "quota"
    BLOCKED = "blocked"
    UNDELIVERED = "undelivered"

    @property
    def exit_code(self) -> int:
        """The supervisor's exit status for this finish type."""
        return FINISH_EXIT_CODES[self]


FINISH_EXIT_CODES: dict[FinishType, int] = {
    FinishType.COMPLETE: 0,
    FinishType.MANUAL: 130,
    FinishType.MAX_ITERATIONS: 10,
    FinishType.NO_CHANGES: 11,
    FinishType.ERROR: 12,
    FinishType.HOOK_ABORT: 13,
    FinishType.TIMEOUT: 14,
    FinishType.STUCK: 15,
    FinishType.SKIPS: 16,
    FinishType.BUDGET: 17,
    FinishType.STOPPED: 18,
    FinishType.STALLED: 19,
    FinishType.QUOTA: 21,
    FinishType.BLOCKED: 20,
    FinishType.UNDELIVERED: 22,
}


@dataclass(frozen=True, slots=True)
class ContinueLoop:
    """Go on with the next iteration."""


FinishDecision = ContinueLoop | FinishType
"""The finish rule's answer for one iteration."""

_QUOTA_ADVICE = (
    "the agent's account has no quota or credit left: add credit or raise the limit in its "
    "billing settings (or switch accounts), then start the loop again"
)
"""The one line a ``quota`` finish gives: what to do (waiting cannot fix it)."""

_BLOCK_REASONS = frozenset({"block_limit_consecutive", "block_limit_total"})
_ERROR_OUTCOMES = frozenset({"agent_error", "api_error", "killed", "timed_out", "refused"})


@dataclass(frozen=True, slots=True)
class IterationOutcome:
    """What one iteration did: a projection of the backend's iteration report and the loop's
    facts (the report is the only account of how the agent ended).

    ``stop_reason`` is the report's: the agent's own reason for ending, from *this* iteration
    (a stale ``final`` from an earlier one never reaches the report). ``exit_code`` is ``None``
    when the agent died by a signal or was killed on a timeout. ``plan_unchecked`` is ``None``
    when there is no plan file; ``git_changed`` is ``None`` outside a git repository.
    """

    mode: Literal["planning", "building"] = "building"
    skipped: bool = False
    exit_code: int | None = 0
    timed_out: bool = False
    stop_reason: str | None = None
    plan_unchecked: int | None = None
    git_changed: bool | None = None
    outcome: str = "ok"
    """The iteration report's outcome (``ok``, ``agent_error`` …)."""
    signal_complete: bool = False
    """The final message carried the completion tag (Claude Code, Codex loops)."""
    runtime_bound: bool = False
    """The loop's wall-clock limit, not the iteration timeout, bounded the agent's run."""
    transient: bool = False
    """For an ``api_error`` outcome: the failure was transient (an outage)."""
    resets_at: datetime | None = None
    """For a ``rate_limited`` outcome: when the usage window resets, if known."""
    question: str | None = None
    """The agent parked the loop on this question (the BLOCKED tag or a question tool)."""
    deterministic: str | None = None
    """The agent's line of a failure waiting cannot fix (``_deterministic``): like a spent
    quota, the loop falls back or finishes ``error`` at once."""

    @property
    def runtime_hit(self) -> bool:
        """The loop's wall-clock limit (not the iteration timeout) ended the agent."""
        return self.timed_out and self.runtime_bound


_FRESHER = FresherSection.model_construct()  # the defaults, without building the schema
_LIMITS = LimitsSection.model_construct()
"""The config's defaults: the one source of the decision's defaults too."""


@dataclass(frozen=True, slots=True)
class Limits:
    """The decision's settings, defaulting to the config's. 0 means unlimited for
    ``max_iterations`` / ``max_runtime``."""

    max_iterations: int = _FRESHER.max_iterations
    max_runtime: float = _LIMITS.max_runtime
    smart_termination: bool = _FRESHER.smart_termination
    max_consecutive_errors: int = _LIMITS.max_consecutive_errors
    stuck_after: int = _LIMITS.stuck_after
    max_skips: int = _LIMITS.max_skips
    iteration_timeout: float = _LIMITS.iteration_timeout
    """Seconds one agent run may take (0 = none)."""
    max_cost: float = _LIMITS.max_cost
    """USD the loop may spend (0 = no cap)."""
    error_pause: float = _LIMITS.error_pause
    """Seconds to pause after an error iteration."""
    gate: bool = False
    """A ``[limits] gate`` command or a ``[finish] reviewer`` is set: ``complete`` counts only
    when the evidence holds."""
    stall_after: int = _LIMITS.stall_after
    """Finish ``stalled`` after this many iterations in a row without progress (0 = off)."""
    waits: WaitSettings = field(default_factory=WaitSettings)


@dataclass(frozen=True, slots=True)
class Streaks:
    """Counts of like iterations in a row, carried from one decision to the next."""

    errors: int = 0
    blocked: int = 0
    skips: int = 0


def is_error(outcome: IterationOutcome) -> bool:
    """An error iteration: the report says the agent crashed, was killed, timed out, was
    refused or hit an API error (how each backend judges that is its report's business)."""
    return not outcome.skipped and outcome.outcome in _ERROR_OUTCOMES


def _plan_done(outcome: IterationOutcome) -> bool:
    return outcome.mode == "building" and outcome.plan_unchecked == 0


def claimed(outcome: IterationOutcome) -> ClaimBy | None:
    """What claims completion in this iteration (the finish rule's ``complete``), if anything."""
    return claim_by(
        signal_complete=not outcome.skipped and outcome.signal_complete,
        stop_reason=None if outcome.skipped else outcome.stop_reason,
        plan_done=_plan_done(outcome),
    )


def check_limits(*, iterations_done: int, elapsed: float, limits: Limits) -> FinishType | None:
    """Before an iteration starts: is a limit already reached?"""
    if limits.max_iterations > 0 and iterations_done >= limits.max_iterations:
        return FinishType.MAX_ITERATIONS
    if limits.max_runtime > 0 and elapsed >= limits.max_runtime:
        return FinishType.TIMEOUT
    return None


def error_pause(outcome: IterationOutcome, pause: float) -> float:
    """Seconds to pause before the next iteration: ``pause`` after an error iteration."""
    return pause if pause > 0 and is_error(outcome) else 0.0


def finish_rule(
    *,
    outcome: IterationOutcome,
    streaks: Streaks,
    iteration: int,
    elapsed: float,
    limits: Limits,
    completion: bool = True,
) -> tuple[Streaks, FinishDecision]:
    """After iteration ``iteration`` (1-based): the new streaks and whether to go on.

    Order matters and is part of the contract: completion first (completing on the last
    allowed iteration is ``complete``), then a question (``blocked``), then the runtime limit
    that ended the agent and the budget, then the streak limits, then ``no_changes``, then the
    iteration and runtime limits.
    ``completion=False`` (the gate refused it) leaves completion out and applies the rest.
    """
    error = is_error(outcome)
    blocked = not outcome.skipped and outcome.stop_reason in _BLOCK_REASONS
    new = Streaks(
        errors=streaks.errors + 1 if error else 0,
        blocked=streaks.blocked + 1 if blocked else 0,
        skips=streaks.skips + 1 if outcome.skipped else 0,
    )
    if outcome.skipped:
        # A skip keeps the error streak: skipping is not evidence that the agent recovered.
        new = replace(new, errors=streaks.errors, blocked=streaks.blocked)
    signalled = outcome.stop_reason == "convergence_signal" or outcome.signal_complete
    if completion and ((not outcome.skipped and signalled) or _plan_done(outcome)):
        return new, FinishType.COMPLETE
    if not outcome.skipped and outcome.question is not None:
        return new, FinishType.BLOCKED
    if outcome.runtime_hit:
        return new, FinishType.TIMEOUT
    if outcome.outcome == "budget":
        return new, FinishType.BUDGET
    if error and new.errors >= max(1, limits.max_consecutive_errors):
        return new, FinishType.ERROR
    if blocked and new.blocked >= max(1, limits.stuck_after):
        return new, FinishType.STUCK
    if outcome.skipped and new.skips >= max(1, limits.max_skips):
        return new, FinishType.SKIPS
    if (
        limits.smart_termination
        and not outcome.skipped
        and not error
        and outcome.git_changed is False
    ):
        return new, FinishType.NO_CHANGES
    limit = check_limits(iterations_done=iteration, elapsed=elapsed, limits=limits)
    if limit is not None:
        return new, limit
    return new, ContinueLoop()


def agent_time(limits: Limits, elapsed: float) -> tuple[float, bool]:
    """How long the next agent run may take (``inf``: no bound), and whether the runtime limit
    rather than the iteration timeout sets that bound."""
    timeout = limits.iteration_timeout or math.inf
    runtime_left = math.inf
    if limits.max_runtime > 0:
        runtime_left = max(0.0, limits.max_runtime - elapsed)
    return min(timeout, runtime_left), runtime_left < timeout


@dataclass(frozen=True, slots=True)
class Finish:
    """End the loop with this finish type; ``reason`` overrides the words the record derives."""

    type: FinishType
    reason: str | None = None
    agent_only: bool = False
    """The failure is this agent's alone (a spent quota, a deterministic error): a fallback
    agent, when one is set, goes on instead."""


@dataclass(frozen=True, slots=True)
class Skip:
    """``next_iteration`` asked to skip this iteration (the agent does not run)."""


@dataclass(frozen=True, slots=True)
class RunGate:
    """The iteration completes if the gate passes: run it, then decide again with its result."""


Action = ContinueLoop | Finish | WaitFor | RunGate


@dataclass(frozen=True, slots=True, kw_only=True)
class _Moment:
    """Where the loop stands: its settings, the counted iterations, the time, a stop."""

    limits: Limits
    counted: int = 0
    """Iterations done that count toward ``max_iterations`` (before the one being decided)."""
    elapsed: float = 0.0
    stopped: bool = False
    """Ctrl+C / SIGTERM (before or during the iteration)."""
    now: datetime | None = None
    """Wall-clock now (UTC); needed for waits."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Between(_Moment):
    """What the loop knows between iterations (the input of :func:`before_iteration`)."""

    stop_requested: bool = False
    """``forgeflare stop`` left its request."""
    spent: float | None = None
    trust_error: str | None = None
    """Why the trust re-check failed (a hook or command changed since the start), if it did."""


def before_iteration(facts: Between) -> Finish | None:
    """Before an iteration: finish (first rule wins, in this order) or go on.

    A usage window (this loop's or another's, from the machine's window store) is the agent
    choice's to wait out or fall back from, after these checks.
    """
    limits = facts.limits
    if facts.stopped:
        return Finish(FinishType.MANUAL)
    if facts.stop_requested:
        return Finish(FinishType.STOPPED, "stopped by `forgeflare stop` after the iteration")
    limit = check_limits(iterations_done=facts.counted, elapsed=facts.elapsed, limits=limits)
    if limit is not None:
        return Finish(limit)
    if budget_exhausted(facts.spent, limits.max_cost or None):
        spent = facts.spent or 0.0
        return Finish(
            FinishType.BUDGET,
            f"stopped: the budget of ${limits.max_cost:g} is spent (${spent:.2f})",
        )
    if facts.trust_error is not None:
        return Finish(FinishType.HOOK_ABORT, f"stopped: {facts.trust_error}")
    return None


def hook_verdict(status: str, *, stopped: bool, skippable: bool) -> Finish | Skip | None:
    """What a lifecycle hook's status (``HookStatus`` value) means for the loop.

    A stop during the hook wins; ``abort`` ends the loop ``hook_abort``; ``warning`` (exit 1)
    skips the iteration when the hook is ``next_iteration`` (``skippable``).
    """
    if stopped:
        return Finish(FinishType.MANUAL)
    if status == "abort":
        return Finish(FinishType.HOOK_ABORT)
    if status == "warning" and skippable:
        return Skip()
    return None


@dataclass(frozen=True, slots=True, kw_only=True)
class IterationFacts(_Moment):
    """Everything :func:`decide` needs after one iteration (skipped or not)."""

    outcome: IterationOutcome
    streaks: Streaks = field(default_factory=Streaks)
    waits: WaitStreaks = field(default_factory=WaitStreaks)
    gate_passed: bool | None = None
    """The evidence's result (gate, then reviewer) once :class:`RunGate` had it checked;
    ``None`` before."""
    no_progress: int = 0
    """Iterations in a row without progress, this one included (``_evidence``)."""
    stall_why: str = ""
    """What repeats, in words, when the last iteration made no progress."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """What to do after an iteration, with the streaks to carry to the next one."""

    action: Action
    streaks: Streaks
    waits: WaitStreaks
    counted: bool = True
    """The iteration counts toward ``max_iterations`` (a wait does not)."""
    pause: float = 0.0
    """Seconds to pause before the next iteration (after an error iteration)."""
    notify: str | None = None
    """A notification event this verdict raises (``error_streak``)."""

    @property
    def label(self) -> str:
        """The iteration row's ``decision``: ``continue``, a wait kind or a finish type."""
        action = self.action
        if isinstance(action, Finish):
            return action.type.value
        if isinstance(action, WaitFor):
            return action.kind
        if isinstance(action, RunGate):
            return FinishType.COMPLETE.value
        return "continue"


def _deadline(facts: IterationFacts, now: datetime) -> datetime | None:
    if facts.limits.max_runtime <= 0:
        return None
    left = max(0.0, facts.limits.max_runtime - facts.elapsed)
    return now + timedelta(seconds=left)


def _finish_rule(
    facts: IterationFacts, *, completion: bool = True
) -> tuple[Streaks, FinishDecision]:
    """:func:`finish_rule` applied to this iteration's facts."""
    return finish_rule(
        outcome=facts.outcome,
        streaks=facts.streaks,
        iteration=facts.counted + 1,
        elapsed=facts.elapsed,
        limits=facts.limits,
        completion=completion,
    )


def decide(facts: IterationFacts) -> Verdict:
    """After an iteration: finish, wait, run the gate, or go on (with a pause after an error).

    Order is part of the contract: a stop during the iteration, then the usage-window and
    outage waits (a transient failure is not an error), then :func:`finish_rule`, then the gate
    (a failed gate turns ``complete`` into going on), then the error pause.
    """
    outcome = facts.outcome
    if facts.stopped:
        return Verdict(Finish(FinishType.MANUAL), facts.streaks, facts.waits)
    waits = WaitStreaks()
    if not outcome.skipped and outcome.outcome == "quota":
        return Verdict(Finish(FinishType.QUOTA, _QUOTA_ADVICE, True), facts.streaks, waits)
    if not outcome.skipped and outcome.deterministic:
        why = f"error: the agent failed in a way retrying cannot fix: {outcome.deterministic}"
        return Verdict(Finish(FinishType.ERROR, why, True), facts.streaks, waits)
    if not outcome.skipped and outcome.outcome in ("rate_limited", "api_error"):
        now = facts.now
        assert now is not None, "decide needs `now` for a rate_limited / api_error iteration"
        waits, wait = after_iteration(
            outcome=outcome.outcome,
            transient=outcome.transient,
            resets_at=outcome.resets_at,
            now=now,
            streaks=facts.waits,
            settings=facts.limits.waits,
            deadline=_deadline(facts, now),
        )
        if isinstance(wait, WaitFor):
            return Verdict(wait, facts.streaks, waits, counted=False)
        if isinstance(wait, FinishNow):
            return Verdict(
                Finish(FinishType.ERROR, f"stopped: {wait.reason}"), facts.streaks, waits
            )
    streaks, decision = _finish_rule(facts)
    if decision == FinishType.COMPLETE and facts.limits.gate:
        if facts.gate_passed is None:
            return Verdict(RunGate(), streaks, waits)
        if not facts.gate_passed:
            # Not complete after all: every other rule still applies (a next_iteration hook
            # that skips every iteration meets max_skips, the limits still end the loop).
            streaks, decision = _finish_rule(facts, completion=False)
    if decision is FinishType.BLOCKED:
        asked = (outcome.question or "").strip().splitlines() or ["?"]
        return Verdict(
            Finish(decision, f"blocked: the agent asks: {asked[0]}"),
            streaks,
            waits,
            notify="blocked",
        )
    stall = facts.limits.stall_after
    if isinstance(decision, ContinueLoop) and stall and facts.no_progress >= stall:
        reason = f"stalled: {facts.no_progress} iterations in a row made no progress"
        if facts.stall_why:
            reason += f" ({facts.stall_why})"
        return Verdict(Finish(FinishType.STALLED, reason), streaks, waits)
    if isinstance(decision, FinishType):
        notify = "error_streak" if decision is FinishType.ERROR else None
        return Verdict(Finish(decision), streaks, waits, notify=notify)
    return Verdict(
        ContinueLoop(), streaks, waits, pause=error_pause(outcome, facts.limits.error_pause)
    )
