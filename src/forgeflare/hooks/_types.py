"""The contract between the turn loop and the hook layer.

The turn loop calls a :class:`HookPipeline` at fixed points; the hook layer implements it
(agent hooks: shell hooks from hooks.toml and Python hooks, on one pipeline). The typed
answers below are both what a Python hook returns and what the pipeline answers the turn loop.
:class:`NoHooks` is the pipeline of a turn loop with nothing configured: every call returns at
once.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol

__all__ = [
    "ANSWERS",
    "EXIT_CODES",
    "Allow",
    "Block",
    "Blocked",
    "Continue",
    "ExitReason",
    "HookAnswer",
    "HookPipeline",
    "NoHooks",
    "PostToolResult",
    "PreToolResult",
    "Signal",
    "Stop",
    "TurnFailure",
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
    """PreToolUse: let the tool run.

    A Python guard returns ``Allow()`` (same as ``None``) or ``Allow(updated_input={...})`` to
    replace the tool's input for later hooks and the tool. The pipeline's own answer always
    carries the input the tool runs with (:attr:`input`).
    """

    updated_input: dict[str, Any] | None = None

    @property
    def input(self) -> dict[str, Any]:
        """The input the tool runs with (the pipeline's answer always sets it)."""
        return self.updated_input if self.updated_input is not None else {}


@dataclass(frozen=True, slots=True)
class Block:
    """PreToolUse: do not run the tool. A Python guard returns ``Block("why")``.

    In the pipeline's answer ``message`` is the whole text the model sees in the error
    tool_result, e.g. ``"blocked by guard.sh: destructive command"`` or
    ``"hook failed: guard.sh timed out after 5000ms (tool blocked by default)"``, and
    ``blocked_by`` names the hook.
    """

    reason: str = "denied"
    message: str = ""
    blocked_by: str = ""


PreToolResult = Allow | Block


@dataclass(frozen=True, slots=True)
class Continue:
    """The agent goes on.

    PostToolUse: no signal (same as ``None``). Stop: keep the turn going with ``prompt`` as the
    next user message (``None``: ``"Continue."``).
    """

    prompt: str | None = None


@dataclass(frozen=True, slots=True)
class Signal:
    """PostToolUse: a convergence signal (recorded in convergence.json; the first one ends the
    turn after its batch)."""

    signal: str
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Stop:
    """Stop: let the agent stop; no later Stop hook is asked for a ``Continue``."""

    reason: str = ""


@dataclass(frozen=True, slots=True)
class Blocked:
    """Stop: the agent stops on a question only a person can answer; a loop running it then
    finishes ``blocked`` with ``question`` (as if the final message ended with
    ``<loop-done>BLOCKED</loop-done>`` and the question). No later Stop hook is asked."""

    question: str


PostToolResult = Continue | Signal
HookAnswer = Allow | Block | Blocked | Continue | Signal | Stop
"""Everything a Python hook may return (besides ``None``, no opinion)."""

ANSWERS: dict[str, tuple[type, ...]] = {
    "PreToolUse": (Allow, Block),
    "PostToolUse": (Continue, Signal),
    "Stop": (Continue, Stop, Blocked),
}
"""What each event accepts from a hook; other events take only ``None``. Anything else is the
hook's failure (so a guard returning the wrong type blocks)."""


class TurnFailure(Exception):
    """The ``error`` AgentFailed hooks get when a turn ends on a failure exit without an
    exception of its own (refusal, budget, a limit); ``reason`` is the exit reason."""

    def __init__(self, reason: ExitReason) -> None:
        super().__init__(f"the turn ended with {reason.value}")
        self.reason = reason


class HookPipeline(Protocol):
    """What the turn loop calls. All calls are keyword-only.

    The bodies are the answers of a pipeline with nothing configured (:class:`NoHooks`).
    """

    async def execution_start(self, *, prompt: str) -> None:
        """Once per turn, before the first API call."""
        return None

    async def step_start(self, *, step: int) -> None:
        """Before each API call of the turn."""
        return None

    async def step_end(self, *, step: int, stop_reason: str) -> None:
        """After each API response was handled, its tools included."""
        return None

    async def pre_tool_use(
        self, *, tool: str, input: dict[str, Any], tool_iterations: int
    ) -> PreToolResult:
        """Guard phase (fail-closed) then observe phase (fail-open) for one tool call."""
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
        """After a dispatched tool; records signals in convergence.json."""
        return Continue()

    async def stop(
        self, *, reason: ExitReason, tool_iterations: int, total_tokens: int
    ) -> str | Blocked | None:
        """When the inner loop ends: a prompt if a Stop hook asks to go on, :class:`Blocked`
        if one parks the loop on a question, ``None`` to stop."""
        return None

    async def agent_failed(self, *, error: BaseException, reason: str) -> None:
        """On every failure exit of a turn (``reason``: the exit reason, ``interrupted`` or
        ``internal_error``), before it ends."""
        return None


class NoHooks(HookPipeline):
    """The pipeline of an agent with no hooks: no subprocess, no file, no work."""
