"""Budget is a cap: a request whose worst case would pass what is left is not sent (pure).

The own agent and the reviewer price each request before sending it: its input estimated from
its size (never below :data:`TOKENS_PER_BYTE`, or the larger ratio a response of the same
conversation has shown), all of it at the cache-write price when the prompt is cached (the
dearest way input is billed), plus ``max_tokens`` of output, all at the model's list price
(``forgeflare._pricing``). The output cannot pass ``max_tokens``; the input can pass its
estimate only if the API counts more than one token per two bytes, which no tokenizer does.

CLI backends (Claude Code, Codex, commands) are priced only after the fact, from what they
stream: :func:`overshoot_bound` says, per backend, how far past the cap a run can end.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from forgeflare._pricing import price_usd

__all__ = [
    "TOKENS_PER_BYTE",
    "estimate_input_tokens",
    "overshoot_bound",
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


# How far past the cap a run can end, per backend (the loop's summary says it).
_BOUNDS: Mapping[str, str] = {
    "forgeflare": "$0: each request's worst case is checked before it is sent",
    "claude": "one API request of Claude Code: --max-budget-usd stops it after the request "
    "that passed it, and the loop ends it when its streamed cost passes the cap",
    "codex": "one Codex turn: Codex streams its tokens only when a turn completes, and the "
    "loop ends it once they pass the cap",
    "opencode": "one OpenCode step: it streams each step's cost when the step ends, and the loop "
    "ends it once they pass the cap",
    "pi": "one pi request: it streams each request's cost when the request ends, and the loop "
    "ends it once they pass the cap",
}


def overshoot_bound(backend: str) -> str:
    """How far past ``max_cost`` a run of ``backend`` can end, in words."""
    return _BOUNDS.get(
        backend,
        "one iteration: a command agent's cost is known only from its report at the end",
    )


def overshoot_line(backends: Iterable[str]) -> str:
    """The summary's words on a ``budget`` finish: how far past the cap each backend the run
    used can go (the same backend said once, in the order first used)."""
    said = list(dict.fromkeys(backends))
    if len(said) == 1:
        return f"past the cap: {overshoot_bound(said[0])}"
    return "past the cap: " + "; ".join(f"{b} {overshoot_bound(b)}" for b in said)
