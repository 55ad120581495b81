"""The pipeline's aggregation rules, as properties over sequences of Python hook answers.

Python hooks start no process, so any sequence of answers can be tried quickly against a
small model of the rules: first block wins, allow-with-update chains, every signal recorded
and the first returned, the first deciding Stop hook wins. Both the typed answers and the
deprecated ``HookOutcome`` (through its adapter) are tried.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
import trio
from hypothesis import given, settings
from hypothesis import strategies as st

from forgeflare.disk import ConvergenceState, read_convergence
from forgeflare.hooks import (
    Allow,
    Block,
    Continue,
    ExitReason,
    HookDispatcher,
    HookOutcome,
    Signal,
    Stop,
    convergence_recorder,
    make_hook,
)

# An answer: None, an outcome, or "raise".
answers = st.one_of(
    st.none(),
    st.just("raise"),
    st.builds(
        HookOutcome,
        st.sampled_from(["deny", "stop", "continue"]),
        reason=st.one_of(st.none(), st.text(max_size=5)),
    ),
    st.builds(
        HookOutcome,
        st.just("allow"),
        updated_input=st.one_of(
            st.none(), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2)
        ),
    ),
)


def _hooks(event: str, plan: list[Any], calls: list[int]) -> list[Any]:
    made = []
    for i, answer in enumerate(plan):

        def fn(_i: int = i, _answer: Any = answer, **kwargs: Any) -> Any:
            calls.append(_i)
            if _answer == "raise":
                raise RuntimeError(f"hook {_i} broke")
            return _answer

        made.append(make_hook(fn, event, name=f"h{i}"))
    return made


def _dispatcher(root: Path, hooks: list[Any], logs: list[str]) -> HookDispatcher:
    return HookDispatcher(
        project_dir=root,
        python_hooks=hooks,
        builtins=[convergence_recorder(root / "convergence.json", logs.append)],
        log=logs.append,
    )


_TOOL_INPUT = {"command": "ls"}


def _pre_tool_use(plan: list[Any]) -> tuple[Any, list[int]]:
    """What ``plan``'s PreToolUse hooks decide for a Bash call with ``_TOOL_INPUT``, and the
    indexes of the hooks that were asked."""
    calls: list[int] = []
    hooks = _hooks("PreToolUse", plan, calls)
    result = trio.run(
        lambda: _dispatcher(Path("."), hooks, []).pre_tool_use(
            tool="Bash", input=_TOOL_INPUT, tool_iterations=0
        )
    )
    return result, calls


def _post_tool_use(plan: list[Any]) -> tuple[Any, list[int], list[str], ConvergenceState | None]:
    """What ``plan``'s PostToolUse hooks answer for a Bash call that succeeded, the hooks
    asked, the lines logged and the convergence file written (in a scratch folder)."""
    calls: list[int] = []
    logs: list[str] = []
    hooks = _hooks("PostToolUse", plan, calls)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        result = trio.run(
            lambda: _dispatcher(root, hooks, logs).post_tool_use(
                tool="Bash", input={}, result="ok", is_error=False, tool_iterations=5
            )
        )
        state = read_convergence(root / "convergence.json")
    return result, calls, logs, state


def _stop(plan: list[Any], calls: list[int]) -> Any:
    """The prompt ``plan``'s Stop hooks continue with after an end_turn (``None``: stop)."""
    hooks = _hooks("Stop", plan, calls)
    return trio.run(
        lambda: _dispatcher(Path("."), hooks, []).stop(
            reason=ExitReason.END_TURN, tool_iterations=0, total_tokens=0
        )
    )


# The tables mix in the deprecated HookOutcome on purpose; its warning is tested elsewhere.
_ADAPTER = pytest.mark.filterwarnings("ignore:HookOutcome is deprecated:DeprecationWarning")


@_ADAPTER
@settings(max_examples=60, deadline=None)
@given(st.lists(answers, max_size=6))
def test_pre_tool_use_first_deny_wins_and_updates_chain(plan: list[Any]) -> None:
    result, calls = _pre_tool_use(plan)
    current: dict[str, Any] = _TOOL_INPUT
    for i, answer in enumerate(plan):
        if answer == "raise" or (
            isinstance(answer, HookOutcome) and answer.decision in ("deny", "stop")
        ):
            assert isinstance(result, Block)
            assert result.blocked_by == f"h{i}"
            assert calls == list(range(i + 1))  # later hooks are not asked
            if answer == "raise":
                assert result.message.endswith("(tool blocked by default)")
            else:
                assert result.message == f"blocked by h{i}: {answer.reason or 'denied'}"
            return
        if isinstance(answer, HookOutcome) and answer.updated_input is not None:
            current = answer.updated_input
    assert result == Allow(current)
    assert calls == list(range(len(plan)))


