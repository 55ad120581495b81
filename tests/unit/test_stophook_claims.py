"""The stop-hook's claim records and the transitions of a refused claim (pure)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forgeflare._evidence import GateRun
from forgeflare.stophook import (
    ClaimNote,
    Event,
    Frame,
    LoopRecord,
    Mode,
    Phase,
    Refusal,
    ReviewNote,
    claim_from_json,
    claim_to_json,
    describe_state,
    gate_refused,
    reviewer_refused,
    transition,
)
from stophook_support import NOW
from text_support import missing

SIG = "<loop-done>COMPLETE</loop-done>"
RED = GateRun("make test", 2, "collected 3\nFAILED t.py::test_a - boom\n")
GREEN = GateRun("make test", 0, "3 passed\n")
REJECTED = ReviewNote("m", False, ("no test for b",), ("a test for b",), tokens=10, cost_usd=0.01)
FAILED = ReviewNote("m", None, error="HTTP 500: boom")


def record(frame: Frame) -> LoopRecord:
    return LoopRecord(Event.STATE, "r", NOW, (frame,))


def test_a_red_gate_refuses_with_its_tail_signature_and_exit_code() -> None:
    text, signature, note = gate_refused(RED, 3)
    assert "The gate `make test` exited 2" in text
    assert "FAILED t.py::test_a - boom" in text
    assert signature == "failing: t.py::test_a"
    assert note == ClaimNote(3, "gate", "gate exit 2: FAILED t.py::test_a - boom", 2, signature)


@pytest.mark.parametrize(
    ("review", "opening", "why"),
    [
        (
            REJECTED,
            "# The last iteration claimed completion (the completion tag), but it was refused",
            "no test for b",
        ),
        (
            FAILED,
            "Your completion claim was not accepted: the reviewer gave no verdict: HTTP 500: "
            "boom. Check your work, then claim completion again.",
            "the reviewer gave no verdict: HTTP 500: boom",
        ),
        (
            ReviewNote("m", False),
            "# The last iteration claimed completion (the completion tag), but it was refused",
            "the reviewer judged it not complete",
        ),
    ],
    ids=["rejected", "failed", "rejected-without-reasons"],
)
def test_a_reviewer_that_does_not_accept_refuses(
    review: ReviewNote, opening: str, why: str
) -> None:
    refused = reviewer_refused(review, GREEN, 4)
    assert refused is not None
    text, note = refused
    assert text.splitlines()[0] == opening
    assert note == ClaimNote(4, "reviewer", why, 0, "", review)


def test_the_reviewer_failure_is_one_line_then_a_blank() -> None:
    refused = reviewer_refused(FAILED, None, 1)
    assert refused is not None
    assert refused[0].count("\n") == 2
    assert refused[0].endswith("\n\n")


def test_reasons_and_missing_open_the_continuation() -> None:
    refused = reviewer_refused(REJECTED, GREEN, 1)
    assert refused is not None
    assert "- no test for b\n\nMissing:\n- a test for b" in refused[0]


def test_a_reviewer_that_accepts_refuses_nothing() -> None:
    assert reviewer_refused(ReviewNote("m", True, ("done",)), GREEN, 1) is None


def test_a_reviewer_refusal_blocks_with_its_text_and_is_kept_on_the_frame() -> None:
    text, note = reviewer_refused(REJECTED, GREEN, 1) or ("", None)
    state = record(Frame(Mode.LOOP, 1, 5, "task", reviewer="m"))
    new, decision = transition(state, f"done\n{SIG}", NOW, refused=Refusal(text, "", note))
    assert decision.phase is Phase.ACTIVE
    assert decision.block
    assert decision.reason.startswith(text)
    assert "[ITERATION 2/5]" in decision.reason
    assert decision.note == f"{SIG} refused by the reviewer"
    assert isinstance(new, LoopRecord)
    assert new.stack[0].claims == (note,)


def stall_run(refusals: list[str], stall_after: int) -> tuple[list[int], Phase]:
    """Refuse a claim per item (a gate signature, or ``reviewer``); the streaks and the end."""
    state: LoopRecord | None = record(Frame(Mode.LOOP, 1, 50, gate="g", stall_after=stall_after))
    streaks: list[int] = []
    phase = Phase.ACTIVE
    for by in refusals:
        assert state is not None
        refused = (
            Refusal("r", "", ClaimNote(1, "reviewer", "no"))
            if by == "reviewer"
            else Refusal("g", by, ClaimNote(1, "gate", by, 1, by))
        )
        new, decision = transition(state, SIG, NOW, refused=refused)
        phase = decision.phase
        if not isinstance(new, LoopRecord):
            break
        state = new
        streaks.append(new.stack[0].stalled)
    return streaks, phase


@pytest.mark.parametrize(
    ("refusals", "streaks", "phase"),
    [
        (["a", "a", "a"], [0, 1, 2], Phase.ACTIVE),
        (["a", "a", "a", "a"], [0, 1, 2], Phase.STUCK),  # stalled at the third repeat
        (["a", "a", "reviewer", "a", "a"], [0, 1, 0, 0, 1], Phase.ACTIVE),
        (["reviewer"] * 5, [0] * 5, Phase.ACTIVE),  # the gate passed each time: progress
        (["a", "b", "a", "b"], [0, 0, 0, 0], Phase.ACTIVE),
    ],
)
def test_the_stall_streak_mirrors_the_loop(
    refusals: list[str], streaks: list[int], phase: Phase
) -> None:
    assert stall_run(refusals, 3) == (streaks, phase)


notes = st.builds(
    ClaimNote,
    iteration=st.integers(0, 1000),
    rejected_by=st.sampled_from(["gate", "reviewer"]),
    why=st.text(),
    gate_exit=st.none() | st.integers(-255, 255),
    gate_signature=st.text(),
    review=st.none()
    | st.builds(
        ReviewNote,
        model=st.text(),
        complete=st.none() | st.booleans(),
        reasons=st.lists(st.text()).map(tuple),
        missing=st.lists(st.text()).map(tuple),
        error=st.text(),
        tokens=st.integers(0, 10**9),
        cost_usd=st.none() | st.floats(0, 1e6),
        file=st.text(),
    ),
)


@given(notes)
def test_a_note_survives_the_state_file(note: ClaimNote) -> None:
    assert claim_from_json(claim_to_json(note)) == note


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        ([], "not an object"),
        ({"iteration": -1, "rejected_by": "gate"}, "iteration is not a non-negative integer"),
        ({"iteration": 1, "rejected_by": "user"}, "rejected_by 'user' is not gate or reviewer"),
        ({"iteration": 1, "rejected_by": "gate", "gate_exit": "2"}, "gate_exit is not"),
        ({"iteration": 1, "rejected_by": "gate", "why": 3}, "why or gate_signature"),
        ({"iteration": 1, "rejected_by": "reviewer", "review": 1}, "review is not an object"),
        (
            {"iteration": 1, "rejected_by": "reviewer", "review": {"complete": "no"}},
            "review.complete is not true, false or null",
        ),
        (
            {"iteration": 1, "rejected_by": "reviewer", "review": {"tokens": -1}},
            "review.tokens is not a non-negative integer",
        ),
        (
            {"iteration": 1, "rejected_by": "reviewer", "review": {"reasons": [1]}},
            "review.reasons is not a list of strings",
        ),
        (
            {"iteration": 1, "rejected_by": "reviewer", "review": {"cost_usd": True}},
            "review.cost_usd is not a number",
        ),
    ],
)
def test_a_bad_note_says_which_field(raw: object, why: str) -> None:
    found = claim_from_json(raw)
    assert isinstance(found, str)
    assert found.startswith(why)


def test_status_shows_the_reviewer_spend_and_the_last_refused_claim() -> None:
    _, _, gate_note = gate_refused(RED, 1)
    _, review_note = reviewer_refused(REJECTED, GREEN, 2) or ("", None)
    assert review_note is not None
    frame = Frame(
        Mode.LOOP, 3, 5, "task", gate="make test", reviewer="m", claims=(gate_note, review_note)
    )
    text = describe_state(Path("s.json"), record(frame), NOW)
    assert not missing(
        text,
        "     gate: make test",
        "     reviewer: m (1 verdict, 10 tokens, $0.0100)",
        "     refused claims: 2",
        "     last refused claim: iteration 2, by the reviewer",
        "       reviewer m: not complete (10 tokens, $0.0100)",
        "         missing: a test for b",
    ), text
