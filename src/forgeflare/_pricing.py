"""What tokens cost, from a maintained price table.

Prices come from ``genai-prices`` (pydantic's package of the providers' list prices, shipped as
data, updated with each release and read offline). It knows cache reads and writes, which are
priced apart from fresh input. A model it does not know has no price: ``None``, never a guess.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["price_usd"]


def price_usd(
    model: str | None, tokens: Mapping[str, int], provider: str = "anthropic"
) -> float | None:
    """List price in USD of ``tokens`` (``input`` without cache, ``output``, ``cache_read``,
    ``cache_write``) on ``model``; ``None`` when the model is unknown."""
    if not model:
        return None
    from genai_prices import Usage, calc_price

    cache_read = int(tokens.get("cache_read", 0))
    cache_write = int(tokens.get("cache_write", 0))
    usage = Usage(
        # genai-prices counts cache tokens inside input_tokens
        input_tokens=int(tokens.get("input", 0)) + cache_read + cache_write,
        output_tokens=int(tokens.get("output", 0)),
        cache_read_tokens=cache_read,
        cache_write_tokens=cache_write,
    )
    try:
        result = calc_price(usage, model_ref=model, provider_id=provider)
    except (LookupError, ValueError):
        return None
    return float(result.total_price)
