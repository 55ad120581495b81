"""The fleet record's pure decisions."""

from __future__ import annotations

import pytest

from forgeflare.fleet._state import ended_without_finish


@pytest.mark.parametrize(
    ("exit_code", "budget_hit", "status"),
    [
        (-15, True, "stopped"),  # the budget's TERM reached a loop still starting
        (-9, True, "stopped"),  # and the KILL after the grace
        (-15, False, "failed"),  # a TERM from elsewhere
        (-11, True, "failed"),  # a crash is a crash, budget or not
        (1, True, "failed"),
        (2, False, "failed"),
        (0, False, "failed"),  # exit 0 without a finish in the record
    ],
)
def test_a_loop_without_a_finish(exit_code: int, budget_hit: bool, status: str) -> None:
    got, reason = ended_without_finish(exit_code, budget_hit=budget_hit)
    assert got == status
    assert f"exit {exit_code}" in reason or f"exited {exit_code}" in reason
    assert ("budget" in reason) == (status == "stopped")
