"""StopControl: Ctrl+C requests, and the view the ``finished`` hook gets."""

from __future__ import annotations

import pytest

from forgeflare.supervisor.agents import StopControl


@pytest.mark.parametrize(
    ("before", "after", "view_stop", "view_kill"),
    [
        (0, 0, False, False),
        (1, 0, False, False),  # one Ctrl+C during the iteration: finished still runs
        (2, 0, False, False),  # two: the agent was killed at once, finished still runs
        (2, 1, True, True),  # a Ctrl+C while finished runs ends it at once
        (1, 2, True, True),
        (0, 1, True, True),
    ],
)
def test_the_escalated_view_sees_only_later_requests(
    before: int, after: int, view_stop: bool, view_kill: bool
) -> None:
    stop = StopControl()
    for _ in range(before):
        stop.request("SIGINT")
    view = stop.escalated()
    for _ in range(after):
        stop.request("SIGINT")
    assert (view.stop.is_set(), view.kill.is_set()) == (view_stop, view_kill)
    assert stop.stop.is_set() is (before + after >= 1)
    assert stop.kill.is_set() is (before + after >= 2)
