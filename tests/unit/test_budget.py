"""Budget is a cap: the worst case of a request, priced before it is sent (pure)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forgeflare._budget import (
    TOKENS_PER_BYTE,
    estimate_input_tokens,
    overshoot_line,
    refusal,
    worst_case_usd,
)
from forgeflare.supervisor.backends import BACKENDS

OPUS = "claude-opus-4-6"  # $5 in, $6.25 cache write, $25 out per million


@pytest.mark.parametrize(
    ("size", "ratio", "tokens"),
    [(0, 0.0, 0), (1, 0.0, 1), (10_000, 0.0, 5_000), (10_000, 0.25, 5_000), (10_000, 2.0, 20_000)],
)
def test_the_input_estimate_never_falls_below_its_floor(
    size: int, ratio: float, tokens: int
) -> None:
    assert estimate_input_tokens(size, ratio) == tokens


def test_worst_case_prices_input_at_its_dearest_and_all_of_max_tokens() -> None:
    assert worst_case_usd(OPUS, input_tokens=1_000_000, max_tokens=0) == pytest.approx(6.25)
    assert worst_case_usd(OPUS, input_tokens=0, max_tokens=16_384) == pytest.approx(0.4096)
    plain = worst_case_usd(OPUS, input_tokens=1_000_000, max_tokens=0, cached=False)
    assert plain == pytest.approx(5.0)
    assert worst_case_usd("no-such-model", input_tokens=1, max_tokens=1) is None


@pytest.mark.parametrize(
    ("spent", "worst", "cap", "sent"),
    [
        (0.0, 1.0, 0.0, True),  # no cap
        (0.0, 1.0, None, True),
        (None, 1.0, 3.0, True),  # unknown spend: cannot be enforced (said at start)
        (2.0, None, 3.0, True),  # unknown price
        (2.0, 1.0, 3.0, True),  # exactly fits
        (2.0, 1.01, 3.0, False),
        (0.0, 3.5, 3.0, False),  # not even the first request
    ],
)
def test_refusal_table(
    spent: float | None, worst: float | None, cap: float | None, sent: bool
) -> None:
    why = refusal(spent=spent, worst=worst, cap=cap)
    assert (why is None) is sent
    if why is not None:
        assert why.endswith("budget is left: not sent")


@given(
    cap=st.floats(0.01, 100),
    costs=st.lists(st.floats(0, 10), max_size=30),
    max_tokens=st.integers(1, 64_000),
)
def test_honest_requests_never_pass_the_cap(
    cap: float, costs: list[float], max_tokens: int
) -> None:
    """Requests sent only when their worst case fits, each costing at most its worst case:
    the spend never passes the cap, whatever the sizes."""
    spent = 0.0
    for cost in costs:
        worst = cost + max_tokens * 25e-6
        if refusal(spent=spent, worst=worst, cap=cap) is not None:
            break
        spent += cost  # what it really cost: at most its worst case
        assert spent <= cap + 1e-9


def test_every_backend_has_a_stated_bound() -> None:
    assert BACKENDS["forgeflare"].overshoot.startswith("$0")
    assert "max-budget-usd" in BACKENDS["claude"].overshoot
    assert "report" in BACKENDS["command"].overshoot
    assert all(cls.overshoot for cls in BACKENDS.values())
    assert TOKENS_PER_BYTE == 0.5


def test_the_overshoot_line_names_each_backend_only_when_there_are_several() -> None:
    assert overshoot_line({"a": "one turn"}) == "past the cap: one turn"
    assert overshoot_line({"a": "one turn", "b": "$0"}) == "past the cap: a one turn; b $0"
