"""The ``opencode`` and ``pi`` backends' offline checks stop ``forgeflare loop`` before any
iteration: one line naming the fix, exit 2, no run started (in the test process: nothing starts)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cli_inprocess import run_cli


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
    done = run_cli(
        ["loop", "--backend", backend, "--max-iterations", "1"], cwd=project, env=run_env
    )
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if "error" in line]
    assert len(errors) == 1, done.stderr
    assert said in errors[0]
    assert not (project / ".fresher" / "runs").exists()


@pytest.mark.parametrize(
    ("backend", "planted"),
    [
        ("opencode", ".opencode/plugin/evil.js"),
        ("opencode", "opencode.json"),
        ("pi", ".pi/extensions/evil.ts"),
    ],
)
def test_what_the_cli_loads_from_a_clone_waits_for_trust(
    tmp_path: Path, backend: str, planted: str
) -> None:
    """OpenCode and pi load their own plugins and extensions from the project and run them
    outside forgeflare's box: a clone's are trust items, and the CLI never starts before."""
    project = tmp_path / "p"
    (project / planted).parent.mkdir(parents=True, exist_ok=True)
    (project / planted).write_text("// would run as the user\n")
    marker = tmp_path / "cli-started"
    agent = tmp_path / "agent.sh"
    agent.write_text(f"#!/bin/sh\ntouch {marker}\n")
    agent.chmod(0o755)
    drop = ("ANTHROPIC_", "FRESHER_", "FORGEFLARE_")  # FORGEFLARE_TRUST would trust it all
    run_env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    run_env.update(
        HOME=str(tmp_path / "home"),
        XDG_STATE_HOME=str(tmp_path / "state"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        ANTHROPIC_API_KEY="test-key",
        FRESHER_AGENT_COMMAND=str(agent),
    )
    done = run_cli(
        ["loop", "--backend", backend, "--max-iterations", "1"], cwd=project, env=run_env
    )
    assert done.returncode == 2, done.stderr
    assert "not trusted" in done.stderr, done.stderr
    assert planted in done.stderr, done.stderr
    assert not marker.exists()
    shown = run_cli(["trust", "--show", "--dir", str(project)], cwd=tmp_path, env=run_env)
    assert planted in shown.stdout, shown.stdout + shown.stderr
