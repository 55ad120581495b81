"""What an API failure an agent CLI reports means for the loop: the failure and reset tables."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from forgeflare.supervisor.backends._apierror import classify_api_error, window_reset

NOW = datetime(2026, 11, 28, 22, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("status", "message", "outcome", "transient", "deterministic"),
    [
        (401, "invalid x-api-key", "agent_error", False, True),
        (None, "401 authentication_error", "agent_error", False, True),
        (403, "permission_error", "agent_error", False, True),
        (400, "prompt is too long", "agent_error", False, True),
        (429, "Claude AI usage limit reached|1795911614", "rate_limited", False, False),
        (429, "Too Many Requests", "api_error", True, False),
        (529, "Overloaded", "api_error", True, False),
        (None, "Connection error.", "api_error", True, False),
        (None, "The model is at capacity", "api_error", True, False),  # Codex's words, any agent's
        (400, "Your credit balance is too low", "quota", False, False),
        (None, "something odd", "agent_error", False, False),
    ],
)
def test_api_failure_table(
    status: int | None, message: str, outcome: str, transient: bool, deterministic: bool
) -> None:
    failure = classify_api_error(status, message)
    assert (failure.outcome, failure.transient, failure.deterministic) == (
        outcome,
        transient,
        deterministic,
    )


@pytest.mark.parametrize(
    ("at", "expected"),
    [
        (datetime(2026, 11, 29, 0, 27, tzinfo=UTC), "2026-11-29T00:27:00Z"),
        (datetime(2026, 11, 28, 21, 0, tzinfo=UTC), None),  # past
        (datetime(2027, 6, 1, tzinfo=UTC), None),  # over 31 days ahead: damage
        (None, None),
    ],
)
def test_window_reset_table(at: datetime | None, expected: str | None) -> None:
    assert window_reset(at, NOW) == expected
