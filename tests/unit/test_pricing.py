"""What tokens cost: list prices from the maintained table, cache reads and writes apart, and
no price (never a guess) for a model the table does not know."""

from __future__ import annotations

import pytest

from forgeflare._pricing import price_usd

SONNET = "claude-sonnet-4-5"


@pytest.mark.parametrize(
    ("tokens", "usd"),
    [
        ({"input": 100_000}, 0.3),
        ({"output": 100_000}, 1.5),
        ({"cache_read": 100_000}, 0.03),  # a tenth of fresh input
        ({"cache_write": 100_000}, 0.375),  # a quarter more than fresh input
        ({"input": 100_000, "output": 100_000}, 1.8),
        ({}, 0.0),
    ],
    ids=["input", "output", "cache-read", "cache-write", "both", "nothing"],
)
def test_list_prices_by_kind_of_token(tokens: dict[str, int], usd: float) -> None:
    assert price_usd(SONNET, tokens) == pytest.approx(usd)


@pytest.mark.parametrize("model", [None, "", "no-such-model-x"])
def test_an_unknown_model_has_no_price(model: str | None) -> None:
    assert price_usd(model, {"input": 5, "output": 5}) is None
