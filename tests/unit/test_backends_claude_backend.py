"""Claude Code's offline checks before the night: one line with the fix for each (pure)."""

from __future__ import annotations

import pytest

from forgeflare.supervisor.backends import BACKENDS, claude_problems

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
    problems = claude_problems(env, argv, mode, root)
    assert len(problems) == (1 if words else 0), problems
    for word in words:
        assert word in problems[0]
    assert all("\n" not in p for p in problems)


def test_both_problems_are_named_and_other_backends_have_none_offline() -> None:
    env = {"ANTHROPIC_API_URL": MOCK}
    claude = BACKENDS["claude"]()  # bypassPermissions by default
    assert len(claude.problems(env, [], root=True)) == 2
    for name in ("forgeflare", "command"):
        assert BACKENDS[name]().problems(env, [], root=True) == []
