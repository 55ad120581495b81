"""The stop-hook transition table, row by row, and properties over random states and texts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgeflare.stophook import (
    SIGNALS,
    STALE_AFTER,
    Corrupt,
    Event,
    Frame,
    LoopRecord,
    Mode,
    Phase,
    block_reason,
    push_frame,
    transition,
)

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
DONE = "All tests pass.\n<loop-done>COMPLETE</loop-done>\n"


def record(*frames: Frame, event: Event = Event.STATE, age_s: float = 60) -> LoopRecord:
    return LoopRecord(
        event=event, run_id="r1", updated_at=NOW - timedelta(seconds=age_s), stack=frames
    )


def frame(iter: int = 1, max: int = 5, mode: Mode = Mode.LOOP, prompt: str = "") -> Frame:
    return Frame(mode=mode, iter=iter, max=max, prompt=prompt)


# --- the transition table, one test per row ---------------------------------------------------


def test_idle_to_active_on_loop_start() -> None:
    started = push_frame(None, frame(), NOW, "new")
    assert started == LoopRecord(Event.STATE, "new", NOW, (frame(),))
    # ... and the next stop attempt of that state is ACTIVE and blocks.
    _, decision = transition(started, "working", NOW)
    assert decision.phase is Phase.ACTIVE
    assert decision.block


def test_active_to_active_iterates_without_signal() -> None:
    state = record(frame(iter=2, max=5, prompt="Fix it"))
    new, decision = transition(state, "still working", NOW)
    assert decision.phase is Phase.ACTIVE
    assert decision.block
    assert decision.exit_code == 2
    assert new == LoopRecord(Event.STATE, "r1", NOW, (frame(iter=3, max=5, prompt="Fix it"),))
    assert decision.reason == (
        "[ITERATION 3/5] Continue working on the task. Check your progress and either "
        "complete the task or keep iterating.\n\nFix it"
    )


def test_active_to_completing_to_idle_on_signal() -> None:
    new, decision = transition(record(frame(iter=2)), DONE, NOW)
    assert decision.phase is Phase.COMPLETING
    assert not decision.block
    assert decision.exit_code == 0
    assert new is None  # stack empty after the pop: state removed (DONE)
    assert "COMPLETE" in decision.note


def test_completing_to_active_when_an_outer_loop_remains() -> None:
    outer = frame(iter=3, max=10, mode=Mode.GRIND, prompt="grind")
    inner = frame(iter=2, max=4, mode=Mode.ISSUE)
    new, decision = transition(record(outer, inner), "<issue-complete>DONE</issue-complete>", NOW)
    assert decision.phase is Phase.COMPLETING
    assert not decision.block
    assert new == LoopRecord(Event.STATE, "r1", NOW, (outer,))
    # The outer loop resumes on the next invocation, with its own counter and prompt.
    assert new is not None
    newer, decision = transition(new, "next issue", NOW)
    assert decision.block
    assert decision.reason.startswith("[ITERATION 4/10]")
    assert decision.reason.endswith("\n\ngrind")
    assert newer == LoopRecord(Event.STATE, "r1", NOW, (frame(4, 10, Mode.GRIND, "grind"),))


def test_active_to_stuck_at_max_iterations() -> None:
    new, decision = transition(record(frame(iter=5, max=5)), "not done", NOW)
    assert decision.phase is Phase.STUCK
    assert not decision.block
    assert new is None
    assert "MAX_ITERATIONS" in decision.note


def test_active_to_stuck_when_stale() -> None:
    state = record(frame(iter=1, max=5), age_s=STALE_AFTER.total_seconds() + 1)
    new, decision = transition(state, "not done", NOW)
    assert decision.phase is Phase.STUCK
    assert not decision.block
    assert new is None
    assert "stale" in decision.note


def test_exactly_at_the_staleness_limit_is_still_fresh() -> None:
    state = record(frame(), age_s=STALE_AFTER.total_seconds())
    assert transition(state, "x", NOW)[1].block


def test_active_to_aborted_on_corruption() -> None:
    new, decision = transition(Corrupt("iter 'x' is not a number"), "x", NOW)
    assert decision.phase is Phase.ABORTED
    assert not decision.block
    assert new is None
    assert "corrupted" in decision.note


def test_active_to_aborted_on_abort_event() -> None:
    new, decision = transition(record(frame(), event=Event.ABORT), "x", NOW)
    assert (new, decision.phase, decision.block) == (None, Phase.ABORTED, False)


# --- around the table --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "state",
    [None, record(), record(frame(), event=Event.DONE), record(event=Event.ABORT)],
    ids=["no-state", "empty-stack", "done-event", "abort-empty"],
)
def test_idle_does_nothing(state: LoopRecord | None) -> None:
    new, decision = transition(state, DONE, NOW)
    assert new == state
    assert (decision.phase, decision.exit_code, decision.note) == (Phase.IDLE, 0, "")


def test_signal_on_the_last_iteration_completes_rather_than_sticks() -> None:
    new, decision = transition(record(frame(iter=5, max=5)), DONE, NOW)
    assert decision.phase is Phase.COMPLETING
    assert new is None


def test_signal_of_another_mode_does_not_complete() -> None:
    state = record(frame(mode=Mode.GRIND))
    assert transition(state, DONE, NOW)[1].block
    assert not transition(state, "<grind-done>MAX_ISSUES</grind-done>", NOW)[1].block


@pytest.mark.parametrize("mode", list(Mode))
def test_every_signal_of_every_mode_completes(mode: Mode) -> None:
    for signal in SIGNALS[mode]:
        assert transition(record(frame(mode=mode)), signal, NOW)[1].phase is Phase.COMPLETING


def test_unreadable_text_never_blocks_but_still_cleans_up() -> None:
    state = record(frame(iter=2))
    new, decision = transition(state, None, NOW)
    assert (new, decision.phase, decision.block) == (state, Phase.ACTIVE, False)
    assert transition(record(frame(iter=5, max=5)), None, NOW)[0] is None
    assert transition(record(frame(), age_s=9000), None, NOW)[0] is None


def test_block_reason_without_prompt_is_exactly_the_spec_line() -> None:
    assert block_reason(frame(iter=2, max=9)) == (
        "[ITERATION 2/9] Continue working on the task. Check your progress and either "
        "complete the task or keep iterating."
    )


def test_push_nests_on_a_live_stack_and_replaces_a_dead_one() -> None:
    live = record(frame(mode=Mode.GRIND))
    pushed = push_frame(live, frame(mode=Mode.ISSUE), NOW, "other")
    assert pushed.run_id == "r1"
    assert [f.mode for f in pushed.stack] == [Mode.GRIND, Mode.ISSUE]
    for dead in (record(frame(), age_s=9000), record(frame(), event=Event.DONE), Corrupt("x")):
        fresh = push_frame(dead, frame(), NOW, "other")
        assert (fresh.run_id, len(fresh.stack)) == ("other", 1)


# --- properties -------------------------------------------------------------------------------

frames = st.builds(
    Frame,
    mode=st.sampled_from(list(Mode)),
    iter=st.integers(min_value=0, max_value=50),
    max=st.integers(min_value=1, max_value=50),
    prompt=st.text(max_size=30),
)
records = st.builds(
    LoopRecord,
    event=st.sampled_from(list(Event)),
    run_id=st.text(max_size=8),
    updated_at=st.datetimes(
        min_value=datetime(2025, 1, 1), max_value=datetime(2027, 1, 1), timezones=st.just(UTC)
    ),
    stack=st.lists(frames, max_size=4).map(tuple),
)
states = st.one_of(st.none(), st.builds(Corrupt, st.text(max_size=20)), records)
all_signals = [s for mode in Mode for s in SIGNALS[mode]]
texts = st.one_of(
    st.none(),
    st.text(max_size=200),
    st.lists(
        st.one_of(st.text(max_size=40), st.sampled_from(all_signals), st.just("```")), max_size=8
    ).map("\n".join),
)


@settings(max_examples=50)
@given(states, texts)
def test_no_exception_and_blocks_only_from_active(
    state: LoopRecord | Corrupt | None, text: str | None
) -> None:
    _, decision = transition(state, text, NOW)
    assert decision.exit_code in (0, 2)
    if decision.block:
        assert decision.phase is Phase.ACTIVE
        assert isinstance(state, LoopRecord)
        assert state.event is Event.STATE
        assert NOW - state.updated_at <= STALE_AFTER
        assert decision.reason.startswith("[ITERATION ")
    else:
        assert decision.reason == ""


@settings(max_examples=50)
@given(states, texts)
def test_iteration_never_exceeds_max(state: LoopRecord | Corrupt | None, text: str | None) -> None:
    new, decision = transition(state, text, NOW)
    if isinstance(new, LoopRecord) and new != state:
        for f in new.stack:
            assert f.iter <= f.max or (isinstance(state, LoopRecord) and f in state.stack)
        if decision.block:
            top = new.stack[-1]
            assert top.iter <= top.max
            assert isinstance(state, LoopRecord)
            assert top.iter == state.stack[-1].iter + 1


@settings(max_examples=50)
@given(records, st.text(max_size=100))
def test_blocking_changes_only_the_top_counter(state: LoopRecord, text: str) -> None:
    new, decision = transition(state, text, NOW)
    if decision.block:
        assert isinstance(new, LoopRecord)
        assert new.stack[:-1] == state.stack[:-1]
        assert new.updated_at == NOW
        assert (new.event, new.run_id) == (state.event, state.run_id)


@settings(max_examples=50)
@given(records, texts)
def test_a_stopped_loop_shrinks_or_disappears(state: LoopRecord, text: str | None) -> None:
    new, decision = transition(state, text, NOW)
    if decision.phase in (Phase.STUCK, Phase.ABORTED):
        assert new is None
    if decision.phase is Phase.COMPLETING:
        assert new is None or len(new.stack) == len(state.stack) - 1
