"""The evidence rules: what claims completion, a gate failure's signature, progress and stall."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forgeflare._evidence import (
    GateRun,
    Measures,
    Progress,
    claim_by,
    failure_signature,
    gate_tail,
    judge_progress,
    rejection_text,
    stall_streak,
    stall_warning,
)

PYTEST_RED = "tests/a.py F.\nFAILED tests/a.py::test_x - assert 1 == 2\n1 failed in 0.31s\n"


@pytest.mark.parametrize(
    ("signal", "reason", "plan_done", "expected"),
    [
        (True, None, True, "tag"),
        (False, "convergence_signal", True, "signal"),
        (False, "end_turn", True, "plan"),
        (False, "end_turn", False, None),
    ],
)
def test_what_claims_completion(
    signal: bool, reason: str | None, plan_done: bool, expected: str | None
) -> None:
    assert claim_by(signal_complete=signal, stop_reason=reason, plan_done=plan_done) == expected


def test_a_failure_signature_ignores_timings_and_keeps_test_names() -> None:
    again = PYTEST_RED.replace("0.31s", "0.52s")
    assert failure_signature(PYTEST_RED, 1) == failure_signature(again, 1)
    assert failure_signature(PYTEST_RED, 1) == "failing: tests/a.py::test_x"
    other = PYTEST_RED.replace("test_x", "test_y")
    assert failure_signature(other, 1) != failure_signature(PYTEST_RED, 1)
    assert failure_signature("took 12ms at 0xdeadbeef\nerror: boom", 2) == failure_signature(
        "took 97ms at 0xcafe\nerror: boom", 2
    )


RED = failure_signature(PYTEST_RED, 1)


@pytest.mark.parametrize(
    ("before", "after", "made", "words"),
    [
        (Measures(plan_unchecked=2), Measures(plan_unchecked=1), True, "plan box checked"),
        (Measures(plan_unchecked=2, gate=RED), Measures(plan_unchecked=2, gate=RED), False, "same"),
        (Measures(gate=RED), Measures(gate="failing: other"), True, "changed"),
        (Measures(gate=RED), Measures(gate=""), True, "passes"),
        (Measures(gate=RED), Measures(gate=RED, commits=3, tree="t2"), False, "same gate"),
        (
            Measures(plan_unchecked=1),
            Measures(plan_unchecked=1, commits=2, tree="t"),
            False,
            "open",
        ),
        (Measures(), Measures(commits=1, tree="t2"), True, "new commits"),
        (Measures(), Measures(commits=1, tree="t0"), False, "undo"),
        (Measures(), Measures(commits=1, tree=None), True, "new commits"),
        (Measures(), Measures(), False, "no commits"),
    ],
)
def test_progress_table(before: Measures, after: Measures, made: bool, words: str) -> None:
    progress = judge_progress(before, after, seen_trees=frozenset({"t0"}))
    assert progress.made is made
    assert words in progress.why


@given(st.lists(st.booleans(), max_size=30))
def test_the_stall_streak_counts_the_iterations_since_the_last_progress(made: list[bool]) -> None:
    streak = 0
    for m in made:
        streak = stall_streak(streak, Progress(m, ""))
    tail = 0
    for m in reversed(made):
        if m:
            break
        tail += 1
    assert streak == tail


@given(st.integers(0, 10), st.integers(0, 10))
def test_the_warning_comes_once_just_before_the_limit(streak: int, limit: int) -> None:
    text = stall_warning(streak, limit, "the same gate failures")
    assert (text is not None) == (limit > 1 and streak == limit - 1)
    if text:
        assert "the same gate failures" in text
        assert "not moving" in text


@given(st.text(max_size=3000))
def test_a_gate_tail_is_bounded_and_from_the_end(output: str) -> None:
    tail = gate_tail(output)
    assert len(tail) <= 4000
    assert len(tail.splitlines()) <= 30


def test_the_rejection_names_the_gate_its_exit_and_tail() -> None:
    text = rejection_text(by="tag", rejected_by="gate", gate=GateRun("make test", 2, PYTEST_RED))
    assert "`make test` exited 2" in text
    assert "FAILED tests/a.py::test_x" in text
    reviewed = rejection_text(
        by="plan", rejected_by="reviewer", gate=None, reasons=("r1",), missing=("m1",)
    )
    assert "- r1" in reviewed
    assert "- m1" in reviewed


@pytest.mark.parametrize(
    ("no_progress", "stall_after", "plan_left", "expected"),
    [
        (3, 3, 1, "stalled"),
        (2, 3, 1, "continue"),
        (5, 0, 1, "continue"),  # 0: off
        (3, 3, 0, "complete"),  # a completion wins
    ],
)
def test_decide_finishes_stalled(
    no_progress: int, stall_after: int, plan_left: int, expected: str
) -> None:
    from datetime import UTC, datetime

    from forgeflare.supervisor.evidence import (
        FinishType,
        IterationFacts,
        IterationOutcome,
        Limits,
        decide,
    )

    facts = IterationFacts(
        outcome=IterationOutcome(plan_unchecked=plan_left, git_changed=True),
        limits=Limits(stall_after=stall_after),
        now=datetime.now(UTC),
        no_progress=no_progress,
        stall_why="the same gate failures (failing: a::b)",
    )
    verdict = decide(facts)
    assert verdict.label == expected
    if expected == "stalled":
        assert FinishType.STALLED.exit_code == 19
        assert "failing: a::b" in (verdict.action.reason or "")  # type: ignore[union-attr]


def test_finish_settings_read_sizes_and_name_a_bad_one(tmp_path: Path) -> None:
    from forgeflare._errors import ConfigError
    from forgeflare.supervisor import load_config

    cfg = tmp_path / ".fresher" / "config.toml"
    cfg.parent.mkdir()
    cfg.write_text(
        "[finish]\nreviewer = 'm'\nreviewer_max_diff = '20KiB'\n[limits]\nstall_after = 0\n"
    )
    loaded = load_config(tmp_path, env={}).config
    assert loaded.finish.reviewer_max_diff == 20 * 1024
    assert loaded.limits.stall_after == 0
    with pytest.raises(ConfigError, match="FRESHER_FINISH_REVIEWER_MAX_DIFF=lots"):
        load_config(tmp_path, env={"FRESHER_FINISH_REVIEWER_MAX_DIFF": "lots"})
    with pytest.raises(ConfigError, match="FRESHER_STALL_AFTER=-1"):
        load_config(tmp_path, env={"FRESHER_STALL_AFTER": "-1"})
