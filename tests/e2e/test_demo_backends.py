"""``forgeflare demo --backend NAME``: the demo story through a real CLI agent, offline.

Claude Code, Codex, OpenCode and pi are the pinned CLIs (``claude_code_support``,
``codex_support``, ``opencode_support``, ``pi_support``), put on ``PATH`` as a user's install
would be; the demo sets the rest (the mock's URL, a dummy key, ``IS_SANDBOX`` as root, Codex's
``CODEX_HOME``, pi's ``models.json``, the story's shell tool by the agent's name for it). A
CLI that is not on ``PATH`` is one line with how to install it, exit 2, before anything is
written (those refusals run the command in this process).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from claude_code_support import require_claude_code
from cli_inprocess import run_cli
from codex_support import require_codex
from opencode_support import quiet_opencode_settings, require_opencode, seed_opencode_config
from pi_support import require_pi
from project_support import run_text


def demo_env(path: str, home: Path | None = None) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "CLAUDE", "CODEX_", "OPENAI_", "FRESHER_", "PI_"))
    }
    env["PATH"] = path
    if home is not None:  # an agent that keeps its sessions in the user's folders
        env["HOME"] = str(home)
        for name in ("CONFIG", "DATA", "CACHE", "STATE"):
            env[f"XDG_{name}_HOME"] = str(home / name.lower())
    return env


def demo(
    project: Path, backend: str, path: str, home: Path | None = None, **extra: str
) -> subprocess.CompletedProcess[str]:
    return run_text(
        [sys.executable, "-m", "forgeflare", "demo", "--backend", backend, "--dir", str(project)],
        timeout=600,
        env={**demo_env(path, home), **extra},
    )


def refused_demo(project: Path, backend: str, path: str) -> subprocess.CompletedProcess[str]:
    """A demo refused before anything starts: the command in this process (the real CLI
    runs above, as a process)."""
    argv = ["demo", "--backend", backend, "--dir", str(project)]
    return run_cli(argv, cwd=project.parent, env=demo_env(path))


def assert_the_story_was_done(project: Path, done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "The loop finished complete." in done.stdout
    assert "finish type      complete (exit 0)" in done.stdout
    plan = (project / "IMPLEMENTATION_PLAN.md").read_text()
    assert "- [ ]" not in plan
    code = (project / "calc.py").read_text()
    assert "def add(a, b):" in code
    assert "def mul(a, b):" in code
    # The agent ran the tests in each iteration: their verdict is in its output.
    logs = "".join(p.read_text() for p in project.glob(".fresher/runs/*/iteration-*.log"))
    assert logs.count("OK") >= 2, logs[-2000:]


@pytest.mark.parametrize(
    ("backend", "require"),
    [
        ("claude", require_claude_code),
        ("codex", require_codex),
        ("opencode", require_opencode),
        ("pi", require_pi),
    ],
)
def test_the_demo_runs_through_the_real_cli(tmp_path: Path, backend: str, require: object) -> None:
    assert callable(require)
    cli: Path = require()
    project = tmp_path / "demo"
    home = tmp_path / "home" if backend in ("opencode", "pi") else None
    extra: dict[str, str] = {}
    if backend == "opencode":
        seed_opencode_config(tmp_path / "home" / "config")  # no npm install per run
        # A user's settings reach the demo's OpenCode: none of its unused start-up work.
        extra = quiet_opencode_settings(tmp_path / "home")
    done = demo(project, backend, f"{cli.parent}{os.pathsep}{os.environ['PATH']}", home, **extra)
    assert_the_story_was_done(project, done)
    assert f"--backend {backend}" in done.stdout  # the loop it shows is the one it ran


@pytest.mark.parametrize(
    ("backend", "install"),
    [
        ("claude", "npm install -g @anthropic-ai/claude-code"),
        ("codex", "npm install -g @openai/codex"),
        ("opencode", "npm install -g opencode-ai"),
        ("pi", "npm install -g @mariozechner/pi-coding-agent"),
    ],
)
def test_a_cli_that_is_not_installed_is_one_line_with_how_to_install_it(
    tmp_path: Path, backend: str, install: str
) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    project = tmp_path / "demo"
    done = refused_demo(project, backend, str(empty))
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert f"--backend {backend}: `{backend}` is not installed" in line
    assert install in line
    assert not project.exists()  # found before anything was written


def test_an_unknown_backend_names_the_registrys(tmp_path: Path) -> None:
    done = refused_demo(tmp_path / "demo", "gemini", os.environ["PATH"])
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert "--backend gemini: not a backend (one of: " in line
    assert "claude" in line
    assert "codex" in line
