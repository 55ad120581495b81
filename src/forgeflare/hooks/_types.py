"""The contract between the turn loop and the hook layer.

The turn loop calls a :class:`HookPipeline` at fixed points; the hook layer implements it
(shell hooks from hooks.toml and Python hooks on one pipeline). :class:`NoHooks` is the
pipeline of an agent with nothing configured: every call returns at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol

__all__ = [
    "EXIT_CODES",
    "Allow",
    "Block",
    "Continue",
    "ExitReason",
    "HookPipeline",
    "NoHooks",
    "PostToolResult",
    "PreToolResult",
    "Signal",
]


class ExitReason(StrEnum):
    """Why an inner turn loop ended: the seven ``Stop`` reasons of the hook spec, and three more
    a loop must tell apart (a usage limit, a refusal, the budget)."""

    END_TURN = "end_turn"
    ITERATION_LIMIT = "iteration_limit"
    API_ERROR = "api_error"
    CONTINUATION_CAP = "continuation_cap"
    BLOCK_LIMIT_CONSECUTIVE = "block_limit_consecutive"
    BLOCK_LIMIT_TOTAL = "block_limit_total"
    CONVERGENCE_SIGNAL = "convergence_signal"
    RATE_LIMITED = "rate_limited"
    """A usage limit longer than the retries wait; ``final.resets_at`` says until when."""
    REFUSAL = "refusal"
    """The model refused (``stop_reason: refusal``)."""
    BUDGET = "budget"
    """``--max-cost`` is spent."""


EXIT_CODES: dict[ExitReason, int] = {
    ExitReason.END_TURN: 0,
    ExitReason.CONVERGENCE_SIGNAL: 0,
    ExitReason.API_ERROR: 3,
    ExitReason.ITERATION_LIMIT: 4,
    ExitReason.CONTINUATION_CAP: 5,
    ExitReason.BLOCK_LIMIT_CONSECUTIVE: 6,
    ExitReason.BLOCK_LIMIT_TOTAL: 6,
    ExitReason.RATE_LIMITED: 7,
    ExitReason.REFUSAL: 8,
    ExitReason.BUDGET: 9,
}
"""Exit status of ``forgeflare run`` by the reason its (last) turn ended.

2 is bad usage or configuration (bad hooks.toml, missing API key), 130 SIGINT, 143 SIGTERM.
"""


@dataclass(frozen=True, slots=True)
class Allow:
    """The guards let the tool run, with ``input`` (possibly updated by a Python hook)."""

    input: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Block:
    """A guard blocked the tool (or failed, which blocks too).

    ``message`` is the whole text the model sees in the error tool_result, e.g.
    ``"blocked by guard.sh: destructive command"`` or
    ``"hook failed: guard.sh timed out after 5000ms (tool blocked by default)"``.
    """

    message: str
    blocked_by: str
    reason: str


PreToolResult = Allow | Block


@dataclass(frozen=True, slots=True)
class Continue:
    """No PostToolUse hook signalled."""


@dataclass(frozen=True, slots=True)
class Signal:
    """The first convergence signal a PostToolUse hook returned."""

    signal: str
    reason: str


PostToolResult = Continue | Signal


class HookPipeline(Protocol):
    """What the turn loop calls. All calls are keyword-only."""

    async def execution_start(self, *, prompt: str) -> None:
        """Once per turn, before the first API call."""

    async def step_start(self, *, step: int) -> None:
        """Before each API call of the turn."""

    async def step_end(self, *, step: int, stop_reason: str) -> None:
        """After each API response was handled."""

    async def pre_tool_use(
        self, *, tool: str, input: dict[str, Any], tool_iterations: int
    ) -> PreToolResult:
        """Guard phase (fail-closed) then observe phase (fail-open) for one tool call."""
        ...

    async def post_tool_use(
        self,
        *,
        tool: str,
        input: dict[str, Any],
        result: str,
        is_error: bool,
        tool_iterations: int,
    ) -> PostToolResult:
        """After a dispatched tool; records signals in convergence.json."""
        ...

    async def stop(
        self, *, reason: ExitReason, tool_iterations: int, total_tokens: int
    ) -> str | None:
        """When the inner loop ends. Returns a prompt if a Python Stop hook asks to go on."""
        ...

    async def agent_failed(self, *, error: BaseException) -> None:
        """When the turn fails with an exception (before it propagates)."""


class NoHooks:
    """The pipeline of an agent with no hooks: no subprocess, no file, no work."""

    async def execution_start(self, *, prompt: str) -> None:
        return None

    async def step_start(self, *, step: int) -> None:
        return None

    async def step_end(self, *, step: int, stop_reason: str) -> None:
        return None

    async def pre_tool_use(
        self, *, tool: str, input: dict[str, Any], tool_iterations: int
    ) -> PreToolResult:
        return Allow(input)

    async def post_tool_use(
        self,
        *,
        tool: str,
        input: dict[str, Any],
        result: str,
        is_error: bool,
        tool_iterations: int,
    ) -> PostToolResult:
        return Continue()

    async def stop(
        self, *, reason: ExitReason, tool_iterations: int, total_tokens: int
    ) -> str | None:
        return None

    async def agent_failed(self, *, error: BaseException) -> None:
        return None
