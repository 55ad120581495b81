"""The Claude Code plugin: its files with the command filled in, installed beside what is there,
and the slash command's arguments (parsed as typed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgeflare.stophook import (
    GATE_TIMEOUT_S,
    LOCK_TIMEOUT_S,
    PLUGIN_FILES,
    REVIEW_TIMEOUT_S,
    LoopArgs,
    LoopStateError,
    Mode,
    default_plugin_dir,
    install_plugin,
    merge_stop_hook,
    parse_loop_args,
    plugin_files,
)


def test_the_plugin_goes_to_the_user_skills_folder(tmp_path: Path) -> None:
    assert default_plugin_dir(tmp_path) == tmp_path / ".claude" / "skills" / "forgeflare"


def test_an_install_replaces_its_own_files_and_keeps_the_rest(tmp_path: Path) -> None:
    target = tmp_path / "plugin"
    (target / "commands").mkdir(parents=True)
    (target / "commands" / "loop.md").write_text("an older loop command")
    (target / "commands" / "mine.md").write_text("the user's own")
    written = install_plugin(target, "/venv/bin/forgeflare")
    assert written == [target / rel for rel in PLUGIN_FILES]
    assert "/venv/bin/forgeflare stop-hook start" in (target / "commands" / "loop.md").read_text()
    assert (target / "commands" / "mine.md").read_text() == "the user's own"
    hooks = json.loads((target / "hooks" / "hooks.json").read_text())
    assert hooks["hooks"]["Stop"][0]["hooks"][0]["command"] == "/venv/bin/forgeflare stop-hook"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Fix it", LoopArgs("Fix it")),
        ("Fix it --max-iterations 5", LoopArgs("Fix it", 5)),
        ("--mode grind Work the backlog", LoopArgs("Work the backlog", None, Mode.GRIND)),
        ("a --mode=issue b --max-iterations=2", LoopArgs("a b", 2, Mode.ISSUE)),
        ("x --max-iterations 2 --max-iterations 3", LoopArgs("x", 3)),  # the last wins
        ("Don't $(me) `x` --mode task\n", LoopArgs("Don't $(me) `x`", None, Mode.TASK)),
        ("line one\n  indented two\n--max-iterations 4", LoopArgs("line one\n  indented two", 4)),
        ("use the x--mode flag", LoopArgs("use the x--mode flag")),  # not an option: glued
    ],
)  # fmt: skip
def test_parse_loop_args(raw: str, expected: LoopArgs) -> None:
    assert parse_loop_args(raw) == expected


@pytest.mark.parametrize(
    ("raw", "needle"),
    [
        ("", "no task given"),
        ("--max-iterations 3", "no task given"),
        ("x --max-iterations 0", "whole number >= 1"),
        ("x --max-iterations many", "whole number >= 1"),
        ("x --mode forever", "choose one of loop|task|issue|grind"),
    ],
)
def test_parse_loop_args_errors(raw: str, needle: str) -> None:
    with pytest.raises(LoopStateError, match=needle.replace("|", r"\|")):
        parse_loop_args(raw)


@settings(max_examples=100)
@given(st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=60))
def test_a_prompt_without_options_is_kept_as_typed(prompt: str) -> None:
    if "--" in prompt or not prompt.strip():
        return
    expected = "\n".join(line.rstrip() for line in prompt.strip().splitlines())
    assert parse_loop_args(prompt).prompt == expected


def test_plugin_files_carry_the_command_and_escape_it_in_json() -> None:
    files = plugin_files('/opt/my "env"/bin/forgeflare', version="9.9")
    assert '"command": "/opt/my \\"env\\"/bin/forgeflare stop-hook"' in files["hooks/hooks.json"]
    assert '"version": "9.9"' in files[".claude-plugin/plugin.json"]
    assert '/opt/my "env"/bin/forgeflare stop-hook start' in files["commands/loop.md"]
    assert '/opt/my "env"/bin/forgeflare stop-hook cancel' in files["commands/cancel.md"]
    assert (
        '/opt/my "env"/bin/forgeflare stop-hook answer --args-stdin' in files["commands/answer.md"]
    )
    assert 'Bash(/opt/my "env"/bin/forgeflare stop-hook answer:*)' in files["commands/answer.md"]
    assert not any("@FORGEFLARE@" in t or "@VERSION@" in t for t in files.values())


@pytest.mark.parametrize(
    ("typed", "prompt", "reviewer"),
    [
        ("Fix it --reviewer claude-sonnet-4-5", "Fix it", "claude-sonnet-4-5"),
        ("--reviewer=m1 Fix it --max-iterations 3", "Fix it", "m1"),
        ("Fix it", "Fix it", None),
    ],
)
def test_the_slash_command_takes_a_reviewer(typed: str, prompt: str, reviewer: str | None) -> None:
    asked = parse_loop_args(typed)
    assert (asked.prompt, asked.reviewer) == (prompt, reviewer)


def test_the_plugin_gives_the_hook_time_for_its_gate_and_its_reviewer() -> None:
    """Claude Code ends a hook at its timeout and lets the stop through: a claim's gate and
    reviewer must both fit, or a slow gate would end the loop unverified."""
    hooks = json.loads(plugin_files("forgeflare")["hooks/hooks.json"])
    (hook,) = hooks["hooks"]["Stop"][0]["hooks"]
    assert hook["timeout"] >= GATE_TIMEOUT_S + REVIEW_TIMEOUT_S + LOCK_TIMEOUT_S
    # `stop-hook install` writes the same room into .claude/settings.json.
    settings, _ = merge_stop_hook({}, "forgeflare stop-hook")
    (installed,) = settings["hooks"]["Stop"][0]["hooks"]
    assert installed["timeout"] == hook["timeout"]
