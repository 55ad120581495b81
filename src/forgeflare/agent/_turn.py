"""The turn loop: call the model, dispatch tools through the hooks, repeat until an exit.

One readable unit (STYLE.md, mini-swe-agent): :meth:`TurnLoop.run_turn` runs the inner loop for
one user prompt and returns why it ended, as one of the seven :class:`ExitReason` values.
Tool dispatch follows R9 of the hook spec: guards run before each tool, block counters can
abandon a batch (``conversation.pop()``), a PostToolUse signal ends the loop after the batch.
"""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, cast

import trio

from forgeflare._budget import estimate_input_tokens, refusal
from forgeflare.agent._conversation import (
    CONTINUE_PROMPT,
    MAX_CONTINUATIONS,
    MaxTokensAction,
    add_user_text,
    classify_max_tokens,
    conversation_bytes,
    drop_null_input_tool_uses,
    recover_conversation,
    should_trim,
    trim_conversation,
)
from forgeflare.agent._display import AgentDisplay
from forgeflare.agent._errors import APIError, UsageLimitError
from forgeflare.agent._messages import (
    AssistantResponse,
    ContentBlock,
    Message,
    MessagesRequest,
    StopReason,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)
from forgeflare.agent.tools import ToolEffect, ToolOutput, dispatch_tool, tool_effect
from forgeflare.disk import Tokens
from forgeflare.hooks import (
    EXIT_CODES,
    Block,
    Blocked,
    ExitReason,
    HookPipeline,
    NoHooks,
    Signal,
    TurnFailure,
)

__all__ = [
    "MAX_CONSECUTIVE_BLOCKS",
    "MAX_STOP_CONTINUATIONS",
    "MAX_TOOL_ITERATIONS",
    "MAX_TOTAL_BLOCKS",
    "Dispatch",
    "ModelClient",
    "TranscriptSink",
    "TurnLoop",
    "TurnResult",
    "block_limit",
]

MAX_TOOL_ITERATIONS = 50
MAX_CONSECUTIVE_BLOCKS = 3
MAX_TOTAL_BLOCKS = 10
MAX_STOP_CONTINUATIONS = 3
AGENT_FAILED_GRACE = 5.0
"""Seconds AgentFailed hooks get after an interrupt or an internal error."""
"""How many times in a row a Python Stop hook may keep a turn going: every stop-blocking
loop needs a cap, or one buggy hook traps the agent forever."""


class ModelClient(Protocol):
    """Sends one request (retrying as it sees fit) and returns the complete response."""

    async def send(
        self, request: MessagesRequest, *, on_text: Callable[[str], None] | None = None
    ) -> AssistantResponse: ...


class TranscriptSink(Protocol):
    """Where every message of the conversation is recorded as it is added."""

    def append(self, message: Message) -> None: ...


Dispatch = Callable[..., ToolOutput] | Callable[..., Awaitable[ToolOutput]]


def block_limit(consecutive: int, total: int) -> ExitReason | None:
    """The block counter that tripped, consecutive first when both did (R6)."""
    if consecutive >= MAX_CONSECUTIVE_BLOCKS:
        return ExitReason.BLOCK_LIMIT_CONSECUTIVE
    if total >= MAX_TOTAL_BLOCKS:
        return ExitReason.BLOCK_LIMIT_TOTAL
    return None


def _is_interrupt(exc: BaseException) -> bool:
    """Cancellation or Ctrl-C, also when a nursery (httpx's, a batch's) wrapped it in a group."""
    if isinstance(exc, BaseExceptionGroup):
        return exc.split((trio.Cancelled, KeyboardInterrupt))[1] is None
    return isinstance(exc, trio.Cancelled | KeyboardInterrupt)


@dataclass
class Spend:
    """Tokens of a turn by kind, summed over its requests, and how many requests it made."""

    tokens: Tokens = field(default_factory=Tokens)
    requests: int = 0

    def add(self, usage: Usage) -> None:
        self.tokens = self.tokens + Tokens.from_usage(usage.model_dump())
        self.requests += 1

    @property
    def total(self) -> int:
        """input + output + cache reads + cache writes (the loop's one meaning of a total)."""
        return self.tokens.total


@dataclass
class TurnResult:
    """How one turn ended."""

    reason: ExitReason
    tool_iterations: int
    error: str | None = None
    spend: Spend = field(default_factory=Spend)
    failure: APIError | None = None
    """The API error that ended the turn (``api_error``, ``rate_limited``)."""
    question: str | None = None
    """A Stop hook parked the loop on this question (:class:`~forgeflare.hooks.Blocked`)."""

    @property
    def total_tokens(self) -> int:
        return self.spend.total


