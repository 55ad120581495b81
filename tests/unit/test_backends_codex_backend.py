"""Codex's offline check before the night: its sandbox helper, one line with the fix (pure)."""

from __future__ import annotations

from pathlib import Path

import pytest

from forgeflare.supervisor.backends import BACKENDS, codex_problems


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
    problems = codex_problems(env, argv, found)
    assert len(problems) == (1 if problem else 0)
    if problem:
        assert "codex-linux-sandbox" in problems[0]
        assert "CODEX_HOME" in problems[0]


def test_codex_looks_for_its_helper_on_the_agents_path(tmp_path: Path) -> None:
    env = {"CODEX_HOME": "/tmp/x/home", "PATH": str(tmp_path)}
    codex = BACKENDS["codex"]()
    assert len(codex.problems(env, [], root=False)) == 1
    helper = tmp_path / "codex-linux-sandbox"
    helper.write_text("#!/bin/sh\n")
    helper.chmod(0o755)
    assert codex.problems(env, [], root=False) == []
