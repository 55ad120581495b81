"""The turn loop's contract with the hook layer: exit codes by reason, the typed answers, what
each event accepts, and the pipeline of an agent with no hooks."""

from __future__ import annotations

from typing import Any

import pytest

from forgeflare.hooks import (
    ANSWERS,
    EXIT_CODES,
    Allow,
    Block,
    Blocked,
    Continue,
    ExitReason,
    NoHooks,
    Signal,
    Stop,
    TurnFailure,
)


def test_every_exit_reason_has_a_code_and_only_success_is_zero() -> None:
    assert set(EXIT_CODES) == set(ExitReason)
    zero = {reason for reason, code in EXIT_CODES.items() if code == 0}
    assert zero == {ExitReason.END_TURN, ExitReason.CONVERGENCE_SIGNAL}
    # 1 is a crash, 2 bad usage, 130/143 signals: no reason may look like one of them
    assert not set(EXIT_CODES.values()) & {1, 2, 130, 143}
    failures = [code for code in EXIT_CODES.values() if code]
    both_block_limits = 1
    assert len(set(failures)) == len(failures) - both_block_limits


@pytest.mark.parametrize(
    ("answer", "runs_with"),
    [(Allow(), {}), (Allow({"command": "ls"}), {"command": "ls"}), (Allow({}), {})],
)
def test_allow_carries_the_input_the_tool_runs_with(
    answer: Allow, runs_with: dict[str, Any]
) -> None:
    assert answer.input == runs_with


def test_what_each_event_accepts() -> None:
    assert ANSWERS["PreToolUse"] == (Allow, Block)
    assert ANSWERS["PostToolUse"] == (Continue, Signal)
    assert ANSWERS["Stop"] == (Continue, Stop, Blocked)
    accepted = {kind for kinds in ANSWERS.values() for kind in kinds}
    assert accepted == {Allow, Block, Blocked, Continue, Signal, Stop}
    assert Block in ANSWERS["PreToolUse"]
    assert Block not in ANSWERS["Stop"]  # a Stop hook cannot block a tool


def test_a_turn_failure_names_its_reason() -> None:
    failure = TurnFailure(ExitReason.BUDGET)
    assert failure.reason is ExitReason.BUDGET
    assert str(failure) == "the turn ended with budget"


async def test_no_hooks_lets_everything_through() -> None:
    hooks = NoHooks()
    assert await hooks.execution_start(prompt="p") is None
    assert await hooks.step_start(step=1) is None
    assert await hooks.step_end(step=1, stop_reason="end_turn") is None
    allowed = await hooks.pre_tool_use(tool="Bash", input={"command": "ls"}, tool_iterations=0)
    assert allowed == Allow({"command": "ls"})
    assert allowed.input == {"command": "ls"}
    after = await hooks.post_tool_use(
        tool="Bash", input={}, result="ok", is_error=False, tool_iterations=1
    )
    assert after == Continue()
    assert await hooks.stop(reason=ExitReason.END_TURN, tool_iterations=1, total_tokens=5) is None
    assert await hooks.agent_failed(error=RuntimeError("x"), reason="internal_error") is None
