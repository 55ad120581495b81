"""The agent switching, built alone: windows learned and shared through the machine's store,
fallbacks chosen and switched to, quota spent."""

from __future__ import annotations

import json
from pathlib import Path

from forgeflare.supervisor import read_windows
from forgeflare.supervisor.agents import AgentSpec
from forgeflare.supervisor.run import AgentSwitching
from loop_support import Shown, loop_setup, opened_book


def _switching(tmp_path: Path, shown: Shown | None = None) -> AgentSwitching:
    setup = loop_setup(
        tmp_path / "p", config={"agent": {"fallback": ["claude"]}}, shown=shown or Shown()
    )
    return AgentSwitching(setup, opened_book(setup))


def test_the_primary_runs_while_its_window_is_open(tmp_path: Path) -> None:
    agent = _switching(tmp_path)
    choice = agent.choose()
    assert choice.agent == AgentSpec("forgeflare") == agent.current
    assert agent.label == "forgeflare"
    assert agent.fallbacks == [AgentSpec("claude")]


def test_a_learned_window_is_shared_and_switches_to_the_fallback(tmp_path: Path) -> None:
    shown = Shown()
    agent = _switching(tmp_path, shown)
    agent.learn_window(36_000)  # ten hours, scaled to the loop's time: far past fallback_after
    stored = read_windows(agent.window_file, warn=print)
    assert [key.agent for key in stored] == [AgentSpec("forgeflare")]
    choice = agent.choose()
    assert choice.agent == AgentSpec("claude") == agent.current
    assert agent.backend.name == "claude"
    assert "agent forgeflare -> claude" in shown.text
    events = (agent.book.store.dir / "events.jsonl").read_text().splitlines()
    assert json.loads(events[-1])["event"] == "agent_switched"


def test_another_loop_sees_the_machine_s_window(tmp_path: Path) -> None:
    first = _switching(tmp_path)
    first.learn_window(36_000)
    second = AgentSwitching(first.setup, first.book)  # a new loop on the same machine
    assert AgentSpec("forgeflare") in second.known_windows()
    assert second.choose().agent == AgentSpec("claude")


def test_a_spent_quota_is_out_for_good(tmp_path: Path) -> None:
    agent = _switching(tmp_path)
    assert not agent.any_spent()
    agent.spend_quota()
    assert agent.any_spent()
    assert agent.choose().agent == AgentSpec("claude")
