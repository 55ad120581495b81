"""Figures in short words: durations, costs and token counts as every terminal line shows them."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forgeflare._units import format_cost, format_duration, format_tokens


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [
        (0, "0s"),
        (42.4, "42s"),
        (59.6, "1m 00s"),
        (185, "3m 05s"),
        (3599, "59m 59s"),
        (3600, "1h 00m"),
        (7440, "2h 04m"),
    ],
)
def test_durations(seconds: float, shown: str) -> None:
    assert format_duration(seconds) == shown


@pytest.mark.parametrize(
    ("cost", "shown"),
    [
        (None, "cost unknown"),
        (0.0, "$0.00"),
        (1.234, "$1.23"),
        (0.5, "$0.50"),
        (0.0042, "$0.0042"),  # cents are too coarse for one small iteration
    ],
)
def test_costs(cost: float | None, shown: str) -> None:
    assert format_cost(cost) == shown


@pytest.mark.parametrize(
    ("n", "millions", "shown"),
    [
        (950, 1, "950"),
        (999, 1, "999"),
        (1000, 1, "1.0k"),
        (12_345, 1, "12.3k"),
        (1_234_567, 1, "1.2M"),
        (1_234_567, 2, "1.23M"),
    ],
)
def test_tokens(n: int, millions: int, shown: str) -> None:
    assert format_tokens(n, millions=millions) == shown


@given(st.floats(min_value=0, max_value=10**7, allow_nan=False))
def test_a_duration_reads_as_its_parts(seconds: float) -> None:
    shown = format_duration(seconds)
    total = round(seconds)
    if shown.endswith("s") and "m" not in shown:
        assert int(shown[:-1]) == total < 60
    elif shown.endswith("s"):
        minutes, secs = shown[:-1].split("m ")
        assert int(minutes) * 60 + int(secs) == total
    else:
        hours, minutes = shown[:-1].split("h ")
        assert int(hours) * 3600 + int(minutes) * 60 == total - total % 60
