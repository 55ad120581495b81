"""The turn loop with a scripted model (the network fake) and scripted hook decisions.

The model and the hook pipeline are the loop's two I/O edges; both are replaced here by
in-memory fakes so every branch of the loop can be driven exactly. The real API client, real
tools and real hook processes are exercised end to end in tests/e2e.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from forgeflare.agent import (
    CONTINUE_PROMPT,
    APIStatusError,
    Message,
    MessagesRequest,
    ScriptedModel,
    ScriptedResponse,
    StopReason,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    text_response,
    tool_use_response,
)
from forgeflare.agent._turn import (
    MAX_STOP_CONTINUATIONS,
    MAX_TOOL_ITERATIONS,
    TurnLoop,
    _is_interrupt,
    block_limit,
)
from forgeflare.agent.tools import ToolEffect, ToolOutput, tool_effect
from forgeflare.hooks import (
    Allow,
    Block,
    Blocked,
    Continue,
    ExitReason,
    PostToolResult,
    PreToolResult,
    Signal,
)

text = text_response
tools = tool_use_response


class ScriptedHooks:
    """A pipeline whose decisions come from functions; records every call."""

    def __init__(
        self,
        pre: Callable[[str, dict[str, Any]], PreToolResult] | None = None,
        post: Callable[[str, dict[str, Any]], PostToolResult] | None = None,
        stop: Callable[[ExitReason], str | Blocked | None] | None = None,
    ) -> None:
        self.pre = pre or (lambda tool, inp: Allow(inp))
        self.post = post or (lambda tool, inp: Continue())
        self.stop_fn = stop or (lambda reason: None)
        self.calls: list[tuple[str, Any]] = []

    async def execution_start(self, *, prompt: str) -> None:
        self.calls.append(("execution_start", prompt))

    async def step_start(self, *, step: int) -> None:
        self.calls.append(("step_start", step))

    async def step_end(self, *, step: int, stop_reason: str) -> None:
        self.calls.append(("step_end", stop_reason))

    async def pre_tool_use(
        self, *, tool: str, input: dict[str, Any], tool_iterations: int
    ) -> PreToolResult:
        self.calls.append(("pre", (tool, dict(input), tool_iterations)))
        return self.pre(tool, input)

    async def post_tool_use(
        self, *, tool: str, input: dict[str, Any], result: str, is_error: bool, tool_iterations: int
    ) -> PostToolResult:
        self.calls.append(("post", (tool, dict(input), result, is_error, tool_iterations)))
        return self.post(tool, input)

    async def stop(
        self, *, reason: ExitReason, tool_iterations: int, total_tokens: int
    ) -> str | Blocked | None:
        self.calls.append(("stop", (reason, tool_iterations, total_tokens)))
        return self.stop_fn(reason)

    async def agent_failed(self, *, error: BaseException, reason: str) -> None:
        self.calls.append(("agent_failed", (reason, error)))

    def named(self, name: str) -> list[Any]:
        return [args for n, args in self.calls if n == name]


class RecordingDispatch:
    def __init__(self, fn: Callable[[str, dict[str, Any]], ToolOutput] | None = None) -> None:
        self.fn = fn or (lambda name, inp: ToolOutput(content=f"{name} ok {inp}"))
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.lock = threading.Lock()

    def __call__(
        self, name: str, input: dict[str, Any] | None, *, cwd: Path, on_output: Any = None
    ) -> ToolOutput:
        with self.lock:
            self.calls.append((name, dict(input or {})))
        return self.fn(name, input or {})


def make_loop(
    model: ScriptedModel,
    *,
    hooks: ScriptedHooks | None = None,
    dispatch: RecordingDispatch | None = None,
    tmp_path: Path,
) -> TurnLoop:
    return TurnLoop(
        model_client=model,
        model="m",
        max_tokens=100,
        system="sys",
        tools=[],
        cwd=tmp_path,
        hooks=hooks or ScriptedHooks(),
        dispatch=dispatch or RecordingDispatch(),
    )


def results_of(message: Message) -> list[ToolResultBlock]:
    return [b for b in message.content if isinstance(b, ToolResultBlock)]


async def test_end_turn(tmp_path: Path) -> None:
    model = ScriptedModel([text("done")])
    hooks = ScriptedHooks()
    loop = make_loop(model, hooks=hooks, tmp_path=tmp_path)
    result = await loop.run_turn("task")
    assert result.reason is ExitReason.END_TURN
    assert result.total_tokens == 15
    assert [m.role for m in loop.conversation] == ["user", "assistant"]
    assert hooks.named("stop") == [(ExitReason.END_TURN, 0, 15)]
    assert hooks.named("execution_start") == ["task"]


async def test_tool_round_trip_in_order(tmp_path: Path) -> None:
    model = ScriptedModel(
        [tools(("Bash", {"command": "a"}), ("Edit", {"file_path": "x"})), text("ok")]
    )
    dispatch = RecordingDispatch()
    loop = make_loop(model, dispatch=dispatch, tmp_path=tmp_path)
    result = await loop.run_turn("task")
    assert result.reason is ExitReason.END_TURN
    assert result.tool_iterations == 1
    assert dispatch.calls == [("Bash", {"command": "a"}), ("Edit", {"file_path": "x"})]
    sent = model.requests[1][-1]
    assert [r.tool_use_id for r in results_of(sent)] == ["toolu_0", "toolu_1"]


async def test_max_tokens_continuation_three_times_then_cap(tmp_path: Path) -> None:
    model = ScriptedModel([text(f"part {i}", StopReason.MAX_TOKENS) for i in range(4)])
    loop = make_loop(model, tmp_path=tmp_path)
    result = await loop.run_turn("task")
    assert result.reason is ExitReason.CONTINUATION_CAP
    assert len(model.requests) == 4
    prompts = [
        b.text
        for m in loop.conversation
        if m.role == "user"
        for b in m.content
        if isinstance(b, TextBlock)
    ]
    assert prompts == ["task"] + [CONTINUE_PROMPT] * 3


@pytest.mark.parametrize("count", [0, 1, 2])
async def test_max_tokens_continuation_then_end(tmp_path: Path, count: int) -> None:
    script: list[ScriptedResponse] = [text(f"p{i}", StopReason.MAX_TOKENS) for i in range(count)]
    model = ScriptedModel([*script, text("end")])
    loop = make_loop(model, tmp_path=tmp_path)
    result = await loop.run_turn("task")
    assert result.reason is ExitReason.END_TURN
    assert len(model.requests) == count + 1


async def test_max_tokens_tool_use_dispatched_and_null_input_dropped(tmp_path: Path) -> None:
    model = ScriptedModel(
        [
            tools(("Read", {"file_path": "a"}), ("Bash", None), stop=StopReason.MAX_TOKENS),
            text("ok"),
        ]
    )
    dispatch = RecordingDispatch()
    loop = make_loop(model, dispatch=dispatch, tmp_path=tmp_path)
    result = await loop.run_turn("task")
    assert result.reason is ExitReason.END_TURN
    assert dispatch.calls == [("Read", {"file_path": "a"})]
    assistant = loop.conversation[1]
    assert [b.id for b in assistant.content if isinstance(b, ToolUseBlock)] == ["toolu_0"]


async def test_max_tokens_only_null_tool_use_breaks(tmp_path: Path) -> None:
    model = ScriptedModel([tools(("Bash", None), stop=StopReason.MAX_TOKENS)])
    loop = make_loop(model, tmp_path=tmp_path)
    result = await loop.run_turn("task")
    assert result.reason is ExitReason.CONTINUATION_CAP
    assert isinstance(loop.conversation[-1].content[0], TextBlock)


async def test_iteration_ceiling(tmp_path: Path) -> None:
    model = ScriptedModel(lambda n: tools(("Read", {"file_path": str(n)})))
    hooks = ScriptedHooks()
    loop = make_loop(model, hooks=hooks, tmp_path=tmp_path)
    result = await loop.run_turn("task")
    assert result.reason is ExitReason.ITERATION_LIMIT
    assert result.tool_iterations == MAX_TOOL_ITERATIONS
    assert len(model.requests) == MAX_TOOL_ITERATIONS
    # every batch saw its own per-batch counter
    assert [args[2] for args in hooks.named("pre")] == list(range(MAX_TOOL_ITERATIONS))


async def test_permanent_api_error_recovers(tmp_path: Path) -> None:
    err = APIStatusError("API returned 400: bad", status=400, body="bad")
    model = ScriptedModel([tools(("Bash", {"command": "x"})), err])
    hooks = ScriptedHooks()
    loop = make_loop(model, hooks=hooks, tmp_path=tmp_path)
    result = await loop.run_turn("task")
    assert result.reason is ExitReason.API_ERROR
    assert result.error
    # the failed tool_results and the orphaned tool_use are gone; the task prompt remains
    assert [m.role for m in loop.conversation] == ["user"]
    model.responses = [*model.responses, text("fine")]  # type: ignore[misc]
    again = await loop.run_turn("try again")
    assert again.reason is ExitReason.END_TURN
    roles = [m.role for m in model.requests[-1]]
    assert roles == ["user"]  # merged: alternation kept


async def test_pure_batch_runs_concurrently(tmp_path: Path) -> None:
    barrier = threading.Barrier(3, timeout=20)

    def wait_for_siblings(name: str, inp: dict[str, Any]) -> ToolOutput:
        barrier.wait()  # only returns once all three tools have started
        return ToolOutput(content=f"{inp['file_path']}")

    model = ScriptedModel(
        [tools(*[("Read", {"file_path": p}) for p in ("a", "b", "c")]), text("ok")]
    )
    loop = make_loop(model, dispatch=RecordingDispatch(wait_for_siblings), tmp_path=tmp_path)
    result = await loop.run_turn("task")
    assert result.reason is ExitReason.END_TURN
    assert [r.content for r in results_of(model.requests[1][-1])] == ["a", "b", "c"]


async def test_mixed_batch_is_sequential(tmp_path: Path) -> None:
    events: list[str] = []
    lock = threading.Lock()

    def record(name: str, inp: dict[str, Any]) -> ToolOutput:
        with lock:
            events.append(f"start {name}")
        with lock:
            events.append(f"end {name}")
        return ToolOutput(content="ok")

    model = ScriptedModel(
        [
            tools(
                ("Read", {"file_path": "a"}),
                ("Edit", {"file_path": "b"}),
                ("Grep", {"pattern": "x"}),
            ),
            text("ok"),
        ]
    )
    loop = make_loop(model, dispatch=RecordingDispatch(record), tmp_path=tmp_path)
    await loop.run_turn("task")
    assert events == ["start Read", "end Read", "start Edit", "end Edit", "start Grep", "end Grep"]
    assert tool_effect("Read") is ToolEffect.PURE
    assert tool_effect("Edit") is ToolEffect.MUTATING


async def test_tool_exception_is_an_error_result_and_siblings_run(tmp_path: Path) -> None:
    def boom(name: str, inp: dict[str, Any]) -> ToolOutput:
        if inp["file_path"] == "b":
            raise RuntimeError("kaput")
        return ToolOutput(content=inp["file_path"])

    model = ScriptedModel([tools(*[("Read", {"file_path": p}) for p in "abc"]), text("ok")])
    loop = make_loop(model, dispatch=RecordingDispatch(boom), tmp_path=tmp_path)
    await loop.run_turn("task")
    res = results_of(model.requests[1][-1])
    assert [r.is_error for r in res] == [False, True, False]
    assert "kaput" in res[1].content


def block_all(tool: str, inp: dict[str, Any]) -> PreToolResult:
    return Block(message="blocked by guard.sh: no", blocked_by="guard.sh", reason="no")


@pytest.mark.parametrize("tool", ["Bash", "Read"])  # sequential and parallel paths
async def test_three_consecutive_blocks_abandon_batch(tmp_path: Path, tool: str) -> None:
    model = ScriptedModel([tools(*[(tool, {"command": str(i)}) for i in range(4)])])
    hooks = ScriptedHooks(pre=block_all)
    dispatch = RecordingDispatch()
    loop = make_loop(model, hooks=hooks, dispatch=dispatch, tmp_path=tmp_path)
    result = await loop.run_turn("task")
    assert result.reason is ExitReason.BLOCK_LIMIT_CONSECUTIVE
    assert result.tool_iterations == 0  # the aborted batch is not counted
    assert len(hooks.named("pre")) == 3  # the fourth tool is never evaluated
    assert dispatch.calls == []
    assert len(model.requests) == 1
    assert [m.role for m in loop.conversation] == ["user"]  # assistant popped, no results
    assert hooks.named("post") == []
    assert hooks.named("stop")[0][0] is ExitReason.BLOCK_LIMIT_CONSECUTIVE


async def test_alternating_blocks_trip_total(tmp_path: Path) -> None:
    model = ScriptedModel(lambda n: tools(("Bash", {"command": "rm"}), ("Bash", {"command": "ls"})))
    hooks = ScriptedHooks(
        pre=lambda tool, inp: block_all(tool, inp) if inp["command"] == "rm" else Allow(inp)
    )
    loop = make_loop(model, hooks=hooks, tmp_path=tmp_path)
    result = await loop.run_turn("task")
    assert result.reason is ExitReason.BLOCK_LIMIT_TOTAL
    # batches 1..9 complete (one block each); the 10th block trips in batch 10
    assert result.tool_iterations == 9
    assert len(model.requests) == 10


async def test_consecutive_resets_on_allowed_dispatch(tmp_path: Path) -> None:
    pattern = iter([True, True, False, True, True, False])
    model = ScriptedModel(
        lambda n: (
            tools(*[("Bash", {"command": str(i)}) for i in range(3)]) if n < 2 else text("done")
        )
    )
    hooks = ScriptedHooks(
        pre=lambda tool, inp: block_all(tool, inp) if next(pattern) else Allow(inp)
    )
    loop = make_loop(model, hooks=hooks, tmp_path=tmp_path)
    result = await loop.run_turn("task")
    assert result.reason is ExitReason.END_TURN
    assert result.tool_iterations == 2


async def test_signal_breaks_after_batch(tmp_path: Path) -> None:
    model = ScriptedModel([tools(("Bash", {"command": "test"}), ("Bash", {"command": "more"}))])
    hooks = ScriptedHooks(
        post=lambda tool, inp: (
            Signal("converged", "green") if inp["command"] == "test" else Continue()
        )
    )
    dispatch = RecordingDispatch()
    loop = make_loop(model, hooks=hooks, dispatch=dispatch, tmp_path=tmp_path)
    result = await loop.run_turn("task")
    assert result.reason is ExitReason.CONVERGENCE_SIGNAL
    assert len(dispatch.calls) == 2  # the tool after the signal still ran
    assert len(model.requests) == 1  # and no further API request
    assert result.tool_iterations == 1
    last = loop.conversation[-1]
    assert last.role == "user"
    assert len(results_of(last)) == 2


@pytest.mark.parametrize("tool", ["Bash", "Read"])
async def test_block_limit_beats_signal(tmp_path: Path, tool: str) -> None:
    model = ScriptedModel([tools(*[(tool, {"command": str(i)}) for i in range(4)])])
    hooks = ScriptedHooks(
        pre=lambda t, inp: Allow(inp) if inp["command"] == "0" else block_all(t, inp),
        post=lambda t, inp: Signal("converged", "x"),
    )
    loop = make_loop(model, hooks=hooks, tmp_path=tmp_path)
    result = await loop.run_turn("task")
    assert result.reason is ExitReason.BLOCK_LIMIT_CONSECUTIVE
    assert [m.role for m in loop.conversation] == ["user"]


async def test_parallel_slots_keep_order_and_skip_post_for_blocked(tmp_path: Path) -> None:
    model = ScriptedModel([tools(*[("Read", {"file_path": p}) for p in "abc"]), text("ok")])
    hooks = ScriptedHooks(
        pre=lambda t, inp: block_all(t, inp) if inp["file_path"] == "a" else Allow(inp)
    )
    dispatch = RecordingDispatch(lambda name, inp: ToolOutput(content=inp["file_path"]))
    loop = make_loop(model, hooks=hooks, dispatch=dispatch, tmp_path=tmp_path)
    await loop.run_turn("task")
    res = results_of(model.requests[1][-1])
    assert [(r.content, r.is_error) for r in res] == [
        ("blocked by guard.sh: no", True),
        ("b", False),
        ("c", False),
    ]
    assert [args[1]["file_path"] for args in hooks.named("post")] == ["b", "c"]


async def test_updated_input_reaches_the_tool(tmp_path: Path) -> None:
    model = ScriptedModel([tools(("Bash", {"command": "rm -rf build"})), text("ok")])
    hooks = ScriptedHooks(pre=lambda t, inp: Allow({"command": "echo safe"}))
    dispatch = RecordingDispatch()
    loop = make_loop(model, hooks=hooks, dispatch=dispatch, tmp_path=tmp_path)
    await loop.run_turn("task")
    assert dispatch.calls == [("Bash", {"command": "echo safe"})]
    assert hooks.named("post")[0][1] == {"command": "echo safe"}


async def test_stop_hook_continue_is_capped(tmp_path: Path) -> None:
    model = ScriptedModel(lambda n: text(f"answer {n}"))
    hooks = ScriptedHooks(stop=lambda reason: "keep going")
    loop = make_loop(model, hooks=hooks, tmp_path=tmp_path)
    result = await loop.run_turn("task")
    assert result.reason is ExitReason.END_TURN
    assert len(model.requests) == 1 + MAX_STOP_CONTINUATIONS
    assert model.requests[1][-1] == Message.user_text("keep going")


async def test_stop_hook_question_ends_the_turn_with_it(tmp_path: Path) -> None:
    model = ScriptedModel(lambda n: text(f"answer {n}"))
    hooks = ScriptedHooks(stop=lambda reason: Blocked("v1 or v2?"))
    loop = make_loop(model, hooks=hooks, tmp_path=tmp_path)
    result = await loop.run_turn("task")
    assert (result.reason, result.question) == (ExitReason.END_TURN, "v1 or v2?")
    assert len(model.requests) == 1  # no continuation
    assert hooks.named("agent_failed") == []


async def test_counters_reset_per_turn(tmp_path: Path) -> None:
    model = ScriptedModel(
        [
            tools(("Bash", {"command": "a"})),
            text("one"),
            tools(("Bash", {"command": "b"})),
            text("two"),
        ]
    )
    hooks = ScriptedHooks()
    loop = make_loop(model, hooks=hooks, tmp_path=tmp_path)
    first = await loop.run_turn("task one")
    second = await loop.run_turn("task two")
    assert (first.tool_iterations, second.tool_iterations) == (1, 1)
    assert [args[2] for args in hooks.named("pre")] == [0, 0]


def test_block_limit_table() -> None:
    assert block_limit(0, 0) is None
    assert block_limit(2, 9) is None
    assert block_limit(3, 3) is ExitReason.BLOCK_LIMIT_CONSECUTIVE
    assert block_limit(3, 10) is ExitReason.BLOCK_LIMIT_CONSECUTIVE
    assert block_limit(1, 10) is ExitReason.BLOCK_LIMIT_TOTAL


@pytest.mark.parametrize(
    ("exc", "interrupt"),
    [
        (KeyboardInterrupt(), True),
        (BaseExceptionGroup("g", [KeyboardInterrupt()]), True),
        (
            BaseExceptionGroup(
                "g", [KeyboardInterrupt(), BaseExceptionGroup("h", [KeyboardInterrupt()])]
            ),
            True,
        ),
        (RuntimeError("x"), False),
        (BaseExceptionGroup("g", [KeyboardInterrupt(), RuntimeError("x")]), False),
    ],
)
def test_an_interrupt_is_told_apart_from_an_internal_error(
    exc: BaseException, interrupt: bool
) -> None:
    assert _is_interrupt(exc) is interrupt


async def test_scripted_model_says_when_its_script_runs_out() -> None:
    model = ScriptedModel([text("only")])
    request = MessagesRequest(model="m", max_tokens=10, messages=[])
    assert await model.send(request) == text("only")
    with pytest.raises(LookupError, match="no response 2"):
        await model.send(request)
    assert len(model.requests) == 2
