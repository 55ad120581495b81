"""The pure finish decision: exhaustive tables and properties."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forgeflare._completion import count_unchecked
from forgeflare.supervisor.evidence import WaitFor, WaitStreaks
from forgeflare.supervisor.evidence._finish import (
    FINISH_EXIT_CODES,
    Between,
    ContinueLoop,
    Finish,
    FinishType,
    IterationFacts,
    IterationOutcome,
    Limits,
    RunGate,
    Skip,
    Streaks,
    agent_time,
    before_iteration,
    check_limits,
    decide,
    finish_rule,
    hook_verdict,
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
    """The loop's one entry point, reduced to (streaks, finish type or ContinueLoop())."""
    verdict = decide(
        IterationFacts(
            outcome=outcome,
            limits=Limits(**limits),  # type: ignore[arg-type]
            counted=iteration - 1,
            elapsed=elapsed,
            streaks=streaks,
        )
    )
    action = verdict.action
    return verdict.streaks, action.type if isinstance(action, Finish) else action


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


# the report's outcome -> is_error (how a backend judges its agent is its report's business)
ERROR_TABLE = [
    ("ok", False),
    ("agent_error", True),
    ("api_error", True),
    ("killed", True),
    ("timed_out", True),
    ("refused", True),
    ("rate_limited", False),
    ("interrupted", False),
    ("budget", False),
]


@pytest.mark.parametrize(("outcome", "error"), ERROR_TABLE)
def test_is_error_table(outcome: str, error: bool) -> None:
    assert is_error(IterationOutcome(outcome=outcome)) is error


def test_skipped_is_never_error() -> None:
    assert not is_error(IterationOutcome(skipped=True, outcome="agent_error"))


