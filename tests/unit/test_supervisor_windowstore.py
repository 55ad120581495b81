"""The machine's usage-window store: shared, atomic, forgiving of damage."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from forgeflare.supervisor._fallback import AgentSpec, Window
from forgeflare.supervisor._windowstore import read_windows, record_window, window_store_path

NOW = datetime(2026, 11, 25, 1, 0, tzinfo=UTC)


def test_the_store_lives_under_the_state_directory(tmp_path: Path) -> None:
    path = window_store_path({"XDG_STATE_HOME": str(tmp_path)})
    assert path == tmp_path / "forgeflare" / "windows.json"


def test_windows_are_kept_per_backend_and_profile_and_reset_ones_dropped(tmp_path: Path) -> None:
    path = tmp_path / "s" / "windows.json"
    own, work = AgentSpec("forgeflare"), AgentSpec("claude", "work")
    record_window(path, own, Window(NOW + timedelta(hours=2)), NOW)
    record_window(path, work, Window(NOW + timedelta(minutes=5), "weekly"), NOW)
    assert read_windows(path) == {
        own: Window(NOW + timedelta(hours=2)),
        work: Window(NOW + timedelta(minutes=5), "weekly"),
    }
    assert set(json.loads(path.read_text())["windows"]) == {"forgeflare", "claude:work"}
    # An hour later, a new write drops the window that has reset.
    later = NOW + timedelta(hours=1)
    record_window(path, AgentSpec("codex"), Window(later + timedelta(hours=1)), later)
    assert set(read_windows(path)) == {own, AgentSpec("codex")}


@pytest.mark.parametrize(
    "text",
    ["", "{", "[]", '{"windows": []}', '{"windows": {"a:b:c": {"until": "x"}, "b": 3}}', "\udcff"],
)
def test_a_damaged_store_reads_as_empty_and_is_rewritten(tmp_path: Path, text: str) -> None:
    path = tmp_path / "windows.json"
    path.write_text(text, encoding="utf-8", errors="surrogateescape")
    assert read_windows(path) == {}
    record_window(path, AgentSpec("codex"), Window(NOW + timedelta(hours=1)), NOW)
    assert set(read_windows(path)) == {AgentSpec("codex")}


def test_a_spent_quota_without_a_reset_is_not_shared(tmp_path: Path) -> None:
    path = tmp_path / "windows.json"
    record_window(path, AgentSpec("codex"), Window(None, "quota"), NOW)
    assert not path.exists()
