"""The independent reviewer: one Messages API request judges a completion claim.

Neutral ground, like ``_evidence``: the loop supervisor (``[finish] reviewer``) and the
stop-hook (``stop-hook start --reviewer``) both ask it, and each keeps the answer in its own
record.

When a claim passed the gate, a model that did not do the work judges it. It sees the task,
the plan, the diff since the run started (at most ``max_diff`` bytes, with the ``--stat`` of
what was cut), the gate's result and the agent's final message, and answers through a forced
call of the tool ``verdict`` ({complete, reasons, missing}).

The request goes through forgeflare's own client to the agent's API URL and key
(``ANTHROPIC_API_URL`` / ``ANTHROPIC_BASE_URL``, ``ANTHROPIC_API_KEY``). A reviewer that
fails (API error, no or a malformed verdict) never completes and never raises:
:func:`ask_reviewer` returns a :class:`ReviewAnswer` with ``error``. The request and the
answer are saved to a file the caller names.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from forgeflare._budget import estimate_input_tokens, refusal, worst_case_usd
from forgeflare._convergence import Tokens
from forgeflare._evidence import ClaimBy, GateRun, gate_tail
from forgeflare._pricing import price_usd

if TYPE_CHECKING:
    from forgeflare.agent import AssistantResponse

__all__ = [
    "DEFAULT_MAX_DIFF",
    "OVER_BUDGET",
    "VERDICT_TOOL",
    "ReviewAnswer",
    "ReviewInput",
    "ReviewVerdict",
    "ask_reviewer",
    "review_prompt",
    "verdict_of",
]

OVER_BUDGET = "not asked, over budget: "
"""How the error of a reviewer not asked because its worst case would pass the cap starts."""

DEFAULT_MAX_DIFF = 60_000
"""The most of the diff the reviewer sees by default (bytes)."""

VERDICT_TOOL: dict[str, Any] = {
    "name": "verdict",
    "description": "Your judgement: is the task complete?",
    "input_schema": {
        "type": "object",
        "properties": {
            "complete": {"type": "boolean"},
            "reasons": {"type": "array", "items": {"type": "string"}},
            "missing": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["complete", "reasons", "missing"],
    },
}

_SYSTEM = (
    "You review the work of a coding agent that claims its task is complete. You did not do "
    "the work. Judge only from the evidence given: is the task done, fully and correctly? "
    "Answer by calling the tool `verdict`: complete, the reasons for your judgement, and what "
    "is missing (empty when nothing is)."
)


class ReviewVerdict(BaseModel):
    """The reviewer's answer (the ``verdict`` tool's input)."""

    complete: bool
    reasons: list[str]
    missing: list[str] = []


@dataclass(frozen=True, slots=True)
class ReviewInput:
    """What the reviewer is shown."""

    model: str
    task: str
    plan: str
    diff: str
    diff_stat: str
    max_diff: int
    gate: GateRun | None
    final_message: str
    claim: ClaimBy


@dataclass(slots=True)
class ReviewAnswer:
    """What came of one review: a verdict, or why there is none (``error``), and its spend."""

    model: str
    complete: bool | None = None
    """``None``: the reviewer failed (``error`` says how); the claim is not accepted."""
    reasons: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    error: str | None = None
    tokens: dict[str, int] = field(default_factory=dict)
    """``input`` (without cache reads), ``output``, ``cache_read``, ``cache_write``."""
    cost_usd: float | None = None
    file: str | None = None
    """The name of the file holding the request and the answer (``None``: not saved)."""


def review_prompt(given: ReviewInput) -> str:
    """The reviewer's user message (pure)."""
    diff = given.diff
    cut = ""
    raw = diff.encode()
    if len(raw) > given.max_diff:
        diff = raw[: given.max_diff].decode(errors="ignore")
        cut = (
            f"\n[the diff is cut at {given.max_diff} of {len(raw)} bytes; every file it "
            f"touches:]\n{given.diff_stat}"
        )
    if given.gate is None:
        gate = "No gate is set."
    else:
        gate = (
            f"The gate `{given.gate.command}` exited {given.gate.exit_code}. The end of its "
            f"output:\n```\n{gate_tail(given.gate.output, 15)}\n```"
        )
    parts = [
        f"# The task\n\n{given.task.strip()}",
        f"# The plan\n\n{given.plan.strip() or '(no plan file)'}",
        f"# The diff since the run started\n\n```diff\n{diff}\n```{cut}",
        f"# The gate\n\n{gate}",
        f"# The agent's last output (it claims completion by {given.claim})\n\n"
        f"{given.final_message.strip()[-4000:]}",
    ]
    return "\n\n".join(parts)


def verdict_of(content: list[dict[str, Any]]) -> ReviewVerdict:
    """The verdict in a response's content; ``ValueError`` when there is none or it is bad."""
    for block in content:
        if block.get("type") == "tool_use" and block.get("name") == "verdict":
            try:
                return ReviewVerdict.model_validate(block.get("input"))
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(p) for p in first["loc"]) or "input"
                raise ValueError(f"malformed verdict ({where}: {first['msg']})") from None
    raise ValueError("the answer has no `verdict` tool call")


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

    ``timeout`` bounds the whole request (the stop-hook must answer before Claude Code's own
    hook timeout). With a budget ``cap`` of which ``spent`` is gone, a request whose worst
    case would pass it is not sent: the error then starts with :data:`OVER_BUDGET`.
    """
    import trio

    from forgeflare.agent import (
        APIError,
        Message,
        MessagesClient,
        MessagesRequest,
        resolve_base_url,
    )

    request = MessagesRequest(
        model=given.model,
        max_tokens=2048,
        system=_SYSTEM,
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
    usage = response.usage
    answer.tokens = Tokens.from_usage(usage.model_dump()).model_dump()
    answer.cost_usd = price_usd(answer.model, answer.tokens)
    try:
        verdict = verdict_of(body.get("content") or [])
    except ValueError as exc:
        answer.error = str(exc)
    else:
        answer.complete = verdict.complete
        answer.reasons = verdict.reasons
        answer.missing = verdict.missing
