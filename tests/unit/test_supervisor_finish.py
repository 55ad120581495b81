"""The pure finish decision: exhaustive tables and properties."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forgeflare.supervisor._finish import (
    FINISH_EXIT_CODES,
    Continue,
    FinishType,
    IterationOutcome,
    Limits,
    Streaks,
    check_limits,
    count_unchecked,
    decide,
    is_error,
)

_NO_STREAKS = Streaks()

REASONS = [
    None,
    "end_turn",
    "convergence_signal",
    "api_error",
    "iteration_limit",
    "continuation_cap",
    "block_limit_consecutive",
    "block_limit_total",
]


def run(
    outcome: IterationOutcome,
    *,
    streaks: Streaks = _NO_STREAKS,
    iteration: int = 1,
    elapsed: float = 0.0,
    **limits: object,
) -> tuple[Streaks, object]:
    return decide(
        outcome=outcome,
        streaks=streaks,
        iteration=iteration,
        elapsed=elapsed,
        limits=Limits(**limits),  # type: ignore[arg-type]
    )


def test_exit_codes_are_distinct_and_documented() -> None:
    codes = list(FINISH_EXIT_CODES.values())
    assert len(set(codes)) == len(codes) == len(FinishType)
    assert FinishType.COMPLETE.exit_code == 0
    assert FinishType.MANUAL.exit_code == 130
    assert all(
        c not in {0, 1, 2, 130}
        for f, c in FINISH_EXIT_CODES.items()
        if f not in {FinishType.COMPLETE, FinishType.MANUAL}
    )


# (final_reason, exit_code, timed_out, final_expected) -> is_error
ERROR_TABLE = [
    ("end_turn", 0, False, True, False),
    ("convergence_signal", 0, False, True, False),
    ("iteration_limit", 4, False, True, False),
    ("continuation_cap", 5, False, True, False),
    ("block_limit_total", 6, False, True, False),
    ("block_limit_consecutive", 6, False, True, False),
    ("api_error", 3, False, True, True),
    ("api_error", 0, False, False, True),
    (None, 0, False, True, True),  # forgeflare run always writes final: none means a crash
    (None, 0, False, False, False),  # Claude Code writes none: exit status decides
    (None, 1, False, False, True),
    (None, 1, False, True, True),
    (None, None, False, False, True),  # killed by a signal
    ("end_turn", None, False, True, True),
    (None, None, True, False, True),  # iteration timeout
    ("end_turn", 0, True, True, True),
]


@pytest.mark.parametrize(("reason", "code", "timed_out", "expected", "error"), ERROR_TABLE)
def test_is_error_table(
    reason: str | None, code: int | None, timed_out: bool, expected: bool, error: bool
) -> None:
    outcome = IterationOutcome(
        exit_code=code, timed_out=timed_out, final_reason=reason, final_expected=expected
    )
    assert is_error(outcome) is error


def test_skipped_is_never_error() -> None:
    assert not is_error(IterationOutcome(skipped=True, exit_code=None, timed_out=True))


# One row per branch of decide: outcome, streaks before, limits, iteration -> decision
DECIDE_TABLE: list[tuple[str, IterationOutcome, Streaks, dict[str, object], int, object]] = [
    (
        "convergence",
        IterationOutcome(final_reason="convergence_signal"),
        Streaks(),
        {},
        1,
        FinishType.COMPLETE,
    ),
    (
        "plan done",
        IterationOutcome(final_reason="end_turn", plan_unchecked=0),
        Streaks(),
        {},
        1,
        FinishType.COMPLETE,
    ),
    (
        "plan done, planning mode",
        IterationOutcome(mode="planning", final_reason="end_turn", plan_unchecked=0),
        Streaks(),
        {},
        1,
        Continue(),
    ),
    (
        "no plan file",
        IterationOutcome(final_reason="end_turn", plan_unchecked=None),
        Streaks(),
        {},
        1,
        Continue(),
    ),
    (
        "plan open",
        IterationOutcome(final_reason="end_turn", plan_unchecked=2),
        Streaks(),
        {},
        1,
        Continue(),
    ),
    (
        "complete on last iteration",
        IterationOutcome(final_reason="convergence_signal"),
        Streaks(),
        {"max_iterations": 3},
        3,
        FinishType.COMPLETE,
    ),
    (
        "plan done on last iteration",
        IterationOutcome(plan_unchecked=0),
        Streaks(),
        {"max_iterations": 3},
        3,
        FinishType.COMPLETE,
    ),
    (
        "complete past runtime",
        IterationOutcome(final_reason="convergence_signal"),
        Streaks(),
        {"max_runtime": 1.0},
        1,
        FinishType.COMPLETE,
    ),
    (
        "max iterations",
        IterationOutcome(final_reason="end_turn"),
        Streaks(),
        {"max_iterations": 3},
        3,
        FinishType.MAX_ITERATIONS,
    ),
    (
        "under max",
        IterationOutcome(final_reason="end_turn"),
        Streaks(),
        {"max_iterations": 3},
        2,
        Continue(),
    ),
    (
        "unlimited",
        IterationOutcome(final_reason="end_turn"),
        Streaks(),
        {"max_iterations": 0},
        1000,
        Continue(),
    ),
    (
        "runtime",
        IterationOutcome(final_reason="end_turn"),
        Streaks(),
        {"max_runtime": 1.0},
        1,
        FinishType.TIMEOUT,
    ),
    ("first error", IterationOutcome(exit_code=1), Streaks(), {}, 1, Continue()),
    ("third error", IterationOutcome(exit_code=1), Streaks(errors=2), {}, 3, FinishType.ERROR),
    (
        "api error streak",
        IterationOutcome(exit_code=3, final_reason="api_error"),
        Streaks(errors=2),
        {},
        3,
        FinishType.ERROR,
    ),
    (
        "error beats max",
        IterationOutcome(exit_code=None),
        Streaks(errors=2),
        {"max_iterations": 3},
        3,
        FinishType.ERROR,
    ),
    (
        "error limit 1",
        IterationOutcome(exit_code=1),
        Streaks(),
        {"max_consecutive_errors": 1},
        1,
        FinishType.ERROR,
    ),
    (
        "blocked once",
        IterationOutcome(exit_code=6, final_reason="block_limit_total"),
        Streaks(),
        {},
        1,
        Continue(),
    ),
    (
        "stuck",
        IterationOutcome(exit_code=6, final_reason="block_limit_consecutive"),
        Streaks(blocked=2),
        {},
        3,
        FinishType.STUCK,
    ),
    ("skip", IterationOutcome(skipped=True), Streaks(), {}, 1, Continue()),
    ("skips", IterationOutcome(skipped=True), Streaks(skips=2), {}, 3, FinishType.SKIPS),
    (
        "skip with plan done",
        IterationOutcome(skipped=True, plan_unchecked=0),
        Streaks(),
        {},
        1,
        FinishType.COMPLETE,
    ),
    (
        "skip on last iteration",
        IterationOutcome(skipped=True),
        Streaks(),
        {"max_iterations": 1},
        1,
        FinishType.MAX_ITERATIONS,
    ),
    (
        "no changes",
        IterationOutcome(final_reason="end_turn", git_changed=False),
        Streaks(),
        {},
        1,
        FinishType.NO_CHANGES,
    ),
    (
        "changes",
        IterationOutcome(final_reason="end_turn", git_changed=True),
        Streaks(),
        {},
        1,
        Continue(),
    ),
    (
        "not git",
        IterationOutcome(final_reason="end_turn", git_changed=None),
        Streaks(),
        {},
        1,
        Continue(),
    ),
    (
        "smart off",
        IterationOutcome(final_reason="end_turn", git_changed=False),
        Streaks(),
        {"smart_termination": False},
        1,
        Continue(),
    ),
    (
        "no changes but error",
        IterationOutcome(exit_code=1, git_changed=False),
        Streaks(),
        {},
        1,
        Continue(),
    ),
    (
        "no changes beats max",
        IterationOutcome(final_reason="end_turn", git_changed=False),
        Streaks(),
        {"max_iterations": 1},
        1,
        FinishType.NO_CHANGES,
    ),
    ("no final, custom agent ok", IterationOutcome(exit_code=0), Streaks(), {}, 1, Continue()),
    (
        "iteration limit is normal",
        IterationOutcome(exit_code=4, final_reason="iteration_limit"),
        Streaks(errors=2),
        {},
        3,
        Continue(),
    ),
]


@pytest.mark.parametrize(
    ("outcome", "streaks", "limits", "iteration", "expected"),
    [row[1:] for row in DECIDE_TABLE],
    ids=[row[0] for row in DECIDE_TABLE],
)
def test_decide_table(
    outcome: IterationOutcome,
    streaks: Streaks,
    limits: dict[str, object],
    iteration: int,
    expected: object,
) -> None:
    _new, decision = run(
        outcome,
        streaks=streaks,
        iteration=iteration,
        elapsed=2.0 if "max_runtime" in limits else 0.0,
        **limits,
    )
    assert decision == expected


def test_streaks_reset_and_carry() -> None:
    new, _ = run(IterationOutcome(final_reason="end_turn"), streaks=Streaks(errors=2, blocked=1))
    assert new == Streaks()
    new, _ = run(IterationOutcome(skipped=True), streaks=Streaks(errors=2, blocked=1, skips=1))
    assert new == Streaks(errors=2, blocked=1, skips=2)
    new, _ = run(IterationOutcome(exit_code=1), streaks=Streaks(skips=2))
    assert new == Streaks(errors=1)


def test_check_limits() -> None:
    assert check_limits(iterations_done=0, elapsed=0, limits=Limits()) is None
    assert check_limits(iterations_done=2, elapsed=0, limits=Limits(max_iterations=2)) == (
        FinishType.MAX_ITERATIONS
    )
    assert check_limits(iterations_done=1, elapsed=5, limits=Limits(max_runtime=5)) == (
        FinishType.TIMEOUT
    )


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("", 0),
        ("- [ ] a\n- [x] b\n", 1),
        ("  * [ ] nested\n+ [ ] plus\n- [X] done\n", 2),
        ("text - [ ] not a task\n", 0),
        ("-[ ] no space\n", 0),
        ("\t- [ ] tab\n", 1),
    ],
)
def test_count_unchecked(text: str, count: int) -> None:
    assert count_unchecked(text) == count


outcomes = st.builds(
    IterationOutcome,
    mode=st.sampled_from(["planning", "building"]),
    skipped=st.booleans(),
    exit_code=st.one_of(st.none(), st.integers(0, 255)),
    timed_out=st.booleans(),
    final_reason=st.sampled_from(REASONS),
    final_expected=st.booleans(),
    plan_unchecked=st.one_of(st.none(), st.integers(0, 5)),
    git_changed=st.one_of(st.none(), st.booleans()),
)
streaks_st = st.builds(
    Streaks, errors=st.integers(0, 5), blocked=st.integers(0, 5), skips=st.integers(0, 5)
)
limits_st = st.builds(
    Limits,
    max_iterations=st.integers(0, 10),
    max_runtime=st.sampled_from([0.0, 10.0]),
    smart_termination=st.booleans(),
    max_consecutive_errors=st.integers(1, 5),
    stuck_after=st.integers(1, 5),
    max_skips=st.integers(1, 5),
)


@given(outcomes, streaks_st, limits_st, st.integers(1, 12), st.floats(0, 20))
def test_decide_properties(
    outcome: IterationOutcome, streaks: Streaks, limits: Limits, iteration: int, elapsed: float
) -> None:
    new, decision = decide(
        outcome=outcome, streaks=streaks, iteration=iteration, elapsed=elapsed, limits=limits
    )
    converged = not outcome.skipped and outcome.final_reason == "convergence_signal"
    plan_done = outcome.mode == "building" and outcome.plan_unchecked == 0
    # Completing is complete, whatever the limits (also on the last allowed iteration).
    if converged or plan_done:
        assert decision == FinishType.COMPLETE
    else:
        assert decision != FinishType.COMPLETE
    # The decision never invents a manual stop or a hook abort.
    assert decision not in {FinishType.MANUAL, FinishType.HOOK_ABORT}
    # Reaching the iteration limit always ends the loop.
    if limits.max_iterations and iteration >= limits.max_iterations:
        assert decision != Continue()
    # Never past the limit without a reason of its own.
    if decision == FinishType.MAX_ITERATIONS:
        assert limits.max_iterations
        assert iteration >= limits.max_iterations
    # no_changes needs a git repo that saw no change, smart termination and a clean iteration.
    if decision == FinishType.NO_CHANGES:
        assert limits.smart_termination
        assert outcome.git_changed is False
        assert not is_error(outcome)
        assert not outcome.skipped
    # Streaks: an error grows the error streak, anything else (but a skip) resets it.
    if is_error(outcome):
        assert new.errors == streaks.errors + 1
    elif not outcome.skipped:
        assert new.errors == 0
    if decision == FinishType.ERROR:
        assert new.errors >= limits.max_consecutive_errors


@given(outcomes, streaks_st, limits_st, st.integers(1, 12))
def test_stale_final_never_counts(
    outcome: IterationOutcome, streaks: Streaks, limits: Limits, iteration: int
) -> None:
    """A stale convergence.json reaches decide as final_reason None: it cannot complete."""
    stale = IterationOutcome(
        mode=outcome.mode,
        skipped=outcome.skipped,
        exit_code=outcome.exit_code,
        timed_out=outcome.timed_out,
        final_reason=None,
        final_expected=outcome.final_expected,
        plan_unchecked=None if outcome.mode == "building" else outcome.plan_unchecked,
        git_changed=outcome.git_changed,
    )
    _, decision = decide(
        outcome=stale, streaks=streaks, iteration=iteration, elapsed=0.0, limits=limits
    )
    assert decision != FinishType.COMPLETE