# One row per branch of decide: outcome, streaks before, limits, iteration -> decision
DECIDE_TABLE: list[tuple[str, IterationOutcome, Streaks, dict[str, object], int, object]] = [
    (
        "convergence",
        IterationOutcome(stop_reason="convergence_signal"),
        Streaks(),
        {},
        1,
        FinishType.COMPLETE,
    ),
    (
        "plan done",
        IterationOutcome(stop_reason="end_turn", plan_unchecked=0),
        Streaks(),
        {},
        1,
        FinishType.COMPLETE,
    ),
    (
        "plan done, planning mode",
        IterationOutcome(mode="planning", stop_reason="end_turn", plan_unchecked=0),
        Streaks(),
        {},
        1,
        ContinueLoop(),
    ),
    (
        "no plan file",
        IterationOutcome(stop_reason="end_turn", plan_unchecked=None),
        Streaks(),
        {},
        1,
        ContinueLoop(),
    ),
    (
        "plan open",
        IterationOutcome(stop_reason="end_turn", plan_unchecked=2),
        Streaks(),
        {},
        1,
        ContinueLoop(),
    ),
    (
        "complete on last iteration",
        IterationOutcome(stop_reason="convergence_signal"),
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
        IterationOutcome(stop_reason="convergence_signal"),
        Streaks(),
        {"max_runtime": 1.0},
        1,
        FinishType.COMPLETE,
    ),
    (
        "max iterations",
        IterationOutcome(stop_reason="end_turn"),
        Streaks(),
        {"max_iterations": 3},
        3,
        FinishType.MAX_ITERATIONS,
    ),
    (
        "under max",
        IterationOutcome(stop_reason="end_turn"),
        Streaks(),
        {"max_iterations": 3},
        2,
        ContinueLoop(),
    ),
    (
        "unlimited",
        IterationOutcome(stop_reason="end_turn"),
        Streaks(),
        {"max_iterations": 0},
        1000,
        ContinueLoop(),
    ),
    (
        "runtime",
        IterationOutcome(stop_reason="end_turn"),
        Streaks(),
        {"max_runtime": 1.0},
        1,
        FinishType.TIMEOUT,
    ),
    (
        "first error",
        IterationOutcome(outcome="agent_error", exit_code=1),
        Streaks(),
        {},
        1,
        ContinueLoop(),
    ),
    (
        "third error",
        IterationOutcome(outcome="agent_error", exit_code=1),
        Streaks(errors=2),
        {},
        3,
        FinishType.ERROR,
    ),
    (
        "error beats max",
        IterationOutcome(outcome="killed", exit_code=None),
        Streaks(errors=2),
        {"max_iterations": 3},
        3,
        FinishType.ERROR,
    ),
    (
        "error limit 1",
        IterationOutcome(outcome="agent_error", exit_code=1),
        Streaks(),
        {"max_consecutive_errors": 1},
        1,
        FinishType.ERROR,
    ),
    (
        "blocked once",
        IterationOutcome(exit_code=6, stop_reason="block_limit_total"),
        Streaks(),
        {},
        1,
        ContinueLoop(),
    ),
    (
        "stuck",
        IterationOutcome(exit_code=6, stop_reason="block_limit_consecutive"),
        Streaks(blocked=2),
        {},
        3,
        FinishType.STUCK,
    ),
    ("skip", IterationOutcome(skipped=True), Streaks(), {}, 1, ContinueLoop()),
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
        IterationOutcome(stop_reason="end_turn", git_changed=False),
        Streaks(),
        {},
        1,
        FinishType.NO_CHANGES,
    ),
    (
        "changes",
        IterationOutcome(stop_reason="end_turn", git_changed=True),
        Streaks(),
        {},
        1,
        ContinueLoop(),
    ),
    (
        "not git",
        IterationOutcome(stop_reason="end_turn", git_changed=None),
        Streaks(),
        {},
        1,
        ContinueLoop(),
    ),
    (
        "smart off",
        IterationOutcome(stop_reason="end_turn", git_changed=False),
        Streaks(),
        {"smart_termination": False},
        1,
        ContinueLoop(),
    ),
    (
        "no changes but error",
        IterationOutcome(outcome="agent_error", exit_code=1, git_changed=False),
        Streaks(),
        {},
        1,
        ContinueLoop(),
    ),
    (
        "no changes beats max",
        IterationOutcome(stop_reason="end_turn", git_changed=False),
        Streaks(),
        {"max_iterations": 1},
        1,
        FinishType.NO_CHANGES,
    ),
    ("no final, custom agent ok", IterationOutcome(exit_code=0), Streaks(), {}, 1, ContinueLoop()),
    (
        "iteration limit is normal",
        IterationOutcome(exit_code=4, stop_reason="iteration_limit"),
        Streaks(errors=2),
        {},
        3,
        ContinueLoop(),
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
    new, _ = run(IterationOutcome(stop_reason="end_turn"), streaks=Streaks(errors=2, blocked=1))
    assert new == Streaks()
    new, _ = run(IterationOutcome(skipped=True), streaks=Streaks(errors=2, blocked=1, skips=1))
    assert new == Streaks(errors=2, blocked=1, skips=2)
    new, _ = run(IterationOutcome(outcome="agent_error", exit_code=1), streaks=Streaks(skips=2))
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
    stop_reason=st.sampled_from(REASONS),
    outcome=st.sampled_from(["ok", "agent_error", "api_error", "killed", "timed_out", "budget"]),
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
    new, decision = finish_rule(
        outcome=outcome, streaks=streaks, iteration=iteration, elapsed=elapsed, limits=limits
    )
    assert isinstance(decision, FinishType | ContinueLoop)
    converged = not outcome.skipped and outcome.stop_reason == "convergence_signal"
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
        assert decision != ContinueLoop()
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
    """A stale convergence.json never reaches the report: stop_reason None cannot complete."""
    stale = IterationOutcome(
        mode=outcome.mode,
        skipped=outcome.skipped,
        exit_code=outcome.exit_code,
        timed_out=outcome.timed_out,
        stop_reason=None,
        outcome=outcome.outcome,
        plan_unchecked=None if outcome.mode == "building" else outcome.plan_unchecked,
        git_changed=outcome.git_changed,
    )
    _, decision = finish_rule(
        outcome=stale, streaks=streaks, iteration=iteration, elapsed=0.0, limits=limits
    )
    assert decision != FinishType.COMPLETE


# --- the loop's rules beyond the finish rule (one entry point: decide) ---------------------

NOW = datetime(2026, 2, 13, 12, 0, tzinfo=UTC)
ERROR_RUN = IterationOutcome(outcome="agent_error", exit_code=1)
CLEAN_RUN = IterationOutcome(stop_reason="end_turn")
RUNTIME_KILL = IterationOutcome(
    outcome="timed_out", exit_code=None, timed_out=True, runtime_bound=True
)


def facts(outcome: IterationOutcome, **kw: Any) -> IterationFacts:
    limits = kw.pop("limits", Limits())
    return IterationFacts(outcome=outcome, limits=limits, now=NOW, **kw)


# (name, facts, expected label, expected counted, expected pause)
VERDICT_TABLE: list[tuple[str, IterationFacts, str, bool, float]] = [
    # The runtime limit that ended the agent finishes the loop, whatever the streaks say ...
    ("runtime kill", facts(RUNTIME_KILL), "timeout", True, 0.0),
    (
        "runtime kill, no plan",
        facts(replace(RUNTIME_KILL, stop_reason="end_turn", exit_code=0)),
        "timeout",
        True,
        0.0,
    ),
    # ... but not a completion, and not an iteration timeout (that is an error iteration).
    (
        "runtime kill after completing",
        facts(replace(RUNTIME_KILL, stop_reason="convergence_signal")),
        "complete",
        True,
        0.0,
    ),
    (
        "iteration timeout",
        facts(replace(RUNTIME_KILL, runtime_bound=False), limits=Limits(error_pause=0.0)),
        "continue",
        True,
        0.0,
    ),
    ("bound but not killed", facts(replace(CLEAN_RUN, runtime_bound=True)), "continue", True, 0.0),
    # The error pause: after an error iteration that goes on, never after a good one or a finish.
    ("error pause", facts(ERROR_RUN, limits=Limits(error_pause=30.0)), "continue", True, 30.0),
    ("no pause set", facts(ERROR_RUN, limits=Limits(error_pause=0.0)), "continue", True, 0.0),
    ("good: no pause", facts(CLEAN_RUN, limits=Limits(error_pause=30.0)), "continue", True, 0.0),
    (
        "error finish: no pause",
        facts(ERROR_RUN, limits=Limits(error_pause=30.0), streaks=Streaks(errors=2)),
        "error",
        True,
        0.0,
    ),
    # A stop during the iteration wins over everything.
    (
        "stopped",
        facts(replace(CLEAN_RUN, stop_reason="convergence_signal"), stopped=True),
        "manual",
        True,
        0.0,
    ),
    (
        "stopped, rate limited",
        facts(IterationOutcome(outcome="rate_limited"), stopped=True),
        "manual",
        True,
        0.0,
    ),
    # Usage limits and outages wait and do not count; a hard API error is an error.
    ("rate limited", facts(IterationOutcome(outcome="rate_limited")), "limit_wait", False, 0.0),
    (
        "rate limited on the last iteration",
        facts(IterationOutcome(outcome="rate_limited"), limits=Limits(max_iterations=1)),
        "limit_wait",
        False,
        0.0,
    ),
    (
        "outage",
        facts(IterationOutcome(outcome="api_error", transient=True)),
        "outage",
        False,
        0.0,
    ),
    (
        "outage too long",
        facts(
            IterationOutcome(outcome="api_error", transient=True),
            waits=WaitStreaks(outages=5, outage_since=NOW - timedelta(hours=3)),
        ),
        "error",
        True,
        0.0,
    ),
    (
        "hard api error",
        facts(IterationOutcome(outcome="api_error"), limits=Limits(error_pause=5.0)),
        "continue",
        True,
        5.0,
    ),
    (
        "skipped api error never waits",
        facts(IterationOutcome(skipped=True, outcome="rate_limited")),
        "continue",
        True,
        0.0,
    ),
    # The agent ended on the budget.
    ("budget", facts(IterationOutcome(outcome="budget")), "budget", True, 0.0),
    (
        "budget beats errors",
        facts(IterationOutcome(outcome="budget"), streaks=Streaks(errors=5)),
        "budget",
        True,
        0.0,
    ),
    # The gate: complete waits for it; a failed gate goes on; no gate, no wait.
    (
        "gate to run",
        facts(replace(CLEAN_RUN, plan_unchecked=0), limits=Limits(gate=True)),
        "complete",
        True,
        0.0,
    ),
    (
        "gate failed",
        facts(replace(CLEAN_RUN, plan_unchecked=0), limits=Limits(gate=True), gate_passed=False),
        "continue",
        True,
        0.0,
    ),
    (
        "gate passed",
        facts(replace(CLEAN_RUN, plan_unchecked=0), limits=Limits(gate=True), gate_passed=True),
        "complete",
        True,
        0.0,
    ),
]


@pytest.mark.parametrize(
    ("given_facts", "label", "counted", "pause"),
    [row[1:] for row in VERDICT_TABLE],
    ids=[row[0] for row in VERDICT_TABLE],
)
def test_verdict_table(
    given_facts: IterationFacts, label: str, counted: bool, pause: float
) -> None:
    verdict = decide(given_facts)
    assert (verdict.label, verdict.counted, verdict.pause) == (label, counted, pause)


def test_runtime_override_finishes_timeout() -> None:
    verdict = decide(facts(RUNTIME_KILL, streaks=Streaks(errors=0)))
    assert verdict.action == Finish(FinishType.TIMEOUT)
    assert verdict.streaks.errors == 1  # the killed iteration still counts as an error


def test_gate_runs_only_for_a_completion() -> None:
    assert isinstance(
        decide(facts(replace(CLEAN_RUN, plan_unchecked=0), limits=Limits(gate=True))).action,
        RunGate,
    )
    assert decide(facts(CLEAN_RUN, limits=Limits(gate=True))).action == ContinueLoop()
    assert decide(facts(replace(CLEAN_RUN, plan_unchecked=0))).action == Finish(FinishType.COMPLETE)


def test_waits_keep_the_finish_streaks_and_carry_their_own() -> None:
    streaks = Streaks(errors=2, blocked=1)
    limited = decide(facts(IterationOutcome(outcome="rate_limited"), streaks=streaks))
    assert limited.streaks == streaks
    assert limited.waits.limits == 1
    assert isinstance(limited.action, WaitFor)
    after = decide(facts(CLEAN_RUN, waits=limited.waits))
    assert after.waits == WaitStreaks()


def test_rate_limit_wait_uses_the_reset_and_stops_at_max_runtime() -> None:
    resets = NOW + timedelta(minutes=10)
    outcome = IterationOutcome(outcome="rate_limited", resets_at=resets)
    verdict = decide(facts(outcome))
    assert isinstance(verdict.action, WaitFor)
    assert verdict.action.seconds == 600.0
    clipped = decide(facts(outcome, limits=Limits(max_runtime=100.0), elapsed=40.0))
    assert isinstance(clipped.action, WaitFor)
    assert clipped.action.seconds == 60.0


def test_outage_finish_says_why_and_notifies_nothing() -> None:
    verdict = decide(
        facts(
            IterationOutcome(outcome="api_error", transient=True),
            waits=WaitStreaks(outages=3, outage_since=NOW - timedelta(hours=3)),
        )
    )
    assert isinstance(verdict.action, Finish)
    assert verdict.action.type is FinishType.ERROR
    assert verdict.action.reason is not None
    assert "max_outage" in verdict.action.reason
    assert verdict.notify is None


@pytest.mark.parametrize("streaks", [Streaks(), Streaks(errors=2)])
def test_quota_finishes_at_once_saying_what_to_do(streaks: Streaks) -> None:
    verdict = decide(facts(IterationOutcome(outcome="quota"), streaks=streaks))
    assert isinstance(verdict.action, Finish)
    assert verdict.action.type is FinishType.QUOTA
    assert verdict.action.type.exit_code == 21
    assert verdict.label == "quota"
    reason = verdict.action.reason or ""
    assert "billing" in reason
    assert "\n" not in reason
    # even on the last allowed iteration, or with a plan left: waiting cannot add credit
    last = decide(facts(IterationOutcome(outcome="quota"), limits=Limits(max_iterations=1)))
    assert isinstance(last.action, Finish)
    assert last.action.type is FinishType.QUOTA


def test_error_streak_notifies() -> None:
    verdict = decide(facts(ERROR_RUN, streaks=Streaks(errors=2)))
    assert verdict.action == Finish(FinishType.ERROR)
    assert verdict.notify == "error_streak"
    assert decide(facts(ERROR_RUN)).notify is None


# (name, Between, expected)
BEFORE_TABLE: list[tuple[str, Between, object]] = [
    ("nothing", Between(limits=Limits(), counted=0, elapsed=0.0), None),
    ("stopped", Between(limits=Limits(), counted=0, elapsed=0.0, stopped=True), FinishType.MANUAL),
    (
        "stop request",
        Between(limits=Limits(), counted=0, elapsed=0.0, stop_requested=True),
        FinishType.STOPPED,
    ),
    (
        "max iterations",
        Between(limits=Limits(max_iterations=2), counted=2, elapsed=0.0),
        FinishType.MAX_ITERATIONS,
    ),
    (
        "runtime",
        Between(limits=Limits(max_runtime=5.0), counted=0, elapsed=5.0),
        FinishType.TIMEOUT,
    ),
    (
        "budget",
        Between(limits=Limits(max_cost=1.0), counted=0, elapsed=0.0, spent=1.0),
        FinishType.BUDGET,
    ),
    ("budget left", Between(limits=Limits(max_cost=1.0), counted=0, elapsed=0.0, spent=0.5), None),
    ("no budget", Between(limits=Limits(), counted=0, elapsed=0.0, spent=99.0), None),
    (
        "trust",
        Between(limits=Limits(), counted=0, elapsed=0.0, trust_error="changed"),
        FinishType.HOOK_ABORT,
    ),
    (
        "stop beats a stop request",
        Between(limits=Limits(), counted=0, elapsed=0.0, stopped=True, stop_requested=True),
        FinishType.MANUAL,
    ),
    (
        "limit beats budget and trust",
        Between(
            limits=Limits(max_iterations=1, max_cost=1.0),
            counted=1,
            elapsed=0.0,
            spent=2.0,
            trust_error="changed",
        ),
        FinishType.MAX_ITERATIONS,
    ),
    (
        "budget beats trust",
        Between(limits=Limits(max_cost=1.0), counted=0, elapsed=0.0, spent=2.0, trust_error="x"),
        FinishType.BUDGET,
    ),
]


@pytest.mark.parametrize(
    ("between", "expected"), [row[1:] for row in BEFORE_TABLE], ids=[row[0] for row in BEFORE_TABLE]
)
def test_before_iteration_table(between: Between, expected: object) -> None:
    verdict = before_iteration(between)
    if isinstance(verdict, Finish):
        assert verdict.type == expected
    elif isinstance(verdict, WaitFor):
        assert verdict.kind == expected
        assert verdict.seconds == 60.0
    else:
        assert verdict is expected


def test_before_iteration_says_why() -> None:
    budget = before_iteration(Between(limits=Limits(max_cost=2.0), counted=0, elapsed=0, spent=2.5))
    assert budget == Finish(FinishType.BUDGET, "stopped: the budget of $2 is spent ($2.50)")
    trust = before_iteration(Between(limits=Limits(), counted=0, elapsed=0, trust_error="hook x"))
    assert trust == Finish(FinishType.HOOK_ABORT, "stopped: hook x")


@pytest.mark.parametrize(
    ("status", "stopped", "skippable", "expected"),
    [
        ("ok", False, True, None),
        ("missing", False, True, None),
        ("error", False, True, None),
        ("timeout", False, True, None),
        ("warning", False, True, Skip()),
        ("warning", False, False, None),
        ("abort", False, True, Finish(FinishType.HOOK_ABORT)),
        ("abort", False, False, Finish(FinishType.HOOK_ABORT)),
        ("abort", True, True, Finish(FinishType.MANUAL)),
        ("ok", True, False, Finish(FinishType.MANUAL)),
    ],
)
def test_hook_verdict_table(status: str, stopped: bool, skippable: bool, expected: object) -> None:
    assert hook_verdict(status, stopped=stopped, skippable=skippable) == expected


@pytest.mark.parametrize(
    ("iteration_timeout", "max_runtime", "elapsed", "seconds", "runtime_bound"),
    [
        (0.0, 0.0, 0.0, math.inf, False),
        (60.0, 0.0, 0.0, 60.0, False),
        (0.0, 100.0, 30.0, 70.0, True),
        (60.0, 100.0, 30.0, 60.0, False),
        (60.0, 100.0, 50.0, 50.0, True),
        (60.0, 100.0, 150.0, 0.0, True),
    ],
)
def test_agent_time_table(
    iteration_timeout: float,
    max_runtime: float,
    elapsed: float,
    seconds: float,
    runtime_bound: bool,
) -> None:
    limits = Limits(iteration_timeout=iteration_timeout, max_runtime=max_runtime)
    assert agent_time(limits, elapsed) == (seconds, runtime_bound)


wait_outcomes = st.builds(
    IterationOutcome,
    skipped=st.booleans(),
    exit_code=st.one_of(st.none(), st.integers(0, 3)),
    timed_out=st.booleans(),
    stop_reason=st.sampled_from(REASONS),
    plan_unchecked=st.one_of(st.none(), st.integers(0, 2)),
    git_changed=st.one_of(st.none(), st.booleans()),
    outcome=st.sampled_from([None, "ok", "agent_error", "api_error", "rate_limited", "budget"]),
    transient=st.booleans(),
    runtime_bound=st.booleans(),
)


@given(
    wait_outcomes,
    streaks_st,
    limits_st,
    st.integers(0, 12),
    st.booleans(),
    st.one_of(st.none(), st.booleans()),
    st.sampled_from([0.0, 7.0]),
)
def test_verdict_properties(
    outcome: IterationOutcome,
    streaks: Streaks,
    limits: Limits,
    counted: int,
    stopped: bool,
    gate_passed: bool | None,
    pause: float,
) -> None:
    limits = replace(limits, error_pause=pause, gate=gate_passed is not None)
    verdict = decide(
        IterationFacts(
            outcome=outcome,
            limits=limits,
            counted=counted,
            streaks=streaks,
            now=NOW,
            stopped=stopped,
            gate_passed=gate_passed,
        )
    )
    action = verdict.action
    if stopped:
        assert action == Finish(FinishType.MANUAL)
        assert verdict.streaks == streaks
    # Only a wait leaves an iteration uncounted; a wait never changes the finish streaks.
    assert verdict.counted == (not isinstance(action, WaitFor))
    if isinstance(action, WaitFor):
        assert outcome.outcome in ("rate_limited", "api_error")
        assert verdict.streaks == streaks
    # A pause only after an error iteration that goes on.
    if verdict.pause:
        assert action == ContinueLoop()
        assert is_error(outcome)
        assert verdict.pause == pause
    elif action == ContinueLoop() and is_error(outcome):
        assert pause == 0.0
    # A failed gate never completes; the runtime limit that killed the agent never goes on.
    if gate_passed is False:
        assert action != Finish(FinishType.COMPLETE)
    if outcome.runtime_hit and not stopped and not isinstance(action, WaitFor):
        assert action != ContinueLoop()
