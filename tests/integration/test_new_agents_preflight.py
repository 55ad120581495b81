"""The ``opencode`` and ``pi`` backends' offline checks stop ``forgeflare loop`` before any
iteration: one line naming the fix, exit 2, no run started."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from project_support import run_text


@pytest.mark.parametrize(
    ("backend", "env", "said"),
    [
        ("opencode", {"ANTHROPIC_API_URL": "http://127.0.0.1:9"}, "ANTHROPIC_BASE_URL="),
        ("opencode", {"ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}, "http://127.0.0.1:9/v1"),
        ("pi", {"ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}, "models.json"),
    ],
)
def test_a_base_url_the_cli_would_miss_stops_the_loop_before_it_starts(
    tmp_path: Path, backend: str, env: dict[str, str], said: str
) -> None:
    project = tmp_path / "p"
    project.mkdir()
    run_env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "FRESHER_"))}
    run_env.update(
        env,
        HOME=str(tmp_path / "home"),
        XDG_STATE_HOME=str(tmp_path / "state"),
        PI_CODING_AGENT_DIR=str(tmp_path / "pi-agent"),
        ANTHROPIC_API_KEY="test-key",
        FRESHER_AGENT_COMMAND="sh",  # found on PATH: the check after it is the one under test
    )
    done = run_text(
        [sys.executable, "-m", "forgeflare", "loop", "--backend", backend, "--max-iterations", "1"],
        cwd=project,
        env=run_env,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if "error" in line]
    assert len(errors) == 1, done.stderr
    assert said in errors[0]
    assert not (project / ".fresher" / "runs").exists()
