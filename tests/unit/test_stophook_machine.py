"""The stop-hook transition table, row by row, and properties over random states and texts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgeflare.stophook import (
    BLOCK_MESSAGE,
    SIGNALS,
    STALE_AFTER,
    Corrupt,
    Event,
    Frame,
    LoopRecord,
    Mode,
    Phase,
    block_reason,
    claimed,
    push_frame,
    record_answer,
    transition,
)
from stophook_support import NOW

DONE = "All tests pass.\n<loop-done>COMPLETE</loop-done>\n"
LOOP_HINT = (
    "To finish, write <loop-done>COMPLETE</loop-done> on its own line, outside code, in the "
    "final message of your turn (its text, not thinking or tool calls). "
    "<loop-done>MAX_ITERATIONS</loop-done> or <loop-done>STUCK</loop-done> also end the loop. "
    "If only a person can decide how to go on, write <loop-done>BLOCKED</loop-done> the same "
    "way, with your question on the lines after it; do not guess."
)

ASKS = "I cannot choose.\n<loop-done>BLOCKED</loop-done>\nWhich API: v1 or v2?\nv2 is in beta."
QUESTION = "Which API: v1 or v2?\nv2 is in beta."


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
    assert decision.exit_code == 0  # the block is said on stdout
    assert new == LoopRecord(Event.STATE, "r1", NOW, (frame(iter=3, max=5, prompt="Fix it"),))
    assert decision.reason == (
        "[ITERATION 3/5] Continue working on the task. Check your progress and either "
        f"complete the task or keep iterating.\n{LOOP_HINT}\n\nFix it"
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
    # The same session goes on with the outer loop: blocked with the outer continuation.
    assert decision.phase is Phase.ACTIVE
    assert decision.block
    assert "inner loop complete" in decision.note
    assert decision.reason.startswith("[ITERATION 4/10]")
    assert "<grind-done>NO_MORE_ISSUES</grind-done>" in decision.reason
    assert decision.reason.endswith("\n\ngrind")
    assert new == LoopRecord(Event.STATE, "r1", NOW, (frame(4, 10, Mode.GRIND, "grind"),))
    assert new is not None
    newer, decision = transition(new, "next issue", NOW)
    assert decision.block
    assert decision.reason.startswith("[ITERATION 5/10]")
    assert newer == LoopRecord(Event.STATE, "r1", NOW, (frame(5, 10, Mode.GRIND, "grind"),))


def test_inner_completing_with_the_outer_at_its_cap_ends_the_stack() -> None:
    outer = frame(iter=10, max=10, mode=Mode.GRIND)
    new, decision = transition(
        record(outer, frame(mode=Mode.ISSUE)), "<issue-complete>DONE</issue-complete>", NOW
    )
    assert (new, decision.phase, decision.block) == (None, Phase.STUCK, False)
    assert "inner loop complete" in decision.note
    assert "MAX_ITERATIONS" in decision.note


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


# --- a question parks the loop (issue 30) -----------------------------------------------------


def parked(iter: int = 2, answer: str = "", session_id: str = "s1") -> Frame:
    return frame(iter=iter, prompt="Fix it")._replace(
        question=QUESTION, answer=answer, session_id=session_id
    )


def test_active_to_blocked_keeps_the_frame_with_its_question() -> None:
    state = record(frame(iter=2, prompt="Fix it"))
    new, decision = transition(state, ASKS, NOW, "s1", judged="msg_9")
    assert (decision.phase, decision.block, decision.exit_code) == (Phase.BLOCKED, False, 0)
    assert new == LoopRecord(
        Event.STATE, "r1", NOW, (parked()._replace(judged="msg_9"),)
    )  # same iteration, claimed by the session, the judged message kept
    assert "the agent asks: Which API: v1 or v2?" in decision.note
    assert "/forgeflare:answer" in decision.note
    assert new is not None
    assert new.stack[-1].blocked


def test_blocked_to_blocked_allows_every_stop_and_changes_nothing() -> None:
    state = record(parked())
    for text in ("Hello!", DONE, ASKS, None, ""):
        new, decision = transition(state, text, NOW, "s1")
        assert new is state
        assert (decision.phase, decision.block) == (Phase.BLOCKED, False)
        assert "waits for an answer" in decision.note


def test_blocked_to_active_once_answered_continues_the_same_iteration() -> None:
    state = record(parked(answer="v2, it is stable enough"))
    new, decision = transition(state, "Answer recorded.", NOW, "s1", judged="msg_10")
    assert (decision.phase, decision.block, decision.exit_code) == (Phase.ACTIVE, True, 0)
    resumed = frame(iter=2, prompt="Fix it")._replace(session_id="s1", judged="msg_10")
    assert new == LoopRecord(Event.STATE, "r1", NOW, (resumed,))
    assert decision.reason == (
        "An earlier iteration of this loop stopped to ask a question; it has been answered."
        f"\n\nQuestion:\n{QUESTION}\n\nAnswer:\nv2, it is stable enough\n\n---\n\n"
        + block_reason(resumed)
    )
    assert BLOCK_MESSAGE.format(n=2, max=5) in decision.reason


def test_an_answer_continues_even_when_the_text_cannot_be_read_or_at_the_cap() -> None:
    at_cap = record(frame(iter=5, max=5)._replace(question="Q?", answer="A."))
    for text in (None, "x", DONE):
        new, decision = transition(at_cap, text, NOW)
        assert decision.block
        assert decision.reason.startswith("An earlier iteration")
        assert new is not None
        assert new.stack[-1].iter == 5


def test_question_on_the_last_iteration_parks_rather_than_sticks() -> None:
    new, decision = transition(record(frame(iter=5, max=5)), ASKS, NOW)
    assert decision.phase is Phase.BLOCKED
    assert new is not None
    assert new.stack[-1].question == QUESTION


def test_completion_wins_over_a_question_in_the_same_message() -> None:
    new, decision = transition(record(frame()), f"{ASKS}\n{DONE}", NOW)
    assert (new, decision.phase) == (None, Phase.COMPLETING)


@pytest.mark.parametrize(
    "text",
    ["```\n<loop-done>BLOCKED</loop-done>\nWhich?\n```", "Write `<loop-done>BLOCKED</loop-done>`"],
    ids=["fenced", "inline-code"],
)
def test_a_quoted_tag_does_not_park(text: str) -> None:
    assert transition(record(frame()), text, NOW)[1].phase is Phase.ACTIVE


def test_a_parked_frame_is_never_stale_and_another_session_passes_by() -> None:
    old = record(parked(), age_s=STALE_AFTER.total_seconds() * 10)
    assert transition(old, "x", NOW, "s1")[1].phase is Phase.BLOCKED
    assert transition(old, "x", NOW, "s2") == (old, transition(None, "x", NOW)[1])
    # ... and starting a new loop nests on it rather than replacing it.
    assert len(push_frame(old, frame(), NOW, "other").stack) == 2
    old_answer = record(parked(answer="A."), age_s=STALE_AFTER.total_seconds() * 10)
    assert transition(old_answer, "x", NOW, "s1")[1].reason.startswith("An earlier iteration")
    assert len(push_frame(old_answer, frame(), NOW, "other").stack) == 2


def test_an_inner_loop_completing_over_a_parked_outer_one_lets_the_session_stop() -> None:
    state = record(parked(), frame(iter=1, mode=Mode.ISSUE))
    new, decision = transition(state, "<issue-complete>DONE</issue-complete>", NOW, "s1")
    assert (decision.phase, decision.block) == (Phase.COMPLETING, False)
    assert "waits for an answer" in decision.note
    assert new is not None
    assert new.stack == (parked(),)


def test_a_parked_frame_makes_no_claim() -> None:
    assert claimed(record(parked()), DONE) is None
    assert claimed(record(frame()), DONE) == frame()


@pytest.mark.parametrize(
    ("state", "answer", "why"),
    [
        (record(parked()), "  ", "the answer is empty"),
        (None, "A", "no loop in this project"),
        (record(), "A", "no loop in this project"),
        (record(parked(), event=Event.DONE), "A", "no loop in this project"),
        (Corrupt("x"), "A", "no loop in this project"),
        (record(frame()), "A", "the running loop-mode loop asked no question (it is not blocked)"),
    ],
    ids=["empty", "none", "empty-stack", "done", "corrupt", "not-blocked"],
)
def test_record_answer_refuses_with_one_reason(
    state: LoopRecord | Corrupt | None, answer: str, why: str
) -> None:
    assert record_answer(state, answer, NOW) == why


def test_record_answer_answers_the_running_frame_and_renews_the_time() -> None:
    outer = frame(mode=Mode.GRIND)
    state = record(outer, parked(), age_s=9000)
    answered = record_answer(state, "  use v2\n", NOW)
    assert answered == LoopRecord(Event.STATE, "r1", NOW, (outer, parked(answer="use v2")))
    again = record_answer(answered, "v1 after all", NOW)  # a second answer replaces the first
    assert isinstance(again, LoopRecord)
    assert again.stack[-1].answer == "v1 after all"


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


def test_block_reason_without_prompt_is_the_spec_line_then_how_to_finish() -> None:
    assert block_reason(frame(iter=2, max=9)) == (
        "[ITERATION 2/9] Continue working on the task. Check your progress and either "
        f"complete the task or keep iterating.\n{LOOP_HINT}"
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
    question=st.sampled_from(["", "Which?"]),
    answer=st.sampled_from(["", "This."]),
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
        st.one_of(
            st.text(max_size=40),
            st.sampled_from([*all_signals, "<loop-done>BLOCKED</loop-done>"]),
            st.just("```"),
        ),
        max_size=8,
    ).map("\n".join),
)


@settings(max_examples=50)
@given(states, texts)
def test_no_exception_and_blocks_only_from_active(
    state: LoopRecord | Corrupt | None, text: str | None
) -> None:
    _, decision = transition(state, text, NOW)
    assert decision.exit_code == 0
    if decision.block:
        assert decision.phase is Phase.ACTIVE
        assert isinstance(state, LoopRecord)
        assert state.event is Event.STATE
        # A parked or answered frame never goes stale (it waits for a person).
        assert NOW - state.updated_at <= STALE_AFTER or state.stack[-1].question
        assert decision.reason.startswith(("[ITERATION ", "An earlier iteration"))
    else:
        assert decision.reason == ""


@settings(max_examples=50)
@given(states, texts)
def test_iteration_never_exceeds_max(state: LoopRecord | Corrupt | None, text: str | None) -> None:
    new, decision = transition(state, text, NOW)
    if isinstance(new, LoopRecord) and new != state:
        old = state.stack if isinstance(state, LoopRecord) else ()
        for i, f in enumerate(new.stack):
            # Over the cap only as it already was (a frame resumed after an answer keeps its
            # iteration); never pushed over it by this transition.
            assert f.iter <= f.max or (i < len(old) and f.iter <= old[i].iter)
        if decision.block:
            top = new.stack[-1]
            assert isinstance(state, LoopRecord)
            # The running frame, or the outer one when an inner frame just completed.
            assert len(new.stack) in (len(state.stack), len(state.stack) - 1)
            before = state.stack[len(new.stack) - 1]
            if before.answer and before.question:  # the same iteration, resumed after an answer
                assert top.iter == before.iter
            else:
                assert top.iter == before.iter + 1 <= top.max


@settings(max_examples=50)
@given(records, st.text(max_size=100))
def test_blocking_changes_only_the_top_counter(state: LoopRecord, text: str) -> None:
    new, decision = transition(state, text, NOW)
    if decision.block:
        assert isinstance(new, LoopRecord)
        # Only the running frame's counter, or the outer one's when an inner frame completed.
        kept = len(new.stack) - 1
        assert kept in (len(state.stack) - 1, len(state.stack) - 2)
        assert new.stack[:-1] == state.stack[:kept]
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
