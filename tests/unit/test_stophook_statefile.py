"""Parsing and rendering of the loop-state file, and the lock."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgeflare.stophook import (
    ClaimNote,
    Corrupt,
    Event,
    Frame,
    LoopRecord,
    Mode,
    ReviewNote,
    StateLockTimeout,
    parse_json_state,
    render_json_state,
    state_lock,
)

T0 = datetime(2026, 1, 1, 10, 0, 0, tzinfo=UTC)


def doc(**overrides: object) -> str:
    base: dict[str, object] = {
        "schema": 1,
        "event": "STATE",
        "run_id": "abc",
        "updated_at": "2026-01-01T10:00:00Z",
        "stack": [{"mode": "loop", "iter": 2, "max": 5, "prompt": "p"}],
    }
    base.update(overrides)
    return json.dumps({k: v for k, v in base.items() if v is not ...})


def test_json_round_trip() -> None:
    parsed = parse_json_state(doc())
    assert parsed == LoopRecord(Event.STATE, "abc", T0, (Frame(Mode.LOOP, 2, 5, "p"),))
    assert parse_json_state(render_json_state(parsed)) == parsed


def test_numeric_strings_are_accepted_like_jq_did() -> None:
    parsed = parse_json_state(doc(stack=[{"mode": "issue", "iter": "3", "max": "7"}]))
    assert isinstance(parsed, LoopRecord)
    assert parsed.stack == (Frame(Mode.ISSUE, 3, 7, ""),)


def test_missing_run_id_and_null_prompt_use_safe_defaults() -> None:
    parsed = parse_json_state(
        doc(run_id=..., stack=[{"mode": "loop", "iter": 1, "max": 2, "prompt": None}])
    )
    assert isinstance(parsed, LoopRecord)
    assert (parsed.run_id, parsed.stack[0].prompt) == ("", "")


@pytest.mark.parametrize(
    "text",
    [
        "{not json",
        "[]",
        doc(schema=...),
        doc(schema=2),
        doc(event="PAUSE"),
        doc(updated_at=...),
        doc(updated_at="soon"),
        doc(stack=...),
        doc(stack="x"),
        doc(stack=[3]),
        doc(stack=[{"mode": "loop", "iter": "three", "max": 5}]),
        doc(stack=[{"mode": "loop", "iter": 1, "max": "lots"}]),
        doc(stack=[{"mode": "loop", "iter": -1, "max": 5}]),
        doc(stack=[{"mode": "loop", "iter": 1, "max": 0}]),
        doc(stack=[{"mode": "loop", "iter": True, "max": 5}]),
        doc(stack=[{"mode": "loop", "max": 5}]),
        doc(stack=[{"mode": "spin", "iter": 1, "max": 5}]),
        doc(stack=[{"mode": "loop", "iter": 1, "max": 5, "prompt": 7}]),
        doc(run_id=5),
    ],
)
def test_corrupted_json(text: str) -> None:
    assert isinstance(parse_json_state(text), Corrupt)


def test_the_judged_message_id_is_kept() -> None:
    frame = Frame(Mode.ISSUE, 4, 10, "Fix issue 12, then stop.", "s1", judged="msg_01")
    record = LoopRecord(Event.STATE, "r", T0, (frame,))
    parsed = parse_json_state(render_json_state(record))
    assert isinstance(parsed, LoopRecord)
    assert parsed.stack[0].judged == "msg_01"


def test_a_parked_frame_keeps_its_question_and_answer() -> None:
    question = 'Which API: "v1" or v2?\nv2 is in beta: # not a comment'
    frame = Frame(Mode.ISSUE, 4, 10, "Fix issue 12, then stop.", "s1", question=question)
    as_json = json.loads(render_json_state(LoopRecord(Event.STATE, "r", T0, (frame,))))
    assert as_json["stack"][0]["status"] == "blocked"
    assert as_json["stack"][0]["question"] == question
    for answer in ("", "v2\n(it is stable)"):
        parked = frame._replace(answer=answer)
        record = LoopRecord(Event.STATE, "", T0, (parked,))
        assert parse_json_state(render_json_state(record)) == record
    resumed = LoopRecord(Event.STATE, "", T0, (frame._replace(question=""),))
    assert "question" not in render_json_state(resumed)


def test_a_question_that_is_not_a_string_is_corrupt() -> None:
    parsed = parse_json_state(doc(stack=[{"mode": "loop", "iter": 1, "max": 2, "question": 7}]))
    assert isinstance(parsed, Corrupt)
    assert "question or answer" in parsed.why


reviews = st.builds(
    ReviewNote,
    model=st.text(max_size=10),
    complete=st.none() | st.booleans(),
    reasons=st.lists(st.text(max_size=10), max_size=2).map(tuple),
    missing=st.lists(st.text(max_size=10), max_size=2).map(tuple),
    error=st.text(max_size=10),
    tokens=st.integers(0, 10**9),
    cost_usd=st.none() | st.floats(0, 100, allow_nan=False),
    file=st.text(max_size=10),
)
claims = st.builds(
    ClaimNote,
    iteration=st.integers(0, 10**6),
    rejected_by=st.sampled_from(["gate", "reviewer"]),
    why=st.text(max_size=20),
    gate_exit=st.none() | st.integers(-(2**31), 2**31),
    gate_signature=st.text(max_size=20),
    review=st.none() | reviews,
)
frames = st.builds(
    Frame,
    reviewer=st.text(max_size=10),
    base=st.text(max_size=10),
    claims=st.lists(claims, max_size=2).map(tuple),
    mode=st.sampled_from(list(Mode)),
    iter=st.integers(0, 10**6),
    max=st.integers(1, 10**6),
    prompt=st.text(max_size=40),
    gate=st.text(max_size=20),
    stall_after=st.integers(0, 10),
    failures=st.text(max_size=20),
    stalled=st.integers(0, 10),
    question=st.text(max_size=20),
    answer=st.text(max_size=20),
).map(lambda f: f if f.question else f._replace(answer=""))  # an answer needs its question


@settings(max_examples=50)
@given(
    st.sampled_from(list(Event)),
    st.text(max_size=12),
    st.datetimes(min_value=datetime(2000, 1, 1), timezones=st.just(UTC)),
    st.lists(frames, max_size=3),
)
def test_json_render_parse_round_trip(
    event: Event, run_id: str, moment: datetime, stack: list[Frame]
) -> None:
    moment = moment.replace(microsecond=0)
    rec = LoopRecord(event, run_id, moment, tuple(stack))
    assert parse_json_state(render_json_state(rec)) == rec


@given(st.text(max_size=200))
def test_parsers_never_raise(text: str) -> None:
    assert parse_json_state(text) is not None


def test_lock_times_out_instead_of_hanging(tmp_path: Path) -> None:
    lock = tmp_path / "s.lock"
    # flock locks belong to the open file description: a second open conflicts.
    with (
        state_lock(lock),
        pytest.raises(StateLockTimeout, match="lock still held"),
        state_lock(lock, timeout=0.05),
    ):
        pass
