"""The demo's stories for CLI agents are well formed and do the two tasks with shell commands
only (the one tool every CLI agent has)."""

from __future__ import annotations

import json

from forgeflare.mockapi import parse_script
from forgeflare.mockapi._responses import responses_runs
from forgeflare.templates import demo_story_text


def test_the_messages_story_parses_and_uses_bash_only() -> None:
    data = json.loads(demo_story_text("messages"))
    parse_script(data)
    tools = {
        block["name"]
        for response in data["responses"]
        for block in response["content"]
        if block["type"] == "tool_use"
    }
    assert tools == {"Bash"}
    assert "<loop-done>COMPLETE</loop-done>" in data["responses"][-1]["content"][0]["text"]


def test_the_responses_story_has_one_run_per_iteration() -> None:
    runs = responses_runs(json.loads(demo_story_text("responses")), "story-responses.json")
    assert [[next(iter(step)) for step in run] for run in runs] == [["exec", "text"]] * 2


def test_both_stories_run_the_same_commands() -> None:
    messages = json.loads(demo_story_text("messages"))["responses"]
    commands = [
        block["input"]["command"]
        for response in messages
        for block in response["content"]
        if block["type"] == "tool_use"
    ]
    runs = json.loads(demo_story_text("responses"))["runs"]
    assert commands == [run[0]["exec"] for run in runs]
