"""What tokens cost, from a maintained price table.

Prices come from ``genai-prices`` (pydantic's package of the providers' list prices, shipped as
data, updated with each release and read offline). It knows cache reads and writes, which are
priced apart from fresh input. A model it does not know has no price: ``None``, never a guess.

Loading that package builds its whole table (every provider, 2,000+ models) and its price-update
client: a fifth of the CPU of a ``forgeflare run`` start, paid again by every agent process of a
loop. So the first price of a model also keeps that model's four token rates in the user's cache
folder (``prices.json``, keyed by the installed table's data file), and later processes price it
from there without loading the package. Rates are kept only when they give the package's own
answers on probes around every tier; a price that starts on a later date is kept until that
date; a model priced by the time of day, or whose tokens the four rates do not describe, is
always asked of the package.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from genai_prices.types import ModelInfo, ModelPrice

__all__ = ["KINDS", "Kept", "kept_rates", "price_usd", "rates_price", "token_rates"]

KINDS = ("input", "output", "cache_read", "cache_write")
"""The token kinds forgeflare prices, each with the table's ``<kind>_mtok`` price."""

_PER = Decimal(1_000_000)

Rates = dict[str, tuple[Decimal, tuple[tuple[int, Decimal], ...]]]
"""A model's rate per kind: the base USD per million tokens, and its tiers (a total input
above ``start`` tokens prices every token of that kind at the tier's rate)."""


@dataclass(frozen=True)
class Kept:
    """A model's rates as kept: valid before ``until`` (a UTC date; ``None``: no end)."""

    rates: Rates
    until: date | None = None


def price_usd(
    model: str | None, tokens: Mapping[str, int], provider: str = "anthropic"
) -> float | None:
    """List price in USD of ``tokens`` (``input`` without cache, ``output``, ``cache_read``,
    ``cache_write``) on ``model``; ``None`` when the model is unknown."""
    if not model:
        return None
    counts = {kind: int(tokens.get(kind, 0)) for kind in KINDS}
    key = f"{provider}/{model}"
    if key not in _kept and key not in _asked:
        _kept.update(_read_cache()[1])
    if key in _kept and _kept[key] is None:
        return None
    kept = _kept.get(key)
    if kept is not None and min(counts.values()) >= 0:
        if kept.until is None or datetime.now(UTC).date() < kept.until:
            return float(rates_price(kept.rates, counts))
        del _kept[key]  # its price changed today: ask the package again
    return _library_price(model, provider, counts, key)


_kept: dict[str, Kept | None] = {}
"""The rates this process has read or found, by ``provider/model`` (``None``: unknown)."""
_asked: set[str] = set()
"""The models whose rates are not kept: always priced by the package."""


def rates_price(rates: Rates, counts: Mapping[str, int]) -> Decimal:
    """The price of ``counts`` at ``rates``, as the table computes it (pure)."""
    total_input = counts["input"] + counts["cache_read"] + counts["cache_write"]
    total = Decimal(0)
    for kind in KINDS:
        base, tiers = rates[kind]
        rate = base
        for start, tier_rate in reversed(tiers):
            if total_input > start:
                rate = tier_rate
                break
        total += rate * Decimal(counts[kind]) / _PER
    return total


def token_rates(model_price: ModelPrice) -> Rates | None:
    """The four token rates of one of the table's prices, or ``None`` when a kind has no
    price or one in a form this module does not read (pure)."""
    from genai_prices.types import TieredPrices

    rates: Rates = {}
    for kind in KINDS:
        value = getattr(model_price, f"{kind}_mtok", None)
        if isinstance(value, Decimal):
            rates[kind] = (value, ())
        elif isinstance(value, TieredPrices):
            rates[kind] = (value.base, tuple((int(t.start), t.price) for t in value.tiers))
        else:
            return None
    return rates


def kept_rates(model: ModelInfo, price: ModelPrice, today: date) -> Kept | None:
    """The rates of ``price`` (``model``'s price today) and until when they hold: ``None``
    when the model's price can change by the time of day, or its rates cannot be read
    (pure)."""
    from genai_prices.types import ModelPrice, StartDateConstraint

    rates = token_rates(price)
    if rates is None:
        return None
    if isinstance(model.prices, ModelPrice):
        return Kept(rates)
    starts: list[date] = []
    for conditional in model.prices:
        constraint = conditional.constraint
        if isinstance(constraint, StartDateConstraint):
            starts.append(constraint.start_date)
        elif constraint is not None:
            return None
    later = [start for start in starts if start > today]
    return Kept(rates, min(later) if later else None)


