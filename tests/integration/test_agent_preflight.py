"""Agents checked before the night, with the real Claude Code and Codex: what makes them fail
(root without IS_SANDBOX=1, ANTHROPIC_API_URL instead of ANTHROPIC_BASE_URL, CODEX_HOME under
/tmp) ends the loop in one line, exit 2, before any iteration; the same environment makes the
real CLI fail."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from claude_code_support import claude_env
from cli_inprocess import run_cli
from codex_support import codex_env, require_codex, write_codex_home
from mockapi_support import MockAPI, MockServer, start_mock_process
from project_support import run_text
from supervisor_agents.project import Project


def _claude_alone(claude: Path, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    argv = [str(claude), "-p", "--output-format", "stream-json", "--verbose"]
    argv += ["--permission-mode", "bypassPermissions"]
    return subprocess.run(
        argv, cwd=cwd, env=env, input="hi", capture_output=True, text=True, timeout=120, check=False
    )


def _loop(
    project: Project, backend: str, cli: Path, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    """``forgeflare loop`` through its real entry point in this process (a refusal before
    anything starts needs no process of its own; the CLIs above are real ones)."""
    argv = ["loop", "--dir", str(project.dir), "--backend", backend, "--agent-cmd", str(cli)]
    return run_cli([*argv, "--max-iterations", "1"], cwd=project.dir, env=env)


def _check(project: Project, claude: Path, env: dict[str, str], server: MockServer) -> str:
    """The loop refuses in one line, exit 2, before any iteration (no run, no request)."""
    asked = len(server.requests())
    done = _loop(project, "claude", claude, env)
    assert done.returncode == 2, done.stderr[-3000:]
    (line,) = done.stderr.strip().splitlines()
    assert not (project.dir / ".fresher" / "runs").exists()
    assert len(server.requests()) == asked
    return line


@pytest.mark.skipif(os.geteuid() != 0, reason="the refusal is Claude Code's as root")
def test_claude_code_as_root_without_is_sandbox(
    tmp_path: Path, mock_api: MockAPI, claude_code: Path
) -> None:
    server = mock_api({"responses": [], "when_exhausted": "end_turn"})
    env = claude_env(tmp_path / "home", server.url)
    del env["IS_SANDBOX"]
    alone = _claude_alone(claude_code, tmp_path, env)
    assert alone.returncode != 0  # the real CLI refuses (its wording is its own)
    project = Project(tmp_path / "p")
    project.dir.mkdir()
    line = _check(project, claude_code, env, server)
    assert "IS_SANDBOX=1" in line
    env["IS_SANDBOX"] = "1"  # the fix the line names lets the CLI start
    assert _claude_alone(claude_code, tmp_path, env).returncode == 0
    assert server.requests()


def test_claude_code_with_anthropic_api_url_only(
    tmp_path: Path, mock_api: MockAPI, claude_code: Path
) -> None:
    server = mock_api({"responses": [], "when_exhausted": "end_turn"})
    env = claude_env(tmp_path / "home", server.url)
    del env["ANTHROPIC_BASE_URL"], env["ANTHROPIC_API_KEY"]
    env["ANTHROPIC_API_URL"] = server.url
    alone = _claude_alone(claude_code, tmp_path, env)
    assert alone.returncode != 0  # "Not logged in": it never asked the mock
    assert server.requests() == []
    project = Project(tmp_path / "p")
    project.dir.mkdir()
    line = _check(project, claude_code, env, server)
    assert f"ANTHROPIC_BASE_URL={server.url}" in line


def test_codex_with_its_home_under_tmp_loses_its_sandbox_helper(tmp_path: Path) -> None:
    codex = require_codex()
    assert str(tmp_path).startswith("/tmp/")
    script = {"steps": [{"exec": "echo made > made.txt"}, {"text": "done"}]}
    server = start_mock_process(
        script, directory=tmp_path / "mock", extra_args=["--api", "responses"]
    )
    try:
        home = write_codex_home(tmp_path / "codex-home", f"{server.url}/v1")
        env = codex_env(home, tmp_path / "tmp")
        del env["TMPDIR"]  # the default: /tmp, which Codex's sandbox gives its commands fresh
        work = tmp_path / "work"
        work.mkdir()
        argv = [str(codex), "exec", "--json", "--skip-git-repo-check", "--sandbox"]

        def alone(env: dict[str, str]) -> bool:
            """Did Codex alone run the scripted command (and make the file)?"""
            (work / "made.txt").unlink(missing_ok=True)
            done = run_text(
                [*argv, "workspace-write", "-"],
                cwd=work,
                env=env,
                input="make the file",
                timeout=180,
            )
            assert done.returncode == 0, done.stderr[-2000:]  # the turn is "ok" either way
            return (work / "made.txt").exists()

        # Its helper lost, Codex drops every command and still ends the turn well.
        assert not alone(env)
        assert alone({**env, "TMPDIR": str(tmp_path / "tmp")})
        project = Project(tmp_path / "p")
        project.dir.mkdir()
        asked = len(server.requests())
        done = _loop(project, "codex", codex, env)
    finally:
        server.stop()
    assert done.returncode == 2, done.stderr[-3000:]
    (line,) = done.stderr.strip().splitlines()
    assert "codex-linux-sandbox" in line
    assert "CODEX_HOME" in line
    assert not (project.dir / ".fresher" / "runs").exists()
    assert len(server.requests()) == asked
