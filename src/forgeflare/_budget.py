"""Budget is a cap: a request whose worst case would pass what is left is not sent (pure).

The own agent and the reviewer price each request before sending it: its input estimated from
its size (never below :data:`TOKENS_PER_BYTE`, or the larger ratio a response of the same
conversation has shown), all of it at the cache-write price when the prompt is cached (the
dearest way input is billed), plus ``max_tokens`` of output, all at the model's list price
(``forgeflare._pricing``). The output cannot pass ``max_tokens``; the input can pass its
estimate only if the API counts more than one token per two bytes, which no tokenizer does.

CLI backends (Claude Code, Codex, commands) are priced only after the fact, from what they
stream: each backend's ``overshoot`` says how far past the cap a run can end, and
:func:`overshoot_line` says it in the summary.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from forgeflare._pricing import price_usd

__all__ = [
    "TOKENS_PER_BYTE",
    "estimate_input_tokens",
    "overshoot_line",
    "passes_cap",
    "refusal",
    "worst_case_usd",
]

TOKENS_PER_BYTE = 0.5
"""The floor of the input estimate: a token per two bytes of the request's JSON. Real text
and code run at three to four bytes a token, so this overestimates about twice."""


def estimate_input_tokens(size: int, ratio: float = TOKENS_PER_BYTE) -> int:
    """Input tokens of a request of ``size`` bytes, at ``ratio`` tokens a byte (never below
    :data:`TOKENS_PER_BYTE`: a ratio learned from a response only raises it)."""
    return math.ceil(max(0, size) * max(ratio, TOKENS_PER_BYTE))


def worst_case_usd(
    model: str | None, *, input_tokens: int, max_tokens: int, cached: bool = True
) -> float | None:
    """The most a request can cost: its input (at the cache-write price when ``cached``,
    which is above the plain input price) and ``max_tokens`` of output; ``None`` when the
    model has no known price."""
    kind = "cache_write" if cached else "input"
    worst = price_usd(model, {kind: input_tokens, "output": max_tokens})
    if worst is None or not cached:
        return worst
    plain = price_usd(model, {"input": input_tokens, "output": max_tokens})
    return max(worst, plain or 0.0)


def refusal(*, spent: float | None, worst: float | None, cap: float | None) -> str | None:
    """Why a request is not sent (one line), or ``None`` when it may be: no cap, an unknown
    price, or a worst case that fits in what is left of the cap."""
    if not cap or spent is None or worst is None or spent + worst <= cap:
        return None
    left = max(0.0, cap - spent)
    return (
        f"the next request could cost up to ${worst:.2f} and ${left:.2f} of the "
        f"${cap:g} budget is left: not sent"
    )


def passes_cap(*, spent: float, streamed: float | None, cap: float | None) -> bool:
    """Has a CLI agent's streamed cost (``None``: unknown), on top of what the run ``spent``
    before it, passed the cap (``None`` or 0: none)? Then the loop ends the agent."""
    return bool(cap) and streamed is not None and cap is not None and spent + streamed > cap


def overshoot_line(bounds: Mapping[str, str]) -> str:
    """The summary's words on a ``budget`` finish: how far past the cap each backend the run
    used can go (``bounds``: each backend, in the order first used, to its ``overshoot``)."""
    if len(bounds) == 1:
        return f"past the cap: {next(iter(bounds.values()))}"
    return "past the cap: " + "; ".join(f"{b} {bound}" for b, bound in bounds.items())