@settings(max_examples=40, deadline=None)
@_ADAPTER
@given(st.lists(answers, max_size=5))
def test_post_tool_use_records_every_signal_returns_first(plan: list[Any]) -> None:
    result, calls, logs, state = _post_tool_use(plan)
    expected = [
        (a.reason or f"h{i}", a.reason or "")
        for i, a in enumerate(plan)
        if isinstance(a, HookOutcome) and a.decision == "stop"
    ]
    assert calls == list(range(len(plan)))  # all hooks run, failures included
    if not expected:
        assert result == Continue()
        assert state is None  # no signal, no write
    else:
        assert result == Signal(signal=expected[0][0], reason=expected[0][1])
        assert state is not None
        assert [(o.signal, o.reason) for o in state.observations] == expected
        assert {o.tool_iterations for o in state.observations} == {5}
    assert sum("raised RuntimeError" in line for line in logs) == plan.count("raise")


@settings(max_examples=60, deadline=None)
@_ADAPTER
@given(st.lists(answers, max_size=6))
def test_stop_first_deciding_hook_wins(plan: list[Any]) -> None:
    calls: list[int] = []
    prompt = _stop(plan, calls)
    for i, answer in enumerate(plan):
        if isinstance(answer, HookOutcome) and answer.decision == "continue":
            assert prompt == (answer.reason or "Continue.")
            assert calls == list(range(i + 1))
            return
        if isinstance(answer, HookOutcome) and answer.decision == "stop":
            assert prompt is None
            assert calls == list(range(i + 1))
            return
    assert prompt is None
    assert calls == list(range(len(plan)))


# -- the typed answers: each means one thing, a wrong one for the event is a failure ----------

typed = st.one_of(
    st.none(),
    st.just("raise"),
    st.builds(Allow, st.one_of(st.none(), st.dictionaries(st.text(max_size=3), st.integers()))),
    st.builds(Block, st.text(max_size=5)),
    st.builds(Signal, st.text(min_size=1, max_size=5), st.text(max_size=5)),
    st.builds(Continue, st.one_of(st.none(), st.text(min_size=1, max_size=5))),
    st.builds(Stop, st.text(max_size=5)),
)


@settings(max_examples=80, deadline=None)
@given(st.lists(typed, max_size=6))
def test_typed_pre_tool_use(plan: list[Any]) -> None:
    result, calls = _pre_tool_use(plan)
    current: dict[str, Any] = _TOOL_INPUT
    for i, answer in enumerate(plan):
        if answer is None or isinstance(answer, Allow):
            if isinstance(answer, Allow) and answer.updated_input is not None:
                current = answer.updated_input
            continue
        assert isinstance(result, Block)  # a Block, an exception or a wrong type: fail-closed
        assert result.blocked_by == f"h{i}"
        assert calls == list(range(i + 1))
        if isinstance(answer, Block):
            assert result.message == f"blocked by h{i}: {answer.reason}"
        elif answer != "raise":
            assert result.message == (
                f"hook failed: h{i} returned {type(answer).__name__}, expected Allow, Block "
                "or None (tool blocked by default)"
            )
        return
    assert result == Allow(current)
    assert calls == list(range(len(plan)))


@settings(max_examples=60, deadline=None)
@given(st.lists(typed, max_size=5))
def test_typed_post_tool_use(plan: list[Any]) -> None:
    result, calls, logs, state = _post_tool_use(plan)
    signals = [a for a in plan if isinstance(a, Signal)]
    assert calls == list(range(len(plan)))
    assert result == (signals[0] if signals else Continue())
    recorded = [] if state is None else [Signal(o.signal, o.reason) for o in state.observations]
    assert recorded == signals
    wrong = [a for a in plan if isinstance(a, Allow | Block | Stop)]
    assert sum("expected Continue, Signal or None" in line for line in logs) == len(wrong)


@settings(max_examples=60, deadline=None)
@given(st.lists(typed, max_size=6))
def test_typed_stop(plan: list[Any]) -> None:
    calls: list[int] = []
    prompt = _stop(plan, calls)
    for i, answer in enumerate(plan):
        if isinstance(answer, Continue | Stop):
            assert prompt == (
                (answer.prompt or "Continue.") if isinstance(answer, Continue) else None
            )
            assert calls == list(range(i + 1))
            return
    assert prompt is None
    assert calls == list(range(len(plan)))
