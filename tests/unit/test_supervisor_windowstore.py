"""The machine's usage-window store: shared, atomic, forgiving of damage."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from forgeflare.supervisor.agents import AgentSpec, Window, WindowKey
from forgeflare.supervisor.agents._windowstore import (
    forget_windows,
    read_windows,
    record_window,
    window_store_path,
)

NOW = datetime(2026, 11, 25, 1, 0, tzinfo=UTC)
API = "https://api.anthropic.com"


def _key(backend: str, profile: str = "", endpoint: str = API, account: str = "a1") -> WindowKey:
    return WindowKey(AgentSpec(backend, profile), endpoint, account)


def test_the_store_lives_under_the_state_directory(tmp_path: Path) -> None:
    path = window_store_path({"XDG_STATE_HOME": str(tmp_path)})
    assert path == tmp_path / "forgeflare" / "windows.json"


def test_windows_are_kept_per_backend_and_profile_and_reset_ones_dropped(tmp_path: Path) -> None:
    path = tmp_path / "s" / "windows.json"
    own, work = _key("forgeflare"), _key("claude", "work")
    record_window(path, own, Window(NOW + timedelta(hours=2)), NOW)
    record_window(path, work, Window(NOW + timedelta(minutes=5), "weekly"), NOW)
    assert read_windows(path) == {
        own: Window(NOW + timedelta(hours=2)),
        work: Window(NOW + timedelta(minutes=5), "weekly"),
    }
    assert set(json.loads(path.read_text())["windows"]) == {
        f"forgeflare@{API}#a1",
        f"claude:work@{API}#a1",
    }
    # An hour later, a new write drops the window that has reset.
    later = NOW + timedelta(hours=1)
    record_window(path, _key("codex"), Window(later + timedelta(hours=1)), later)
    assert set(read_windows(path)) == {own, _key("codex")}


@pytest.mark.parametrize(
    "text",
    [
        "",
        "{",
        "[]",
        '{"windows": []}',
        '{"windows": {"a:b:c@h#1": {"until": "x"}, "b@h#1": 3}}',
        # 0.3's keys (no endpoint, no account) are dropped.
        '{"windows": {"codex": {"until": "2026-11-25T03:00:00Z"}}}',
        "\udcff",
    ],
)
def test_a_damaged_store_reads_as_empty_and_is_rewritten(tmp_path: Path, text: str) -> None:
    path = tmp_path / "windows.json"
    path.write_text(text, encoding="utf-8", errors="surrogateescape")
    assert read_windows(path) == {}
    record_window(path, _key("codex"), Window(NOW + timedelta(hours=1)), NOW)
    assert set(read_windows(path)) == {_key("codex")}


def test_a_spent_quota_without_a_reset_is_not_shared(tmp_path: Path) -> None:
    path = tmp_path / "windows.json"
    record_window(path, _key("codex"), Window(None, "quota"), NOW)
    assert not path.exists()


def test_the_same_agent_at_another_endpoint_or_account_is_another_window(tmp_path: Path) -> None:
    path = tmp_path / "windows.json"
    record_window(path, _key("forgeflare"), Window(NOW + timedelta(hours=2)), NOW)
    windows = read_windows(path)
    assert _key("forgeflare") in windows
    assert _key("forgeflare", endpoint="http://127.0.0.1:9") not in windows
    assert _key("forgeflare", account="b2") not in windows


def test_windows_are_forgotten_one_or_all(tmp_path: Path) -> None:
    path = tmp_path / "windows.json"
    assert forget_windows(path, None, NOW) == []
    assert not path.exists()
    for backend in ("codex", "claude"):
        record_window(path, _key(backend), Window(NOW + timedelta(hours=2)), NOW)
    assert forget_windows(path, f"codex@{API}#a1", NOW) == [f"codex@{API}#a1"]
    assert set(read_windows(path)) == {_key("claude")}
    assert forget_windows(path, "codex", NOW) == []
    assert forget_windows(path, None, NOW) == [f"claude@{API}#a1"]
    assert read_windows(path) == {}
