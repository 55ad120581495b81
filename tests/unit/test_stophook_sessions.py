"""Frames belong to a Claude Code session; commands runnable without PATH."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgeflare.stophook import (
    Event,
    Frame,
    LoopRecord,
    Mode,
    Phase,
    command_problem,
    forgeflare_command,
    is_stop_hook_command,
    merge_stop_hook,
    parse_json_state,
    render_json_state,
    transition,
)
from stophook_support import DONE, NOW


def record(*frames: Frame) -> LoopRecord:
    return LoopRecord(Event.STATE, "r1", NOW - timedelta(seconds=60), frames)


# --- sessions -----------------------------------------------------------------------------------


def test_first_stop_claims_the_frame_and_other_sessions_pass_through() -> None:
    state = record(Frame(Mode.LOOP, 1, 5))
    claimed, decision = transition(state, "working", NOW, "A")
    assert decision.block
    assert claimed == LoopRecord(Event.STATE, "r1", NOW, (Frame(Mode.LOOP, 2, 5, "", "A"),))

    for text in ("working", DONE, None):
        same, decision = transition(claimed, text, NOW, "B")
        assert same is claimed  # untouched: nothing is written
        assert (decision.phase, decision.block, decision.note) == (Phase.IDLE, False, "")

    # A Stop without a session id (an older client) is the frame's own session.
    _, decision = transition(claimed, "working", NOW, None)
    assert decision.block


def test_inner_frame_completing_claims_the_outer_for_the_same_session() -> None:
    state = record(Frame(Mode.GRIND, 1, 5, "backlog"), Frame(Mode.ISSUE, 1, 3, "", "A"))
    new, decision = transition(state, "<issue-complete>DONE</issue-complete>", NOW, "A")
    assert decision.block
    assert new == LoopRecord(Event.STATE, "r1", NOW, (Frame(Mode.GRIND, 2, 5, "backlog", "A"),))


def test_inner_frame_completing_leaves_another_sessions_outer_frame_alone() -> None:
    outer = Frame(Mode.GRIND, 3, 5, "backlog", "B")
    state = record(outer, Frame(Mode.ISSUE, 1, 3, "", "A"))
    new, decision = transition(state, "<issue-complete>DONE</issue-complete>", NOW, "A")
    assert (decision.phase, decision.block) == (Phase.COMPLETING, False)
    assert "belongs to another session" in decision.note
    assert new == LoopRecord(Event.STATE, "r1", NOW, (outer,))


sessions = st.sampled_from(["A", "B", None])


@settings(max_examples=100)
@given(
    st.lists(st.tuples(st.sampled_from([1, 2]), st.sampled_from(["", "A", "B"])), min_size=1),
    sessions,
    st.sampled_from(["working", DONE, None]),
)
def test_a_stop_never_changes_a_frame_of_another_session(
    frames: list[tuple[int, str]], session: str | None, text: str | None
) -> None:
    state = record(*(Frame(Mode.LOOP, it, 5, "", owner) for it, owner in frames))
    new, decision = transition(state, text, NOW, session)
    top = state.stack[-1]
    if session and top.session_id and top.session_id != session:
        assert new is state
        assert not decision.block
    if isinstance(new, LoopRecord):
        for before, after in zip(state.stack, new.stack, strict=False):
            if session and before.session_id and before.session_id != session:
                assert after == before
            elif after.session_id:
                assert after.session_id in (before.session_id, session)


def test_session_round_trips_through_the_state_file() -> None:
    rec = LoopRecord(Event.STATE, "r", NOW, (Frame(Mode.LOOP, 2, 5, "p", "sess-1"),))
    assert parse_json_state(render_json_state(rec)) == rec
    unclaimed = LoopRecord(Event.STATE, "r", NOW, (Frame(Mode.LOOP, 2, 5, "p"),))
    assert '"session_id"' not in render_json_state(unclaimed)


# --- commands that run without PATH -------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "ours"),
    [
        ("forgeflare stop-hook", True),
        ("/home/u/.venv/bin/forgeflare stop-hook", True),
        ("'/a b/forgeflare' stop-hook", True),
        ("/usr/bin/python3 -m forgeflare stop-hook", True),
        ("/usr/bin/python3 -P -m forgeflare stop-hook", True),
        ("/usr/bin/python3 -P -m forgeflare stop-hook status", False),
        ("forgeflare stop-hook status", False),
        ("forgeflare hooks", False),
        ("notify-send done", False),
        ("'unclosed", False),
    ],
)
def test_is_stop_hook_command(command: str, ours: bool) -> None:
    assert is_stop_hook_command(command) is ours


def test_merge_updates_an_older_spelling_in_place() -> None:
    settings = {
        "hooks": {
            "Stop": [
                {"hooks": [{"type": "command", "command": "say done"}]},
                {"hooks": [{"type": "command", "command": "forgeflare stop-hook"}]},
            ]
        }
    }
    merged, changed = merge_stop_hook(settings, "/v/bin/forgeflare stop-hook")
    assert changed
    assert merged["hooks"]["Stop"][1] == {
        "hooks": [{"type": "command", "command": "/v/bin/forgeflare stop-hook", "timeout": 700}]
    }
    assert merged["hooks"]["Stop"][0] == settings["hooks"]["Stop"][0]
    assert settings["hooks"]["Stop"][1]["hooks"][0]["command"] == "forgeflare stop-hook"


def test_forgeflare_command_prefers_the_script_beside_the_interpreter(tmp_path: Path) -> None:
    python = tmp_path / "v b" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text("")
    assert forgeflare_command(str(python)) == f"'{python}' -P -m forgeflare"
    script = python.parent / "forgeflare"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    assert forgeflare_command(str(python)) == f"'{script}'"
    assert command_problem(f"'{script}' stop-hook") is None


def test_command_problem_names_what_claude_code_cannot_run(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    tool = bin_dir / "tool"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    assert command_problem("tool stop-hook", path=str(bin_dir)) is None
    problem = command_problem("forgeflare stop-hook", path=str(tmp_path / "empty"))
    assert problem is not None
    assert "not on PATH" in problem
    assert "exit 127" in problem
    assert "relative" in (command_problem("bin/tool stop-hook") or "")
    not_exec = tmp_path / "plain"
    not_exec.write_text("")
    assert "not an executable file" in (command_problem(f"{not_exec} stop-hook") or "")
    assert "not an executable file" in (command_problem(f"{tmp_path}/missing x") or "")
    assert command_problem("") == "the command is empty"
    assert os.path.isabs(str(tmp_path))
