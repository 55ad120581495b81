"""The reviewer's pure parts: what it is shown (a bounded diff, the gate's tail, the claim) and
how its verdict is read."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forgeflare._evidence import GateRun
from forgeflare.supervisor.evidence import ReviewInput, review_prompt, verdict_of


def _input(**changes: object) -> ReviewInput:
    fields: dict[str, object] = {
        "model": "m",
        "task": "the task",
        "plan": "- [x] one",
        "diff": "+a\n",
        "diff_stat": " a.py | 1 +",
        "max_diff": 1000,
        "gate": GateRun("make test", 0, "ok"),
        "final_message": "done",
        "claim": "tag",
    }
    fields.update(changes)
    return ReviewInput(**fields)  # type: ignore[arg-type]


def test_the_reviewer_sees_a_bounded_diff_and_the_stat_of_what_was_cut() -> None:
    given_ = ReviewInput(
        model="m",
        task="the task",
        plan="- [x] one",
        diff="+" * 5000,
        diff_stat=" a.py | 5000 +",
        max_diff=1000,
        gate=GateRun("make test", 0, "ok"),
        final_message="done",
        claim="tag",
    )
    text = review_prompt(given_)
    assert "+" * 1000 in text
    assert "+" * 1001 not in text
    assert "cut at 1000 of 5000 bytes" in text
    assert "a.py | 5000 +" in text


@pytest.mark.parametrize(
    ("content", "error"),
    [
        ([], "no `verdict`"),
        ([{"type": "text", "text": "yes"}], "no `verdict`"),
        ([{"type": "tool_use", "name": "verdict", "input": {"complete": "x"}}], "malformed"),
        ([{"type": "tool_use", "name": "verdict", "input": None}], "malformed"),
    ],
)
def test_a_bad_verdict_is_an_error(content: list[dict[str, object]], error: str) -> None:
    with pytest.raises(ValueError, match=error):
        verdict_of(content)


def test_a_good_verdict() -> None:
    block = {
        "type": "tool_use",
        "name": "verdict",
        "input": {"complete": True, "reasons": ["ok"], "missing": []},
    }
    assert verdict_of([block]).complete is True


def test_the_prompt_says_what_is_missing_and_names_the_claim() -> None:
    text = review_prompt(_input(plan="  ", gate=None, claim="plan"))
    assert "(no plan file)" in text
    assert "No gate is set." in text
    assert "it claims completion by plan" in text
    assert "cut at" not in text  # a small diff is shown whole


def test_the_gate_s_exit_and_the_end_of_its_output_are_shown() -> None:
    output = "".join(f"line {n}\n" for n in range(100))
    text = review_prompt(_input(gate=GateRun("pytest", 1, output)))
    assert "The gate `pytest` exited 1." in text
    assert "line 99" in text
    assert "line 10\n" not in text


def test_only_the_end_of_a_long_final_message_is_shown() -> None:
    text = review_prompt(_input(final_message="A" * 100 + "b" * 4000))
    assert "b" * 4000 in text
    assert "A" not in text.split("# The agent's last output")[1]


@given(st.text(max_size=300), st.integers(0, 400))
def test_the_diff_shown_is_never_over_the_cap(diff: str, cap: int) -> None:
    text = review_prompt(_input(diff=diff, max_diff=cap))
    shown = text.split("```diff\n", 1)[1].split("\n```", 1)[0]
    assert len(shown.encode()) <= max(cap, 0) or shown == diff
    assert ("cut at" in text) is (len(diff.encode()) > cap)


def test_the_first_verdict_call_counts_and_missing_defaults_to_empty() -> None:
    verdict = verdict_of(
        [
            {"type": "text", "text": "thinking"},
            {"type": "tool_use", "name": "other", "input": {}},
            {"type": "tool_use", "name": "verdict", "input": {"complete": False, "reasons": []}},
        ]
    )
    assert (verdict.complete, verdict.reasons, verdict.missing) == (False, [], [])
    with pytest.raises(ValueError, match=r"malformed verdict \(reasons: "):
        verdict_of([{"type": "tool_use", "name": "verdict", "input": {"complete": True}}])
