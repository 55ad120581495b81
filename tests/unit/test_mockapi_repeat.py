"""``repeat_for_ms``: a response repeats for a wall-clock while, then the script moves on."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forgeflare.mockapi import MockScriptError, RepeatWindows, parse_script

OVERLOADED = {"error": {"status": 529}}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def serve(windows: RepeatWindows, script_data: dict[str, object], times: list[float]) -> list[int]:
    """The response index each request at ``times`` (seconds) gets, as the server counts."""
    script = parse_script(script_data)
    clock = windows._clock
    assert isinstance(clock, Clock)
    used, served = 0, []
    for t in times:
        clock.now = t
        used = windows.position(script, used)
        index = min(used, len(script.responses))
        served.append(index)
        if not windows.holds(script, index):
            used += 1
    return served


@pytest.mark.parametrize(
    ("responses", "times", "expected"),
    [
        # no repeat: one request, one response
        ([{}, {}], [0, 0, 0], [0, 1, 2]),
        # 500 ms window from the first request at t=1: 1.0, 1.2, 1.499 repeat; 1.5 moves on
        ([{**OVERLOADED, "repeat_for_ms": 500}, {}], [1, 1.2, 1.499, 1.5, 1.6], [0, 0, 0, 1, 2]),
        # the window opens at the first request it answers, not when the server started
        ([{}, {**OVERLOADED, "repeat_for_ms": 500}, {}], [0, 10, 10.4, 10.6], [0, 1, 1, 2]),
        # 0 ms: answered once, like a plain response
        ([{**OVERLOADED, "repeat_for_ms": 0}, {}], [5, 5, 5], [0, 1, 2]),
        # two windows in a row
        (
            [{**OVERLOADED, "repeat_for_ms": 100}, {"repeat_for_ms": 100}, {}],
            [0, 0.05, 0.1, 0.15, 0.2, 0.3],
            [0, 0, 1, 1, 2, 3],
        ),
        # the last response repeats, then the script is exhausted
        ([{"repeat_for_ms": 100}], [0, 0.09, 0.1], [0, 0, 1]),
    ],
)
def test_repeat_windows(
    responses: list[dict[str, object]], times: list[float], expected: list[int]
) -> None:
    assert serve(RepeatWindows(Clock()), {"responses": responses}, times) == expected


@given(
    window=st.integers(min_value=0, max_value=5000),
    gaps=st.lists(st.integers(min_value=0, max_value=2000), min_size=1, max_size=30),
)
def test_a_window_repeats_exactly_while_it_lasts(window: int, gaps: list[int]) -> None:
    times: list[float] = []
    t = 0
    for gap in gaps:
        t += gap
        times.append(t / 1000)
    got = serve(RepeatWindows(Clock()), {"responses": [{"repeat_for_ms": window}, {}]}, times)
    # The window opens at the first request; the same arithmetic as the server's, in floats.
    first_after = next(
        (i for i, at in enumerate(times) if i and (at - times[0]) * 1000 >= window), len(times)
    )
    assert got[:first_after] == [0] * first_after
    # then response 1 once, then the exhausted script (index 2) for the rest
    assert got[first_after:] == [min(k, 2) for k in range(1, len(times) - first_after + 1)]


def test_repeat_for_ms_is_validated() -> None:
    with pytest.raises(MockScriptError, match=r"responses\[0\]\.repeat_for_ms"):
        parse_script({"responses": [{"repeat_for_ms": -1}]})
    script = parse_script({"responses": [{**OVERLOADED, "repeat_for_ms": 600_000}]})
    assert script.responses[0].repeat_for_ms == 600_000
