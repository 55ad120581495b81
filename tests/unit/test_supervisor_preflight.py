"""The preflight's pure parts."""

from __future__ import annotations

import pytest

from forgeflare.supervisor.config._trust import hooks_modules


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        ([], []),
        (["python", "-m", "forgeflare", "run"], []),
        (["forgeflare", "run", "--hooks-module", "a"], ["a"]),
        (["x", "--hooks-module=a.b", "--hooks-module", "c"], ["a.b", "c"]),
        (["x", "--hooks-module"], []),  # a dangling flag: the agent itself reports it
        (["x", "--hooks-modules", "a"], []),
    ],
)
def test_hooks_modules_in_an_agent_argv(argv: list[str], expected: list[str]) -> None:
    assert hooks_modules(argv) == expected
