"""One meaning for an iteration, whatever the agent: the iteration report.

Every backend turns what its agent did into an :class:`IterationReport`; the loop's finish
decision, the records, the display and the lifecycle hooks read only that. The JSON schema of
the report (``forgeflare schema report``) is also the contract for a ``command`` agent that
writes its own report to ``$FORGEFLARE_REPORT``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from forgeflare.disk import AgentReport, Tokens

__all__ = ["OUTCOMES", "IterationReport", "Outcome", "Tokens"]

Outcome = Literal[
    "ok",
    "agent_error",
    "api_error",
    "rate_limited",
    "refused",
    "killed",
    "interrupted",
    "timed_out",
    "budget",
    "quota",
]
OUTCOMES: tuple[str, ...] = Outcome.__args__  # type: ignore[attr-defined]


class IterationReport(AgentReport):
    """What one iteration's agent did, in the loop's words (and the :class:`AgentReport`
    fields it shares with ``final``)."""

    outcome: Outcome = Field(
        "ok",
        description="ok, agent_error (crash, no result), api_error (the agent gave up on the API), "
        "rate_limited (a usage limit: wait, then the same work succeeds), refused, killed, "
        "interrupted, timed_out, budget, quota (billing or credit exhausted: waiting cannot fix "
        "it).",
    )
    transient: bool = Field(
        False,
        description="For api_error: the failure was transient (overloaded, 5xx, connection): an "
        "outage.",
    )
    stop_reason: str | None = Field(
        None,
        description="The agent's own reason for ending (e.g. end_turn, convergence_signal, "
        "success).",
    )
    tokens: Tokens = Field(default_factory=Tokens, description="Tokens of the whole iteration.")
    turns: int = Field(0, description="Model turns (requests) the agent made.")
    signal: str | None = Field(
        None,
        description="A completion signal found in the final message "
        "(``<loop-done>COMPLETE</loop-done>``).",
    )

    @property
    def good(self) -> bool:
        """An iteration that did its work (``ok``)."""
        return self.outcome == "ok"
