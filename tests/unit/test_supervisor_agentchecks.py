"""Offline agent checks before the night: one line with the fix for each (pure)."""

from __future__ import annotations

import pytest

from forgeflare.supervisor._agentchecks import agent_problems

MOCK = "http://127.0.0.1:8080"


@pytest.mark.parametrize(
    ("env", "root", "mode", "argv", "words"),
    [
        (
            {"ANTHROPIC_API_URL": MOCK, "ANTHROPIC_API_KEY": "k"},
            False,
            "",
            [],
            ["ANTHROPIC_BASE_URL="],
        ),
        ({"ANTHROPIC_BASE_URL": MOCK}, False, "", [], ["needs a key", "ANTHROPIC_API_KEY"]),
        (
            {"ANTHROPIC_BASE_URL": MOCK, "ANTHROPIC_API_KEY": "k"},
            False,
            "bypassPermissions",
            [],
            [],
        ),
        ({"ANTHROPIC_BASE_URL": MOCK, "ANTHROPIC_AUTH_TOKEN": "t"}, False, "", [], []),
        ({}, False, "", [], []),  # a login of its own: nothing to say offline
        ({}, True, "bypassPermissions", [], ["IS_SANDBOX=1"]),
        ({"IS_SANDBOX": "yes"}, True, "bypassPermissions", [], ["IS_SANDBOX=1"]),
        ({"IS_SANDBOX": "1"}, True, "bypassPermissions", [], []),
        ({}, True, "acceptEdits", [], []),
        ({}, True, "acceptEdits", ["claude", "--dangerously-skip-permissions"], ["IS_SANDBOX=1"]),
        ({}, False, "bypassPermissions", [], []),
    ],
)
def test_claude_code_problems(
    env: dict[str, str], root: bool, mode: str, argv: list[str], words: list[str]
) -> None:
    problems = agent_problems("claude", env, argv=argv, permission_mode=mode, root=root)
    assert len(problems) == (1 if words else 0), problems
    for word in words:
        assert word in problems[0]
    assert all("\n" not in p for p in problems)


def test_both_problems_are_named_and_other_backends_have_none_offline() -> None:
    env = {"ANTHROPIC_API_URL": MOCK}
    assert len(agent_problems("claude", env, permission_mode="bypassPermissions", root=True)) == 2
    assert agent_problems("forgeflare", env, root=True) == []


@pytest.mark.parametrize(
    ("env", "argv", "found", "problem"),
    [
        ({"CODEX_HOME": "/tmp/x/home"}, ["codex", "--sandbox", "workspace-write"], False, True),
        ({"CODEX_HOME": "/tmp/x/home", "TMPDIR": "/tmp/"}, [], False, True),
        ({"CODEX_HOME": "/tmp/x/home", "TMPDIR": "/tmp/x/t"}, [], False, False),
        ({"CODEX_HOME": "/tmp/x/home"}, [], True, False),
        ({"CODEX_HOME": "/tmp/x/home"}, ["codex", "--sandbox", "danger-full-access"], False, False),
        ({"CODEX_HOME": "/home/u/.codex-work"}, [], False, False),
        ({"CODEX_HOME": "/tmpfoo"}, [], False, False),
        ({}, [], False, False),
    ],
)
def test_codex_sandbox_helper(
    env: dict[str, str], argv: list[str], found: bool, problem: bool
) -> None:
    problems = agent_problems("codex", env, argv=argv, codex_helper_found=found)
    assert len(problems) == (1 if problem else 0)
    if problem:
        assert "codex-linux-sandbox" in problems[0]
        assert "CODEX_HOME" in problems[0]
