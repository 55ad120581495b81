"""Secrets stay out of children: hooks and Bash commands never see the API key unasked, and
nothing a loop writes contains it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from agent_support import run_agent, text_response, tool_response
from cli_inprocess import run_cli
from mockapi_support import MockAPI
from project_support import run_text
from supervisor_agents.project import base_env

KEY = "sk-ant-test-0123456789-do-not-leak"

HOOKS = """[[hooks]]
event = "PreToolUse"
phase = "observe"
command = "env > hook-env.txt; echo '{}'"

[[hooks]]
event = "Stop"
command = "env > stop-env.txt; echo '{}'"
"""


def script() -> dict[str, Any]:
    return {
        "responses": [
            tool_response(("Bash", {"command": "env > bash-env.txt"})),
            text_response("done"),
        ]
    }


def test_hooks_and_bash_get_no_key(tmp_path: Path, mock_api: MockAPI) -> None:
    (tmp_path / ".forgeflare").mkdir()
    (tmp_path / ".forgeflare" / "hooks.toml").write_text(HOOKS)
    server = mock_api(script())
    done = run_agent(tmp_path, server.url, env={"ANTHROPIC_API_KEY": KEY, "MY_TOKEN": "t0k"})
    assert done.returncode == 0, done.stderr
    for name in ("hook-env.txt", "stop-env.txt", "bash-env.txt"):
        text = (tmp_path / name).read_text()
        assert KEY not in text, name
        assert "ANTHROPIC_API_KEY" not in text, name
        assert "MY_TOKEN" not in text, name
        assert "PATH=" in text  # the rest of the environment is there


def test_pass_env_lets_a_named_one_through(tmp_path: Path, mock_api: MockAPI) -> None:
    server = mock_api(script())
    done = run_agent(tmp_path, server.url, "go", "--pass-env", "MY_TOKEN", env={"MY_TOKEN": "t0k"})
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "bash-env.txt").read_text()
    assert "MY_TOKEN=t0k" in text
    assert "ANTHROPIC_API_KEY" not in text


def test_nothing_a_loop_writes_contains_the_key(tmp_path: Path, mock_api: MockAPI) -> None:
    project = tmp_path / "p"
    init = run_cli(["init", project], cwd=tmp_path, env=base_env())  # the loop is the point
    assert init.returncode == 0, init.stderr
    (project / ".fresher" / "hooks" / "started").write_text("#!/bin/sh\nenv\n")
    server = mock_api({**script(), "when_exhausted": "end_turn"})
    env = base_env(ANTHROPIC_API_URL=server.url, ANTHROPIC_API_KEY=KEY)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "forgeflare",
            "loop",
            "--dir",
            str(project),
            "--max-iterations",
            "2",
        ],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode in (0, 10, 11), done.stderr
    assert KEY not in done.stdout + done.stderr
    written = [p for p in project.rglob("*") if p.is_file()]
    assert any(p.name == "run.json" for p in written)
    assert any(p.name == "loop.log" for p in written)
    for path in written:
        assert KEY.encode() not in path.read_bytes(), path
    assert KEY.encode() not in Path(server.record_path).read_bytes()


def test_hooks_test_runs_hooks_without_the_key(tmp_path: Path) -> None:
    (tmp_path / ".forgeflare").mkdir()
    (tmp_path / ".forgeflare" / "hooks.toml").write_text(HOOKS)
    done = run_text(
        [sys.executable, "-m", "forgeflare", "hooks", "test", "PreToolUse"],
        cwd=tmp_path,
        env=base_env(ANTHROPIC_API_KEY=KEY, MY_TOKEN="t0k", FORGEFLARE_TRUST="1"),
    )
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "hook-env.txt").read_text()
    assert KEY not in text
    assert "MY_TOKEN" not in text
    assert "PATH=" in text
