"""A hand on the loop: the pause and hint files, the dry run's report, what watch says."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forgeflare.report._watch import WatchState, render_line
from forgeflare.supervisor._dryrun import dry_run_lines
from forgeflare.supervisor._hand import (
    add_hint,
    clear_pause,
    hint_preamble,
    pause_requested,
    request_pause,
    take_hint,
)
from forgeflare.supervisor._hourly import Sent, hour_allowance


def test_pause_and_unpause(tmp_path: Path) -> None:
    assert not pause_requested(tmp_path)
    request_pause(tmp_path)
    assert pause_requested(tmp_path)
    assert clear_pause(tmp_path)
    assert not clear_pause(tmp_path)


def test_hints_are_taken_once_and_in_order(tmp_path: Path) -> None:
    assert take_hint(tmp_path) is None
    assert add_hint(tmp_path, "first\n") == 1
    assert add_hint(tmp_path, "second") == 2
    assert take_hint(tmp_path) == "first\n\n---\n\nsecond"
    assert take_hint(tmp_path) is None
    assert list(tmp_path.iterdir()) == []
    assert hint_preamble("x").startswith("A hint from the user for this iteration:\n\nx\n")


def test_dry_run_names_the_environment_never_its_values() -> None:
    lines = dry_run_lines(
        prompt="Do it.\n",
        argv=["python", "-m", "forgeflare", "run", "--model", "a b"],
        env_names=["PATH", "FRESHER_ITERATION"],
        key_names=["ANTHROPIC_API_KEY"],
        bounds="2 iterations",
        trust="holds (empty)",
    )
    assert "agent command: python -m forgeflare run --model 'a b'" in lines
    assert (
        "agent environment (its key ANTHROPIC_API_KEY through a descriptor): FRESHER_ITERATION PATH"
    ) in lines
    assert lines[-3:] == ["---", "Do it.", "---"]


def test_watch_says_paused() -> None:
    state = WatchState(iteration=1, waiting=("paused", None))
    assert "· paused (forgeflare unpause goes on) ·" in render_line(state)


T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def _at(minutes: float, requests: int) -> Sent:
    return Sent(T0 + timedelta(minutes=minutes), requests)


@pytest.mark.parametrize(
    ("sent", "limit", "left", "free_minutes"),
    [
        ([], 5, 5, None),
        ([_at(0, 2)], 5, 3, None),
        ([_at(0, 5)], 5, 0, 60),
        ([_at(-61, 5), _at(0, 1)], 5, 4, None),  # an hour ago: out of the window
        ([_at(-30, 3), _at(-10, 3)], 5, 0, 30),  # the oldest leaving frees enough
        ([_at(-30, 1), _at(-20, 1), _at(-10, 4)], 5, 0, 40),  # two must leave
    ],
)
def test_hour_allowance(
    sent: list[Sent], limit: int, left: int, free_minutes: float | None
) -> None:
    got_left, free_at = hour_allowance(sent, limit=limit, now=T0)
    assert got_left == left
    assert free_at == (None if free_minutes is None else T0 + timedelta(minutes=free_minutes))


@given(st.lists(st.tuples(st.integers(-120, 0), st.integers(0, 5)), max_size=8), st.integers(1, 9))
def test_once_free_there_is_room_for_one_more(rows: list[tuple[int, int]], limit: int) -> None:
    sent = [_at(m, n) for m, n in rows]
    left, free_at = hour_allowance(sent, limit=limit, now=T0)
    if free_at is None:
        assert left > 0
    else:
        assert left == 0
        assert free_at > T0
        later, _ = hour_allowance(sent, limit=limit, now=free_at)
        assert later >= 1
