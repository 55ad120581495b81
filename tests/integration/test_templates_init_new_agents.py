"""``forgeflare init --opencode`` / ``--pi``: the backend set, and an AGENTS.md that promises no
hook the agent never runs."""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path

import pytest

from cli_inprocess import run_cli


def init(tmp_path: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    """``forgeflare init <tmp_path>/p FLAGS``, in the test process."""
    return run_cli(["init", str(tmp_path / "p"), *flags], cwd=tmp_path)


@pytest.mark.parametrize("backend", ["opencode", "pi"])
def test_init_makes_the_cli_the_agent(tmp_path: Path, backend: str) -> None:
    done = init(tmp_path, f"--{backend}")
    assert done.returncode == 0, done.stderr
    project = tmp_path / "p"
    config = tomllib.loads((project / ".fresher" / "config.toml").read_text())
    assert config["agent"]["backend"] == backend
    assert "permission_mode" not in config["agent"]  # a Claude Code flag
    agents = (project / ".fresher" / "AGENTS.md").read_text()
    assert "bash-guard.py" not in agents  # forgeflare's hooks never run inside this CLI
    assert "nothing here blocks them" in agents
    assert "<loop-done>COMPLETE</loop-done>" in agents


def test_two_agents_at_once_is_a_usage_error(tmp_path: Path) -> None:
    done = init(tmp_path, "--opencode", "--pi")
    assert done.returncode == 2
    assert "choose one agent" in done.stderr
    assert not (tmp_path / "p" / ".fresher").exists()
