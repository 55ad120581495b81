"""Usage windows, outages and the budget: table and property tests of the pure waits."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from forgeflare.supervisor.evidence._waits import (
    Action,
    Decide,
    FinishNow,
    WaitFor,
    WaitSettings,
    WaitStreaks,
    after_iteration,
    budget_exhausted,
    limit_backoff,
    outage_backoff,
)

NOW = datetime(2026, 11, 24, 2, 8, tzinfo=UTC)


def test_backoff_tables() -> None:
    assert [limit_backoff(n) for n in (1, 2, 3, 6, 20)] == [60, 120, 240, 1800, 1800]
    assert [outage_backoff(n) for n in (1, 2, 3, 5, 20)] == [30, 60, 120, 480, 900]


def _after_a_limit(
    resets_at: datetime | None, streaks: WaitStreaks | None = None, **more: Any
) -> tuple[WaitStreaks, Action]:
    """The waits after an iteration that hit a usage limit at ``NOW`` (reset at ``resets_at``)."""
    return after_iteration(
        outcome="rate_limited",
        transient=False,
        resets_at=resets_at,
        now=NOW,
        streaks=streaks or WaitStreaks(),
        **more,
    )


def test_limit_with_a_reset_time_waits_until_it() -> None:
    streaks, action = _after_a_limit(NOW + timedelta(minutes=64), settings=WaitSettings(jitter=5))
    assert action == WaitFor("limit_wait", 64 * 60 + 5, NOW + timedelta(seconds=64 * 60 + 5))
    assert streaks.limits == 1


def test_limit_without_reset_backs_off_and_respects_the_deadline() -> None:
    _, first = _after_a_limit(None)
    assert isinstance(first, WaitFor)
    assert first.seconds == 60
    # A reset in the past is no reset time.
    _, third = _after_a_limit(NOW - timedelta(seconds=1), WaitStreaks(limits=2))
    assert isinstance(third, WaitFor)
    assert third.seconds == 240
    _, clipped = _after_a_limit(NOW + timedelta(hours=3), deadline=NOW + timedelta(minutes=10))
    assert isinstance(clipped, WaitFor)
    assert clipped.seconds == 600
    assert clipped.until >= NOW + timedelta(hours=3)  # the window's true reset, not clipped


def test_outage_backs_off_until_max_outage() -> None:
    settings = WaitSettings(max_outage=3600)
    streaks = WaitStreaks()
    waits = []
    now = NOW
    action: object = None
    for _ in range(20):
        streaks, action = after_iteration(
            outcome="api_error",
            transient=True,
            resets_at=None,
            now=now,
            streaks=streaks,
            settings=settings,
        )
        if not isinstance(action, WaitFor):
            break
        waits.append(action.seconds)
        now = action.until
    assert waits[:4] == [30, 60, 120, 240]
    assert isinstance(action, FinishNow)
    assert action.finish == "error"
    assert "max_outage" in action.reason
    assert sum(waits) >= 3600


def test_other_outcomes_reset_the_streaks() -> None:
    busy = WaitStreaks(limits=3, outages=2, outage_since=NOW)
    for outcome, transient in (("ok", False), ("api_error", False), ("agent_error", False)):
        streaks, action = after_iteration(
            outcome=outcome, transient=transient, resets_at=None, now=NOW, streaks=busy
        )
        assert (streaks, action) == (WaitStreaks(), Decide())


def test_budget() -> None:
    assert budget_exhausted(5.0, 5.0)
    assert not budget_exhausted(4.99, 5.0)
    assert not budget_exhausted(100.0, None)
    assert not budget_exhausted(100.0, 0)
    assert not budget_exhausted(None, 5.0)


@given(st.integers(0, 50), st.integers(0, 10**6))
def test_waits_are_bounded_and_never_past_the_deadline(n: int, seconds_left: int) -> None:
    deadline = NOW + timedelta(seconds=seconds_left)
    for outcome, transient in (("rate_limited", False), ("api_error", True)):
        _, action = after_iteration(
            outcome=outcome,
            transient=transient,
            resets_at=None,
            now=NOW,
            streaks=WaitStreaks(limits=n, outages=n, outage_since=NOW),
            deadline=deadline,
        )
        assert isinstance(action, WaitFor)
        assert 0 <= action.seconds <= min(1800, seconds_left)
        assert NOW + timedelta(seconds=action.seconds) <= deadline
        assert action.until >= NOW + timedelta(seconds=action.seconds)
