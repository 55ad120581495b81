"""The reviewer's one request: ask it through forgeflare's own client, never raising.

What the reviewer is shown and how its answer is read are pure and live on neutral ground
(``forgeflare._review``); this is the shell that sends the request. The loop supervisor
(``[finish] reviewer``) and the stop-hook (``stop-hook start --reviewer``) both call
:func:`ask_reviewer` and keep its answer in their own records.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import trio

from forgeflare._budget import estimate_input_tokens, refusal, worst_case_usd
from forgeflare._pricing import price_usd
from forgeflare._review import (
    OVER_BUDGET,
    REVIEWER_SYSTEM,
    VERDICT_TOOL,
    ReviewAnswer,
    ReviewInput,
    review_prompt,
    verdict_of,
)
from forgeflare.agent._client import MessagesClient, resolve_base_url
from forgeflare.agent._errors import APIError
from forgeflare.agent._messages import AssistantResponse, Message, MessagesRequest
from forgeflare.disk import Tokens

__all__ = ["ask_reviewer"]


async def ask_reviewer(
    given: ReviewInput,
    *,
    env: Mapping[str, str],
    save_to: Path,
    timeout: float = 300.0,
    cap: float | None = None,
    spent: float | None = 0.0,
) -> ReviewAnswer:
    """Ask the reviewer; never raises (a failure is the answer's ``error``).

    The request goes to the agent's API URL and key (``ANTHROPIC_API_URL`` /
    ``ANTHROPIC_BASE_URL``, ``ANTHROPIC_API_KEY`` in ``env``); the request and the answer are
    saved to ``save_to``. ``timeout`` bounds the whole request (the stop-hook must answer
    before Claude Code's own hook timeout). With a budget ``cap`` of which ``spent`` is gone,
    a request whose worst case would pass it is not sent: the error then starts with
    :data:`~forgeflare._review.OVER_BUDGET`.
    """
    request = MessagesRequest(
        model=given.model,
        max_tokens=2048,
        system=REVIEWER_SYSTEM,
        messages=[Message.user_text(review_prompt(given))],
        tools=[VERDICT_TOOL],
        tool_choice={"type": "tool", "name": "verdict"},
        cache=False,
    )
    answer = ReviewAnswer(model=given.model, file=save_to.name)
    saved: dict[str, Any] = {"request": request.to_body(stream=True)}
    size = len(json.dumps(saved["request"]).encode())
    worst = worst_case_usd(
        given.model,
        input_tokens=estimate_input_tokens(size),
        max_tokens=request.max_tokens,
        cached=False,
    )
    refused = refusal(spent=spent, worst=worst, cap=cap)
    if refused is not None:
        answer.error = f"{OVER_BUDGET}{refused}"
        saved["error"] = answer.error
        with contextlib.suppress(OSError):
            await trio.Path(save_to).write_text(json.dumps(saved, indent=2), encoding="utf-8")
        return answer
    try:
        async with MessagesClient(
            base_url=resolve_base_url(None, env),
            api_key=env.get("ANTHROPIC_API_KEY") or None,
            total_timeout=timeout,
            read_timeout=min(120.0, timeout),
            connect_timeout=min(30.0, timeout),
        ) as client:
            response = await client.stream(request)
    except Exception as exc:  # an API error, garbage on the wire: never the loop's end
        if not isinstance(exc, APIError | OSError | ValueError):
            exc = ValueError(f"{type(exc).__name__}: {exc}")
        answer.error = " ".join(str(exc).split()) or type(exc).__name__
    else:
        _take_response(answer, response, saved)
    saved["error"] = answer.error
    try:
        await trio.Path(save_to).write_text(json.dumps(saved, indent=2), encoding="utf-8")
    except OSError:
        answer.file = None  # the verdict stands; only its copy is lost
    return answer


def _take_response(
    answer: ReviewAnswer, response: AssistantResponse, saved: dict[str, Any]
) -> None:
    """Fill ``answer`` from the reviewer's response (usage, cost, verdict) and keep its body
    in ``saved``; a missing or malformed verdict becomes the answer's ``error``."""
    body = response.model_dump(mode="json")
    saved["response"] = body
    answer.tokens = Tokens.from_usage(response.usage.model_dump()).model_dump()
    answer.cost_usd = price_usd(answer.model, answer.tokens)
    try:
        verdict = verdict_of(body.get("content") or [])
    except ValueError as exc:
        answer.error = str(exc)
    else:
        answer.complete = verdict.complete
        answer.reasons = verdict.reasons
        answer.missing = verdict.missing
