"""A hand on the loop: the pause and hint files, the dry run's report, what watch says."""

from __future__ import annotations

from pathlib import Path

from forgeflare.report import WatchState, render_line
from forgeflare.supervisor.run._hand import (
    add_hint,
    clear_pause,
    hint_preamble,
    pause_requested,
    request_pause,
    take_hint,
)


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


def test_watch_says_paused() -> None:
    state = WatchState(iteration=1, waiting=("paused", None))
    assert "· paused (forgeflare unpause goes on) ·" in render_line(state)
