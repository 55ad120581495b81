"""``init --claude`` / ``--codex`` write an AGENTS.md that promises no hook those agents skip."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cli_inprocess import run_cli


@pytest.mark.parametrize("flag", ["--claude", "--codex"])
def test_another_agent_is_promised_no_forgeflare_hook(tmp_path: Path, flag: str) -> None:
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config"), "HOME": str(tmp_path)}
    own = run_cli(["init", str(tmp_path / "own")], cwd=tmp_path, env=env)
    other = run_cli(["init", flag, str(tmp_path / "other")], cwd=tmp_path, env=env)
    assert (own.returncode, other.returncode) == (0, 0), own.stderr + other.stderr
    own_text = (tmp_path / "own" / ".fresher" / "AGENTS.md").read_text()
    text = (tmp_path / "other" / ".fresher" / "AGENTS.md").read_text()
    assert "bash-guard.py" in own_text  # the own agent runs the guard: it may say so
    assert "bash-guard.py" not in text
    assert "hooks.toml" not in text
    assert "nothing here blocks them" in text
    assert "<loop-done>COMPLETE</loop-done>" in text
