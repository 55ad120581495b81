"""The independent reviewer: one Messages API request judges a completion claim.

Neutral ground, like ``_evidence``: the loop supervisor (``[finish] reviewer``) and the
stop-hook (``stop-hook start --reviewer``) both ask it, and each keeps the answer in its own
record.

When a claim passed the gate, a model that did not do the work judges it. It sees the task,
the plan, the diff since the run started (at most ``max_diff`` bytes, with the ``--stat`` of
what was cut), the gate's result and the agent's final message, and answers through a forced
call of the tool ``verdict`` ({complete, reasons, missing}).

Only the pure parts live here, so neutral ground imports nothing above it: what the reviewer
is shown (:func:`review_prompt`, :data:`REVIEWER_SYSTEM`, :data:`VERDICT_TOOL`), how its answer
is read (:func:`verdict_of`) and what came of it (:class:`ReviewAnswer`). The request itself is
sent by ``forgeflare.agent.ask_reviewer`` (forgeflare's own client): a reviewer that fails (API
error, no or a malformed verdict) never completes and never raises; its answer has ``error``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from forgeflare._evidence import ClaimBy, GateRun, gate_tail

__all__ = [
    "DEFAULT_MAX_DIFF",
    "OVER_BUDGET",
    "REVIEWER_SYSTEM",
    "VERDICT_TOOL",
    "ReviewAnswer",
    "ReviewInput",
    "ReviewVerdict",
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

REVIEWER_SYSTEM = (
    "You review the work of a coding agent that claims its task is complete. You did not do "
    "the work. Judge only from the evidence given: is the task done, fully and correctly? "
    "Answer by calling the tool `verdict`: complete, the reasons for your judgement, and what "
    "is missing (empty when nothing is)."
)
"""The reviewer's system prompt: it did not do the work and judges from the evidence alone."""


class ReviewVerdict(BaseModel):
    """The reviewer's answer (the ``verdict`` tool's input)."""

    model_config = ConfigDict(defer_build=True)

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
