"""The loop's reviewer (``[finish] reviewer``): the neutral reviewer, kept as a run record.

What the reviewer sees lives on neutral ground (``forgeflare._review``) and the request is
``forgeflare.agent.ask_reviewer``'s, both shared with the stop-hook; here its answer becomes
the iteration's :class:`ReviewRecord`, whose tokens and cost are part of the run's spend. The
request and the answer are saved in the run folder.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from forgeflare._review import (
    VERDICT_TOOL,
    ReviewInput,
    ReviewVerdict,
    review_prompt,
    verdict_of,
)
from forgeflare.supervisor.backends._report import Tokens
from forgeflare.supervisor.records._records import ReviewRecord

__all__ = [
    "VERDICT_TOOL",
    "ReviewInput",
    "ReviewVerdict",
    "review_prompt",
    "run_review",
    "verdict_of",
]


async def run_review(
    given: ReviewInput,
    *,
    env: Mapping[str, str],
    save_to: Path,
    cap: float | None = None,
    spent: float | None = 0.0,
) -> ReviewRecord:
    """Ask the reviewer; never raises (a failure is the record's ``error``). A request whose
    worst case would pass the budget ``cap`` (``spent`` of it gone) is not sent."""
    # Only a review needs the agent (its HTTP client, tools, hooks): every command that reads
    # the supervisor (report, trust, the stop-hook's gate) would load it otherwise.
    from forgeflare.agent import ask_reviewer

    answer = await ask_reviewer(given, env=env, save_to=save_to, cap=cap, spent=spent)
    return ReviewRecord(
        model=answer.model,
        complete=answer.complete,
        reasons=answer.reasons,
        missing=answer.missing,
        error=answer.error,
        tokens=Tokens(**answer.tokens),
        cost_usd=answer.cost_usd,
        file=answer.file,
    )
