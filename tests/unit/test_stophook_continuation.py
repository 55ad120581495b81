"""The continuation that blocks a Stop: its text, and how it reaches Claude Code and back."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forgeflare._completion import Mode, blocked_hint, completion_hint
from forgeflare.stophook._continuation import continuation, continue_output, continued


@pytest.mark.parametrize("mode", list(Mode))
def test_the_iteration_line_then_how_to_finish_and_ask_then_the_prompt(mode: Mode) -> None:
    text = continuation(2, 5, mode.value, "  Fix the tests\n")
    line, hints, blank, prompt = text.split("\n")
    assert line.startswith("[ITERATION 2/5] Continue working on the task.")
    assert hints == f"{completion_hint(mode)} {blocked_hint()}"
    assert (blank, prompt) == ("", "Fix the tests")


def test_no_prompt_no_trailing_blank_lines() -> None:
    assert continuation(1, 3, "loop", "  \n").count("\n") == 1


@given(st.text())
def test_the_output_carries_the_reason_back(reason: str) -> None:
    out = continue_output(reason)
    assert out.endswith("\n")
    assert continued(out) == reason


@pytest.mark.parametrize(
    "stdout",
    [
        "",
        "   \n",
        "not json",
        "[1, 2]",
        json.dumps({"decision": "block", "reason": "old shape"}),
        json.dumps({"hookSpecificOutput": {"additionalContext": 7}}),
        json.dumps({"hookSpecificOutput": "text"}),
    ],
    ids=["empty", "blank", "not-json", "a-list", "decision-block", "not-text", "not-an-object"],
)
def test_anything_else_lets_the_stop_happen(stdout: str) -> None:
    assert continued(stdout) is None
