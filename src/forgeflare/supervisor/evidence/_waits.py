"""Surviving the night: usage-window waits, outage back-off and the budget (pure).

A limit is not an error and spent budget is not completion. After an iteration the decision
(``_finish.decide``) asks :func:`after_iteration` what its outcome means before the finish rule:

- ``rate_limited``: wait until the window resets (plus a little jitter) when the reset time is
  known, else back off 1 min, 2, 4 … at most 30 min. The iteration counts neither as an error
  nor toward ``max_iterations``.
- a transient ``api_error`` (529, 5xx, connection): an outage. Back off 30 s, 1 min, 2 min … at
  most 15 min, until the outage has lasted ``max_outage``; then the loop finishes ``error``.
- anything else ends an outage or a limit streak and goes on to the finish decision.

:func:`budget_exhausted` is checked before each iteration (``_finish.before_iteration``).
Waits are wall-clock (``datetime``), so a laptop suspend does not stretch them, and they never
run past ``max_runtime``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Literal

from forgeflare.supervisor.config._config import LimitsSection

__all__ = [
    "Decide",
    "FinishNow",
    "WaitFor",
    "WaitSettings",
    "WaitStreaks",
    "after_iteration",
    "budget_exhausted",
    "limit_backoff",
    "outage_backoff",
]


@dataclass(frozen=True, slots=True)
class WaitSettings:
    """The settings of the waits (all seconds); ``max_outage`` takes its default from the
    config's ``[limits] max_outage``."""

    max_outage: float = LimitsSection.model_construct().max_outage
    """How long an outage is waited out before the loop finishes ``error``."""
    jitter: float = 0.0
    """Added to a known reset time (the caller draws it, so this stays pure)."""
    limit_start: float = 60.0
    """The first back-off after a usage limit with no known reset (doubled each time)."""
    limit_cap: float = 1800.0
    """The longest back-off after a usage limit."""
    outage_start: float = 30.0
    """The first back-off in an outage (doubled each time)."""
    outage_cap: float = 900.0
    """The longest back-off in an outage."""


@dataclass(frozen=True, slots=True)
class WaitStreaks:
    """Carried between iterations: limit hits in a row, and when the current outage began."""

    limits: int = 0
    outages: int = 0
    outage_since: datetime | None = None


@dataclass(frozen=True, slots=True)
class WaitFor:
    """Wait this long before the next iteration (not an iteration, not an error)."""

    kind: Literal["limit_wait", "outage"]
    seconds: float
    until: datetime
    """When the window opens (a usage limit's true reset, even past ``max_runtime``)."""


@dataclass(frozen=True, slots=True)
class FinishNow:
    """End the loop: the outage lasted longer than ``max_outage``."""

    finish: Literal["error"]
    reason: str


@dataclass(frozen=True, slots=True)
class Decide:
    """No wait: the ordinary finish decision applies to this iteration."""


Action = WaitFor | FinishNow | Decide


def limit_backoff(n: int, settings: WaitSettings = WaitSettings()) -> float:
    """The n-th (1-based) wait for a limit without a reset time: 60 s, 120 s, … ≤ 30 min."""
    return min(settings.limit_start * 2.0 ** min(max(0, n - 1), 30), settings.limit_cap)


def outage_backoff(n: int, settings: WaitSettings = WaitSettings()) -> float:
    """The n-th (1-based) wait in an outage: 30 s, 60 s, 120 s, … ≤ 15 min."""
    return min(settings.outage_start * 2.0 ** min(max(0, n - 1), 30), settings.outage_cap)


def _clip(seconds: float, now: datetime, deadline: datetime | None) -> float:
    if deadline is None:
        return seconds
    return max(0.0, min(seconds, (deadline - now).total_seconds()))


def after_iteration(
    *,
    outcome: str,
    transient: bool,
    resets_at: datetime | None,
    now: datetime,
    streaks: WaitStreaks,
    settings: WaitSettings = WaitSettings(),
    deadline: datetime | None = None,
) -> tuple[WaitStreaks, Action]:
    """What an iteration's outcome means for waiting; ``deadline`` is the ``max_runtime`` end."""
    if outcome == "rate_limited":
        limits = streaks.limits + 1
        if resets_at is not None and resets_at > now:
            seconds = (resets_at - now).total_seconds() + settings.jitter
        else:
            seconds = limit_backoff(limits, settings)
        # `until` is the window's true reset (stored, compared with fallback_after); only the
        # wait itself stops at max_runtime.
        until = now + timedelta(seconds=seconds)
        new = replace(streaks, limits=limits)
        return new, WaitFor("limit_wait", _clip(seconds, now, deadline), until)
    if outcome == "api_error" and transient:
        since = streaks.outage_since or now
        outages = streaks.outages + 1
        new = WaitStreaks(limits=0, outages=outages, outage_since=since)
        lasted = (now - since).total_seconds()
        if lasted >= settings.max_outage:
            minutes = round(lasted / 60)
            return new, FinishNow(
                "error", f"the API failed for {minutes} min ({outages} iterations), max_outage"
            )
        seconds = _clip(outage_backoff(outages, settings), now, deadline)
        return new, WaitFor("outage", seconds, now + timedelta(seconds=seconds))
    return WaitStreaks(), Decide()


def budget_exhausted(spent: float | None, max_cost: float | None) -> bool:
    """Is the budget spent? No budget (``None`` or 0 = none) never is; unknown spend never is."""
    return bool(max_cost) and spent is not None and max_cost is not None and spent >= max_cost
