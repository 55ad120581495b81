"""What tokens cost: list prices from the maintained table, cache reads and writes apart, and
no price (never a guess) for a model the table does not know."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forgeflare import _pricing
from forgeflare._pricing import KINDS, Kept, kept_rates, price_usd, rates_price

if TYPE_CHECKING:
    from genai_prices import Usage
    from genai_prices.types import ModelInfo, Provider

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


# The rates a process keeps (``prices.json`` in the user's cache folder) so that the next one
# prices without loading the table: the same answers as the table, and the table again
# whenever the kept file cannot be trusted to give them.


def _table_models() -> list[tuple[Provider, ModelInfo]]:
    from genai_prices import data_snapshot

    return [
        (provider, model)
        for provider in data_snapshot.get_snapshot().providers
        if provider.id in ("anthropic", "openai")
        for model in provider.models
    ]


def _usage(counts: dict[str, int]) -> Usage:
    from genai_prices import Usage

    cached = counts["cache_read"] + counts["cache_write"]
    return Usage(
        input_tokens=counts["input"] + cached,
        output_tokens=counts["output"],
        cache_read_tokens=counts["cache_read"],
        cache_write_tokens=counts["cache_write"],
    )


def _kept_for(provider: str, model: str) -> Kept | None:
    from genai_prices import Usage, calc_price

    found = calc_price(
        Usage(input_tokens=0, output_tokens=0), model_ref=model, provider_id=provider
    )
    return kept_rates(found.model, found.model_price, datetime.now(UTC).date())


_COUNT = st.one_of(st.integers(0, 2_000), st.integers(150_000, 300_000), st.integers(0, 50_000_000))


@given(
    st.sampled_from(_table_models()),
    st.fixed_dictionaries({kind: _COUNT for kind in KINDS}),
)
def test_kept_rates_price_as_the_table_does(
    provider_model: tuple[Provider, ModelInfo], counts: dict[str, int]
) -> None:
    provider, model = provider_model
    now = datetime.now(UTC)
    kept = kept_rates(model, model.get_prices(now), now.date())
    if kept is not None:
        table = model.calc_price(_usage(counts), provider, genai_request_timestamp=now)
        assert rates_price(kept.rates, counts) == table.total_price


def test_the_models_forgeflare_runs_have_rates_kept() -> None:
    # The default model and the Claude models of the mock and the docs: their start is the one
    # this cache is for.
    for model in ("claude-opus-4-6", "claude-sonnet-4-5", "claude-sonnet-4-6", "claude-haiku-4-5"):
        assert _kept_for("anthropic", model) is not None, model


def test_a_price_that_starts_later_is_kept_until_that_day() -> None:
    from genai_prices import Usage, calc_price

    found = calc_price(
        Usage(input_tokens=0, output_tokens=0), model_ref="claude-opus-4-6", provider_id="anthropic"
    )
    starts = [c.constraint.start_date for c in found.model.prices if c.constraint is not None]
    assert starts, "a model whose price changed on a date"
    before = min(starts) - timedelta(days=3)
    kept = kept_rates(found.model, found.model_price, before)
    assert kept is not None
    assert kept.until == min(starts)
    assert kept_rates(found.model, found.model_price, max(starts)).until is None


PRICE_TWICE = """
import json, sys
from forgeflare._pricing import price_usd
prices = [price_usd(m, {"input": 250_000, "output": 7, "cache_read": 3, "cache_write": 11})
          for m in ("claude-sonnet-4-5", "claude-opus-4-6", "no-such-model-x")]
print(json.dumps({"prices": prices, "loaded": "genai_prices" in sys.modules}))
"""


def _price_in_a_process(cache: Path) -> dict[str, Any]:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    done = subprocess.run(
        [sys.executable, "-c", PRICE_TWICE], env=env, capture_output=True, text=True, check=True
    )
    assert not done.stderr, done.stderr
    return dict(json.loads(done.stdout))


def test_the_next_process_prices_from_the_kept_rates(tmp_path: Path) -> None:
    first = _price_in_a_process(tmp_path)
    assert first["loaded"]
    assert (tmp_path / "forgeflare" / "prices.json").is_file()
    second = _price_in_a_process(tmp_path)
    assert second == {"prices": first["prices"], "loaded": False}
    assert first["prices"][2] is None
    assert first["prices"][0] == price_usd(
        "claude-sonnet-4-5", {"input": 250_000, "output": 7, "cache_read": 3, "cache_write": 11}
    )


@pytest.fixture
def fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache folder of its own and nothing kept in this process."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(_pricing, "_kept", {})
    monkeypatch.setattr(_pricing, "_asked", set())
    return tmp_path / "forgeflare" / "prices.json"


def _kept_file(path: Path, model: str, entry: object, table: str | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    key = table if table is not None else _pricing._table_key()
    path.write_text(json.dumps({"table": key, "models": {f"anthropic/{model}": entry}}))


_HALF_PRICE = {kind: ["0.0001", []] for kind in KINDS} | {"until": None}
"""Rates no table has: a price from them shows the kept file was used."""


@pytest.mark.parametrize(
    "entry",
    [
        "garbage",
        {"input": ["3", []]},
        _HALF_PRICE | {"input": ["-3", []]},
        _HALF_PRICE | {"input": ["NaN", []]},
        _HALF_PRICE | {"input": ["9e999999", []]},
        _HALF_PRICE | {"input": ["1", [[200_000, "2"], [100_000, "1"]]]},
        _HALF_PRICE | {"until": "not a date"},
        _HALF_PRICE | {"until": "2000-01-01"},  # a price that has changed since
    ],
    ids=[
        "not-rates",
        "kinds-missing",
        "negative",
        "nan",
        "absurd",
        "tiers-unsorted",
        "bad-date",
        "expired",
    ],
)
def test_a_damaged_or_stale_entry_is_priced_by_the_table(fresh: Path, entry: object) -> None:
    tokens = {"input": 1_000, "output": 1_000}
    _kept_file(fresh, SONNET, entry)
    assert price_usd(SONNET, tokens) == pytest.approx(0.018)


def test_rates_kept_for_another_table_are_not_used(fresh: Path) -> None:
    _kept_file(fresh, SONNET, _HALF_PRICE, table="/elsewhere/data.py|1|2")
    assert price_usd(SONNET, {"input": 1_000}) == pytest.approx(0.003)
    assert json.loads(fresh.read_text())["table"] == _pricing._table_key()  # and replaced


def test_kept_rates_are_used(fresh: Path) -> None:
    _kept_file(fresh, SONNET, _HALF_PRICE)
    assert price_usd(SONNET, {"input": 1_000_000}) == pytest.approx(0.0001)


def test_a_cache_folder_that_cannot_be_written_still_prices(
    fresh: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", "/proc/no-such-folder")
    assert price_usd(SONNET, {"input": 100_000}) == pytest.approx(0.3)
    assert price_usd("no-such-model-x", {"input": 1}) is None


@pytest.mark.parametrize("xdg", ["", "  ", "/somewhere/cache"])
def test_the_cache_folder_is_platformdirs_own(xdg: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import platformdirs

    monkeypatch.setenv("XDG_CACHE_HOME", xdg)
    expected = Path(platformdirs.user_cache_dir("forgeflare"), "prices.json")
    assert _pricing._cache_path() == expected
