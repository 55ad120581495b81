"""Loops from the command line: start pushes a frame onto the user's state, status reads it,
cancel removes it, and ``describe_state`` words it (pure)."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from forgeflare.stophook import (
    Corrupt,
    Event,
    Frame,
    LoopRecord,
    LoopStateError,
    Mode,
    cancel_loops,
    describe_state,
    loop_status,
    start_loop,
    state_path,
)
from project_support import git, new_repo
from stophook_support import NOW


def test_status_and_cancel_without_a_loop(tmp_path: Path) -> None:
    assert loop_status(tmp_path) == (None, None)
    assert cancel_loops(tmp_path) == []


def test_start_then_status_then_cancel(tmp_path: Path) -> None:
    record = start_loop(tmp_path, mode=Mode.TASK, max_iterations=4, prompt="Fix it", now=NOW)
    path, state = loop_status(tmp_path)
    assert (path, state) == (state_path(tmp_path), record)
    ((removed, was),) = cancel_loops(tmp_path)
    assert (removed, was) == (path, record)
    assert not removed.exists()
    assert loop_status(tmp_path) == (None, None)


def test_the_stall_rule_counts_only_with_a_gate_and_a_reviewer_records_its_base(
    tmp_path: Path,
) -> None:
    project = new_repo(tmp_path / "p")
    plain = start_loop(project, mode=Mode.LOOP, max_iterations=2, prompt="a", now=NOW)
    assert (plain.stack[-1].stall_after, plain.stack[-1].base) == (0, "")
    gated = start_loop(
        project, mode=Mode.LOOP, max_iterations=2, prompt="b", now=NOW, gate="make test"
    )
    assert gated.stack[-1].stall_after == 4
    reviewed = start_loop(
        project, mode=Mode.LOOP, max_iterations=2, prompt="c", now=NOW, reviewer="m"
    )
    assert reviewed.stack[-1].base == git(project, "rev-parse", "HEAD")


def test_start_refuses_no_iterations(tmp_path: Path) -> None:
    with pytest.raises(LoopStateError, match="--max-iterations must be at least 1, got 0"):
        start_loop(tmp_path, mode=Mode.LOOP, max_iterations=0, prompt="p", now=NOW)
    assert not state_path(tmp_path).exists()


def _record(*frames: Frame, age: timedelta = timedelta(minutes=1)) -> LoopRecord:
    return LoopRecord(Event.STATE, "r1", NOW - age, frames)


def test_a_running_frame_in_words() -> None:
    outer = Frame(Mode.GRIND, 2, 9, "Work the backlog")
    inner = Frame(Mode.TASK, 1, 3, "x" * 80 + "\nsecond line", session_id="s1")
    assert describe_state(Path("s.json"), _record(outer, inner), NOW).splitlines() == [
        "s.json",
        "run r1 · updated 2026-01-01T11:59:00Z (1m 00s ago)",
        "  1. grind iteration 2/9",
        "     prompt: Work the backlog",
        "     done when alone on a line: <grind-done>NO_MORE_ISSUES</grind-done>",
        "     session: none yet (the first Stop under it claims it)",
        "  2. task  iteration 1/3  ← running",
        "     prompt: " + "x" * 59 + "…",
        "     done when alone on a line: <loop-done>COMPLETE</loop-done>",
        "     session: s1",
    ]


@pytest.mark.parametrize(
    ("path", "state", "said"),
    [
        (None, None, "no loop in this project"),
        (Path("s.json"), None, "no loop in this project"),
        (Path("s.json"), Corrupt("bad json"), "s.json: corrupted loop state (bad json); the next"),
        (Path("s.json"), _record(age=timedelta(hours=3)), "(STALE: the next stop ends it)"),
        (Path("s.json"), _record(), "  (stack empty)"),
        (
            Path("s.json"),
            _record(Frame(Mode.LOOP, 1, 2, "p", question="Which?")),
            "← parked: waits",
        ),
        (
            Path("s.json"),
            _record(Frame(Mode.LOOP, 1, 2, "p", question="Which?", answer="v2")),
            "← parked: answered",
        ),
        (
            Path("s.json"),
            LoopRecord(Event.DONE, "", NOW, (Frame(Mode.LOOP, 2, 2, "p"),)),
            "loop · done · updated",
        ),
    ],
)
def test_what_status_says(path: Path | None, state: LoopRecord | Corrupt | None, said: str) -> None:
    assert said in describe_state(path, state, NOW)


def test_start_refuses_corrupt_state(tmp_path: Path) -> None:
    path = state_path(tmp_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{", "utf-8")
    with pytest.raises(LoopStateError, match="corrupted loop state"):
        start_loop(tmp_path, mode=Mode.LOOP, max_iterations=3, prompt="", now=NOW)


def test_start_pushes_frames_and_nests(tmp_path: Path) -> None:
    first = start_loop(tmp_path, mode=Mode.GRIND, max_iterations=9, prompt="backlog", now=NOW)
    second = start_loop(tmp_path, mode=Mode.ISSUE, max_iterations=3, prompt="issue 7", now=NOW)
    assert second.run_id == first.run_id
    assert [(f.mode, f.iter, f.max) for f in second.stack] == [
        (Mode.GRIND, 1, 9),
        (Mode.ISSUE, 1, 3),
    ]
    on_disk = json.loads(state_path(tmp_path).read_text("utf-8"))
    assert [f["prompt"] for f in on_disk["stack"]] == ["backlog", "issue 7"]