@dataclass
class _Counters:
    tool_iterations: int = 0
    continuations: int = 0
    consecutive_blocks: int = 0
    total_blocks: int = 0
    last_input_tokens: int = 0
    step: int = 0
    stop_reason: str | None = None
    """The response's stop_reason until the step's StepEnd fired."""
    spend: Spend = field(default_factory=Spend)
    failure: APIError | None = None
    tokens_per_byte: float = 0.0
    """The most input tokens a byte of a request cost so far (raises the budget's estimate)."""


@dataclass
class TurnLoop:
    """A conversation with the model, one :meth:`run_turn` per user prompt."""

    model_client: ModelClient
    model: str
    max_tokens: int
    system: str
    tools: list[dict[str, Any]]
    cwd: Path
    hooks: HookPipeline = field(default_factory=NoHooks)
    display: AgentDisplay = field(default_factory=AgentDisplay)
    transcript: TranscriptSink | None = None
    dispatch: Dispatch = dispatch_tool
    effect: Callable[[str], ToolEffect] = tool_effect
    conversation: list[Message] = field(default_factory=list)
    max_cost: float | None = None
    """End the turn with ``budget`` once its requests cost this much (USD, list prices)."""
    max_requests: int | None = None
    """End the turn as ``rate_limited`` before a request beyond this many (a loop's
    ``[limits] max_requests_per_hour`` allowance; ``None``: no limit)."""
    prompt_cache: bool = True
    """Mark prompt-cache breakpoints on every request."""
    price: Callable[[Spend], float | None] = lambda spend: None
    """The cost of a turn's tokens so far (``None``: unknown, so no budget can be enforced)."""
    worst_case: Callable[[int, int], float | None] = lambda input_tokens, max_tokens: None
    """The most a request of ``input_tokens`` and ``max_tokens`` can cost (``None``: unknown)."""

    def over_budget(self, spend: Spend) -> bool:
        """Has the turn spent ``max_cost``? Unknown prices never stop it."""
        if not self.max_cost:
            return False
        cost = self.price(spend)
        return cost is not None and cost >= self.max_cost

    def _request_bytes(self) -> int:
        """The size of the next request, as the budget's input estimate reads it."""
        return (
            len(self.system.encode())
            + len(json.dumps(self.tools).encode())
            + conversation_bytes(self.conversation)
        )

    def _refused(self, c: _Counters, size: int) -> str | None:
        """Why the next request would pass ``max_cost`` at its worst (``_budget``), if it would."""
        if not self.max_cost:
            return None
        tokens = estimate_input_tokens(size, c.tokens_per_byte)
        worst = self.worst_case(tokens, self.max_tokens)
        return refusal(spent=self.price(c.spend), worst=worst, cap=self.max_cost)

    def _requests_used(self, c: _Counters) -> str | None:
        """Why no further request may be sent (``max_requests`` reached), else ``None``."""
        if self.max_requests is None or c.spend.requests < self.max_requests:
            return None
        said = f"the allowance of {self.max_requests} request(s) is used"
        self.display.warn(f"stopping: {said} (max_requests_per_hour)")
        return said

    def _record(self, message: Message) -> None:
        if self.transcript is not None:
            self.transcript.append(message)

    def _push(self, message: Message) -> None:
        self.conversation.append(message)
        self._record(message)

    def _push_user_text(self, text: str) -> None:
        add_user_text(self.conversation, text)
        self._record(Message.user_text(text))

    async def run_turn(self, prompt: str) -> TurnResult:
        """Run the inner loop for ``prompt``; block counters and limits reset per turn."""
        self._push_user_text(prompt)
        c = _Counters()
        await self.hooks.execution_start(prompt=prompt)
        stop_continuations = 0
        try:
            while True:
                reason, error = await self._inner(c)
                more = await self.hooks.stop(
                    reason=reason, tool_iterations=c.tool_iterations, total_tokens=c.spend.total
                )
                question = None
                if isinstance(more, Blocked):  # the turn ends; the loop parks on the question
                    question, more = more.question, None
                    self.display.info(f"Stop hook: stopping on a question: {question}")
                last_is_assistant = bool(self.conversation) and (
                    self.conversation[-1].role == "assistant"
                )
                if more is not None and (
                    stop_continuations >= MAX_STOP_CONTINUATIONS or not last_is_assistant
                ):
                    self.display.warn(
                        f"a Stop hook asked to continue; not continuing ({reason} stands)"
                    )
                    more = None
                if more is None:
                    if EXIT_CODES[reason] != 0:  # a failure exit: AgentFailed hooks hear of it
                        failure = c.failure if c.failure is not None else TurnFailure(reason)
                        await self.hooks.agent_failed(error=failure, reason=reason.value)
                    return TurnResult(
                        reason, c.tool_iterations, error, c.spend, c.failure, question=question
                    )
                stop_continuations += 1
                self.display.info(f"Stop hook: continuing ({stop_continuations}): {more}")
                self._push_user_text(more)
        except BaseException as exc:
            interrupted = _is_interrupt(exc)
            # Shielded and capped: an interrupt still tells the hooks, and a hung hook
            # cannot keep the process from exiting.
            with trio.CancelScope(shield=True), trio.move_on_after(AGENT_FAILED_GRACE):
                await self.hooks.agent_failed(
                    error=exc, reason="interrupted" if interrupted else "internal_error"
                )
            raise

    async def _inner(self, c: _Counters) -> tuple[ExitReason, str | None]:
        """The steps of one turn; each step's StepEnd fires once its tools ran."""
        outcome = await self._steps(c)
        await self._end_step(c)
        return outcome

    async def _end_step(self, c: _Counters) -> None:
        if c.stop_reason is not None:
            step_end, c.stop_reason = c.stop_reason, None
            await self.hooks.step_end(step=c.step, stop_reason=step_end)

    async def _steps(self, c: _Counters) -> tuple[ExitReason, str | None]:
        while True:
            await self._end_step(c)
            if c.tool_iterations >= MAX_TOOL_ITERATIONS:
                self.display.warn(f"stopping: {MAX_TOOL_ITERATIONS} tool iterations reached")
                return ExitReason.ITERATION_LIMIT, None
            if should_trim(c.last_input_tokens):
                removed = trim_conversation(self.conversation)
                if removed:
                    self.display.info(f"trimmed {removed} old messages to fit the context")
            size = self._request_bytes() if self.max_cost else 0
            refused = self._refused(c, size)
            if refused is not None:
                self.display.warn(f"stopping: {refused}")
                return ExitReason.BUDGET, None
            if (used := self._requests_used(c)) is not None:
                return ExitReason.RATE_LIMITED, used
            c.step += 1
            await self.hooks.step_start(step=c.step)
            request = MessagesRequest(
                model=self.model, max_tokens=self.max_tokens, system=self.system,
                messages=self.conversation, tools=self.tools, cache=self.prompt_cache,
            )  # fmt: skip
            try:
                response = await self.model_client.send(request, on_text=self.display.text)
            except APIError as exc:
                self.display.discard()  # a failed response's text is no answer
                self.display.error(str(exc))
                recover_conversation(self.conversation)
                c.failure = exc
                if isinstance(exc, UsageLimitError):
                    return ExitReason.RATE_LIMITED, str(exc)
                return ExitReason.API_ERROR, str(exc)
            self.display.end_message()
            self._count_usage(response.usage, c, size)
            content = drop_null_input_tool_uses(response.content)
            self._push(Message(role="assistant", content=content))
            c.stop_reason = response.stop_reason.value  # StepEnd fires after the tools
            tool_uses = [b for b in content if isinstance(b, ToolUseBlock)]

            if response.stop_reason is StopReason.MAX_TOKENS:
                has_text = any(isinstance(b, TextBlock) and b.text for b in response.content)
                action = classify_max_tokens(
                    has_tool_use=bool(tool_uses),
                    has_text=has_text,
                    continuation_count=c.continuations,
                )
                if action is MaxTokensAction.CONTINUE:
                    c.continuations += 1
                    self.display.info(f"max_tokens: continuing ({c.continuations})")
                    self._push_user_text(CONTINUE_PROMPT)
                    continue
                if action is not MaxTokensAction.DISPATCH_TOOLS:
                    return ExitReason.CONTINUATION_CAP, None
            elif response.stop_reason is StopReason.PAUSE_TURN and not tool_uses:
                # The API paused a long turn: sending the conversation back resumes it.
                c.continuations += 1
                if c.continuations > MAX_CONTINUATIONS:
                    return ExitReason.CONTINUATION_CAP, None
                continue
            if response.stop_reason is StopReason.REFUSAL:
                self.display.warn("the model refused to continue (stop_reason: refusal)")
                return ExitReason.REFUSAL, None
            if not tool_uses:
                return ExitReason.END_TURN, None
            if self.over_budget(c.spend):
                self.display.warn(f"stopping: the budget of ${self.max_cost:g} is spent")
                return ExitReason.BUDGET, None

            outcome = await self._dispatch_batch(tool_uses, c)
            if outcome is not None and outcome is not ExitReason.CONVERGENCE_SIGNAL:
                return outcome, None
            c.tool_iterations += 1
            if outcome is ExitReason.CONVERGENCE_SIGNAL:
                return outcome, None

    def _count_usage(self, usage: Usage, c: _Counters, size: int) -> None:
        """Add a response's usage to the spend, learn tokens per request byte (for the next
        budget check) and show the usage."""
        c.spend.add(usage)
        c.last_input_tokens = usage.input_tokens
        if size:
            billed = (
                usage.input_tokens
                + usage.cache_read_input_tokens
                + usage.cache_creation_input_tokens
            )
            c.tokens_per_byte = max(c.tokens_per_byte, billed / size)
        self.display.usage(
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cache_read=usage.cache_read_input_tokens,
            cache_write=usage.cache_creation_input_tokens,
            total=c.spend.total,  # one meaning of a total: cache tokens count too
        )

    async def _guard(self, block: ToolUseBlock, c: _Counters) -> tuple[dict[str, Any] | None, str]:
        """Run PreToolUse; returns (input to run with, or None if blocked; block message)."""
        input = block.input or {}
        self.display.tool_call(block.name, input)
        pre = await self.hooks.pre_tool_use(
            tool=block.name, input=input, tool_iterations=c.tool_iterations
        )
        if isinstance(pre, Block):
            c.consecutive_blocks += 1
            c.total_blocks += 1
            self.display.blocked(block.name, pre.message)
            return None, pre.message
        c.consecutive_blocks = 0
        return pre.input, ""

    async def _run_tool(self, name: str, input: dict[str, Any], *, stream: bool) -> ToolOutput:
        on_output = self.display.tool_output if stream else None
        call = functools.partial(self.dispatch, name, input, cwd=self.cwd, on_output=on_output)
        try:
            if inspect.iscoroutinefunction(self.dispatch):
                return await cast("Awaitable[ToolOutput]", call())
            # A synchronous dispatcher (a test's stand-in) must not block the event loop.
            return cast("ToolOutput", await trio.to_thread.run_sync(call))
        except Exception as exc:  # a tool bug must not cancel its siblings or kill the turn
            return ToolOutput(content=f"tool {name} failed: {exc!r}", is_error=True)

    async def _dispatch_batch(
        self, tool_uses: Sequence[ToolUseBlock], c: _Counters
    ) -> ExitReason | None:
        """Run one batch (R9). Returns a block-limit reason, CONVERGENCE_SIGNAL, or None."""
        n = len(tool_uses)
        slots: list[ToolOutput | None] = [None] * n
        inputs: list[dict[str, Any]] = [b.input or {} for b in tool_uses]
        blocked = [False] * n
        parallel = n > 1 and all(self.effect(b.name) is ToolEffect.PURE for b in tool_uses)
        signal = False

        async def post(i: int) -> None:
            nonlocal signal
            out = slots[i]
            assert out is not None
            self.display.tool_result(tool_uses[i].name, out.content, is_error=out.is_error)
            result = await self.hooks.post_tool_use(
                tool=tool_uses[i].name,
                input=inputs[i],
                result=out.content,
                is_error=out.is_error,
                tool_iterations=c.tool_iterations,
            )
            if isinstance(result, Signal):
                self.display.info(f"convergence signal: {result.signal}: {result.reason}")
                signal = True

        async def guard_each(on_allowed: Callable[[int], Awaitable[None]]) -> ExitReason | None:
            """Guards in tool_use order (R9); stops at the block that trips a limit."""
            for i, block in enumerate(tool_uses):
                allowed, message = await self._guard(block, c)
                if allowed is None:
                    slots[i] = ToolOutput(content=message, is_error=True)
                    blocked[i] = True
                    limit = block_limit(c.consecutive_blocks, c.total_blocks)
                    if limit is not None:
                        return limit
                    continue
                inputs[i] = allowed
                await on_allowed(i)
            return None

        async def run(i: int, *, stream: bool) -> None:
            slots[i] = await self._run_tool(tool_uses[i].name, inputs[i], stream=stream)

        if parallel:
            # Each tool starts as soon as its guards allow it; the nursery joins them all,
            # also when a later block abandons the batch (nothing is left detached).
            async with trio.open_nursery() as nursery:

                async def start(i: int) -> None:
                    nursery.start_soon(functools.partial(run, i, stream=False))

                tripped = await guard_each(start)
            if tripped is None:
                for i in range(n):
                    if not blocked[i]:
                        await post(i)
        else:

            async def run_and_post(i: int) -> None:
                await run(i, stream=True)
                await post(i)

            tripped = await guard_each(run_and_post)

        if tripped is not None:
            # No tool_results for an abandoned batch: drop the assistant message that asked.
            self.display.warn(f"stopping: {tripped.value.replace('_', ' ')} reached")
            self.conversation.pop()
            return tripped
        results: list[ContentBlock] = []
        for block, out in zip(tool_uses, slots, strict=True):
            assert out is not None, "every slot is filled in a batch that was not abandoned"
            results.append(
                ToolResultBlock(tool_use_id=block.id, content=out.content, is_error=out.is_error)
            )
        self._push(Message(role="user", content=results))
        return ExitReason.CONVERGENCE_SIGNAL if signal else None
