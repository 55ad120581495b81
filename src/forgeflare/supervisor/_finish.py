"""The finish decision: a pure function of one iteration's outcome and the loop's streaks.

Nothing here does I/O. The loop gathers an :class:`IterationOutcome` (agent exit, the
``final`` reason *this* iteration wrote, plan and git state) and asks :func:`decide` whether to
go on. Finish types (``FRESHER_FINISH_TYPE``) and the supervisor's exit status for each:

==================  ====  ======================================================================
finish type         exit  when
==================  ====  ======================================================================
``complete``           0  ``final.reason`` is ``convergence_signal``, or (building mode) the plan
                          has no unchecked ``- [ ]`` box left; wins over every limit
``manual``           130  Ctrl+C / SIGTERM
``max_iterations``    10  the configured number of iterations ran (0 = unlimited)
``no_changes``        11  smart termination: no new commit and no work-tree change in a git repo
``error``             12  ``max_consecutive_errors`` error iterations in a row (agent crashed,
                          was killed, timed out, or ``final.reason`` is ``api_error``)
``hook_abort``        13  ``started`` or ``next_iteration`` exited 2 (or failed, with
                          ``fail_behavior = "abort"``)
``timeout``           14  the loop's wall-clock limit (``max_runtime``) was reached
``stuck``             15  ``stuck_after`` iterations in a row ended with ``block_limit_*``
``skips``             16  ``next_iteration`` skipped ``max_skips`` iterations in a row
``budget``            17  ``max_cost`` is spent (before an iteration, or the agent ended on it)
``stopped``           18  ``forgeflare stop`` asked the loop to finish after its iteration
==================  ====  ======================================================================

Usage-window and outage waits are not decided here (see ``_waits``): a ``rate_limited`` or
transient ``api_error`` iteration is recorded but neither counts nor reaches :func:`decide`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Literal

__all__ = [
    "FINISH_EXIT_CODES",
    "Continue",
    "Decision",
    "FinishType",
    "IterationOutcome",
    "Limits",
    "Streaks",
    "check_limits",
    "count_unchecked",
    "decide",
    "error_pause",
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
}


@dataclass(frozen=True, slots=True)
class Continue:
    """Go on with the next iteration."""


Decision = Continue | FinishType

_BLOCK_REASONS = frozenset({"block_limit_consecutive", "block_limit_total"})
_ERROR_OUTCOMES = frozenset({"agent_error", "api_error", "killed", "timed_out", "refused"})


@dataclass(frozen=True, slots=True)
class IterationOutcome:
    """What one iteration did, as the loop observed it.

    ``final_reason`` is the ``final.reason`` written *by this iteration* (``None`` when it wrote
    none, or only a stale file from an earlier iteration was there: the caller checks that).
    ``exit_code`` is ``None`` when the agent died by a signal or was killed on a timeout.
    ``plan_unchecked`` is ``None`` when there is no plan file; ``git_changed`` is ``None``
    outside a git repository.
    """

    mode: Literal["planning", "building"] = "building"
    skipped: bool = False
    exit_code: int | None = 0
    timed_out: bool = False
    final_reason: str | None = None
    final_expected: bool = False
    plan_unchecked: int | None = None
    git_changed: bool | None = None
    outcome: str | None = None
    """The iteration report's outcome (``ok``, ``agent_error`` …) when a backend gave one."""
    signal_complete: bool = False
    """The final message carried the completion tag (Claude Code, Codex loops)."""
    runtime_hit: bool = False
    """The loop's wall-clock limit (not the iteration timeout) ended the agent."""


@dataclass(frozen=True, slots=True)
class Limits:
    """The decision's settings. 0 means unlimited for ``max_iterations`` / ``max_runtime``."""

    max_iterations: int = 0
    max_runtime: float = 0.0
    smart_termination: bool = True
    max_consecutive_errors: int = 3
    stuck_after: int = 3
    max_skips: int = 3


@dataclass(frozen=True, slots=True)
class Streaks:
    """Counts of like iterations in a row, carried from one decision to the next."""

    errors: int = 0
    blocked: int = 0
    skips: int = 0


def is_error(outcome: IterationOutcome) -> bool:
    """An error iteration: the agent crashed, was killed, timed out, or hit an API error.

    Without a ``final`` of its own, a non-zero exit is a crash; so is a zero exit when the agent
    is one that always writes ``final`` (``final_expected``, e.g. ``forgeflare run``).
    Agents that write no file (Claude Code) are judged by their exit status alone.
    """
    if outcome.skipped:
        return False
    if outcome.outcome is not None:
        return outcome.outcome in _ERROR_OUTCOMES
    if outcome.timed_out or outcome.exit_code is None:
        return True
    if outcome.final_reason is None:
        return outcome.exit_code != 0 or outcome.final_expected
    return outcome.final_reason == "api_error"


_UNCHECKED_RE = re.compile(r"^[ \t]*[-*+][ \t]+\[ \]", re.MULTILINE)


def count_unchecked(plan_text: str) -> int:
    """Unchecked Markdown task boxes (``- [ ] ...``, also ``*`` / ``+`` bullets) in a plan."""
    return len(_UNCHECKED_RE.findall(plan_text))


def _plan_done(outcome: IterationOutcome) -> bool:
    return outcome.mode == "building" and outcome.plan_unchecked == 0


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


def decide(
    *, outcome: IterationOutcome, streaks: Streaks, iteration: int, elapsed: float, limits: Limits
) -> tuple[Streaks, Decision]:
    """After iteration ``iteration`` (1-based): the new streaks and whether to go on.

    Order matters and is part of the contract: completion first (completing on the last
    allowed iteration is ``complete``), then the runtime limit that ended the agent and the
    budget, then the streak limits, then ``no_changes``, then the iteration and runtime limits.
    """
    error = is_error(outcome)
    blocked = not outcome.skipped and outcome.final_reason in _BLOCK_REASONS
    new = Streaks(
        errors=streaks.errors + 1 if error else 0,
        blocked=streaks.blocked + 1 if blocked else 0,
        skips=streaks.skips + 1 if outcome.skipped else 0,
    )
    if outcome.skipped:
        # A skip keeps the error streak: skipping is not evidence that the agent recovered.
        new = replace(new, errors=streaks.errors, blocked=streaks.blocked)
    signalled = outcome.final_reason == "convergence_signal" or outcome.signal_complete
    if (not outcome.skipped and signalled) or _plan_done(outcome):
        return new, FinishType.COMPLETE
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
    return new, Continue()