def _library_price(model: str, provider: str, counts: Mapping[str, int], key: str) -> float | None:
    """The package's price; the model's rates are kept (here and in the cache) when they
    give its answers, and an unknown model is kept as unknown."""
    from genai_prices import Usage, calc_price

    def asked(counts: Mapping[str, int]) -> Decimal:
        cache_read, cache_write = counts["cache_read"], counts["cache_write"]
        usage = Usage(
            # genai-prices counts cache tokens inside input_tokens
            input_tokens=counts["input"] + cache_read + cache_write,
            output_tokens=counts["output"],
            cache_read_tokens=cache_read,
            cache_write_tokens=cache_write,
        )
        return calc_price(usage, model_ref=model, provider_id=provider).total_price

    today = datetime.now(UTC).date()
    try:
        found = calc_price(
            Usage(input_tokens=0, output_tokens=0), model_ref=model, provider_id=provider
        )
    except (LookupError, ValueError):
        _keep(key, None)
        return None
    try:
        price = asked(counts)
    except (LookupError, ValueError):
        return None
    if key not in _kept and key not in _asked:
        kept = kept_rates(found.model, found.model_price, today)
        if kept is not None and all(asked(c) == rates_price(kept.rates, c) for c in _probes(kept)):
            _keep(key, kept)
        else:
            _asked.add(key)
    return float(price)


def _probes(kept: Kept) -> list[dict[str, int]]:
    """Token counts that test kept rates against the package: each kind alone and all four
    together, below, at and above every tier's start."""
    starts = sorted({start for _, tiers in kept.rates.values() for start, _ in tiers})
    totals = [1, 999_999, *(s + d for s in starts for d in (-1, 0, 1, 2) if s + d > 0)]
    probes: list[dict[str, int]] = []
    for total in totals:
        for kind in KINDS:
            probes.append({k: total if k == kind else 0 for k in KINDS})
        quarter = max(total // 4, 1)
        probes.append({k: quarter + i for i, k in enumerate(KINDS)})
    return probes


def _keep(key: str, kept: Kept | None) -> None:
    _kept[key] = kept
    table, models = _read_cache()
    if table is not None:
        _write_cache(table, {**models, key: kept})


def _table_key() -> str | None:
    """The installed table's identity (its data file's path, size and time), found without
    importing the package; ``None`` when it cannot be found."""
    from importlib.util import find_spec

    try:
        spec = find_spec("genai_prices")
        folders = spec.submodule_search_locations if spec is not None else None
        data = Path(next(iter(folders or ())), "data.py")
        found = data.stat()
    except (StopIteration, OSError, ValueError, ImportError):
        return None
    return f"{data}|{found.st_size}|{found.st_mtime_ns}"


def _cache_path() -> Path:
    """``$XDG_CACHE_HOME/forgeflare/prices.json`` (``~/.cache/...`` on Linux), where
    ``platformdirs`` puts the user's cache, without loading it at each start on Linux."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    if base.strip():
        return Path(base, "forgeflare", "prices.json")
    if sys.platform.startswith("linux"):
        return Path(os.path.expanduser("~"), ".cache", "forgeflare", "prices.json")
    import platformdirs

    return Path(platformdirs.user_cache_dir("forgeflare"), "prices.json")


def _read_cache() -> tuple[str | None, dict[str, Kept | None]]:
    """The table's key and the rates kept for it (none when the file is missing, damaged or
    for another table, or when the table cannot be found)."""
    key = _table_key()
    if key is None:
        return None, {}
    try:
        with open(_cache_path(), encoding="utf-8") as fh:
            raw = json.load(fh)
        if raw.get("table") != key:
            return key, {}
        return key, {name: _parse(value) for name, value in raw["models"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError, InvalidOperation):
        return key, {}


def _parse(value: Any) -> Kept | None:
    if value is None:
        return None
    rates: Rates = {}
    for kind in KINDS:
        base, tiers = value[kind]
        parsed = tuple((int(start), _rate(rate)) for start, rate in tiers)
        if [start for start, _ in parsed] != sorted(start for start, _ in parsed):
            raise ValueError("tiers out of order")
        rates[kind] = (_rate(base), parsed)
    until = value["until"]
    return Kept(rates, None if until is None else date.fromisoformat(until))


_MOST = Decimal(1_000_000)
"""Above any list price per million tokens: a kept rate past it is damage, not a price (and
arithmetic on an exponent near the context's limit would overflow)."""


def _rate(text: str) -> Decimal:
    rate = Decimal(text)
    if not rate.is_finite() or not 0 <= rate < _MOST:
        raise ValueError(f"not a price: {text!r}")
    return rate


def _shown(kept: Kept | None) -> dict[str, Any] | None:
    if kept is None:
        return None
    shown: dict[str, Any] = {
        kind: [str(base), [[start, str(rate)] for start, rate in tiers]]
        for kind, (base, tiers) in kept.rates.items()
    }
    shown["until"] = None if kept.until is None else kept.until.isoformat()
    return shown


def _write_cache(key: str, models: Mapping[str, Kept | None]) -> None:
    """Keep ``models`` for the table ``key``; a folder that cannot be written only means the
    next process asks the package again."""
    path = _cache_path()
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()  # left by a killed process of the same pid
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
        with open(fd, "w", encoding="utf-8") as fh:
            json.dump({"table": key, "models": {n: _shown(k) for n, k in models.items()}}, fh)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
