"""``forgeflare windows``: the closed windows listed soonest first (pure), and the command run
in this process over a real store in the scratch state directory."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from forgeflare import cli
from forgeflare.supervisor.agents import (
    AgentSpec,
    Window,
    WindowKey,
    read_windows,
    record_window,
    window_store_path,
)
from forgeflare.supervisor.agents._windowscli import window_lines

OWN = WindowKey(AgentSpec("forgeflare", ""), "https://api.anthropic.com", "a1")
WORK = WindowKey(AgentSpec("claude", "work"), "https://api.anthropic.com", "b2")
OPEN = WindowKey(AgentSpec("codex", ""), "https://api.openai.com", "c3")
SPENT = WindowKey(AgentSpec("pi", ""), "http://127.0.0.1:8080", "d4")
NOW = datetime(2026, 11, 25, 1, 0, tzinfo=UTC)


@pytest.fixture
def utc_clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Local time is UTC for the test (the listing shows local times)."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_closed_windows_soonest_first_open_and_spent_ones_left_out(utc_clock: None) -> None:
    windows = {
        OWN: Window(NOW + timedelta(hours=2)),
        WORK: Window(NOW + timedelta(minutes=5), "weekly limit"),
        OPEN: Window(NOW - timedelta(minutes=1)),
        SPENT: Window(None, "quota"),
    }
    assert window_lines(windows, NOW) == [
        f"{WORK.text}  opens 2026-11-25 01:05 (5m 00s)  weekly limit",
        f"{OWN.text}  opens 2026-11-25 03:00 (2h 00m)  usage limit",
    ]
    assert window_lines({}, NOW) == []


def _main(*args: str) -> int:
    with pytest.raises(SystemExit) as done:
        cli.main(list(args))
    code = done.value.code
    return code if isinstance(code, int) else 0


def test_list_then_forget_one_window_then_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    path = window_store_path({"XDG_STATE_HOME": str(tmp_path)})
    now = datetime.now(UTC)
    record_window(path, OWN, Window(now + timedelta(hours=2)), now)
    record_window(path, WORK, Window(now + timedelta(hours=3)), now)
    assert _main("windows") == 0
    listed = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in listed] == [OWN.text, WORK.text]

    assert _main("windows", "clear", "forgeflare") == 2  # a key is the whole key
    assert "no usage window 'forgeflare'" in capsys.readouterr().err
    assert _main("windows", "clear", OWN.text) == 0
    assert capsys.readouterr().out == f"forgot {OWN.text}\n"
    assert set(read_windows(path)) == {WORK}

    assert _main("windows", "clear") == 0
    assert capsys.readouterr().out == f"forgot {WORK.text}\n"
    assert _main("windows") == 0
    assert capsys.readouterr().out == f"no usage window known ({path})\n"
