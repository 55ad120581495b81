"""A cloned repository's links, FIFOs and folders never make forgeflare write outside it: each
probe through a real ``forgeflare loop`` (or ``run``) process ends at once with one line and
exit 2, and the user's file outside the project is untouched."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cli_inprocess import run_cli
from project_support import run_text
from supervisor_agents.project import Project, base_env

OWN = "the user's own\n"


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    path = tmp_path / "home" / ".bashrc"
    path.parent.mkdir()
    path.write_text(OWN)
    return path


@pytest.fixture
def clone(tmp_path: Path) -> Project:
    project = Project(tmp_path / "clone")
    project.dir.mkdir()
    project.git_init()
    return project


LOOP = ("loop", "--agent-cmd", "true", "--no-sandbox")


def _loop(project: Project) -> subprocess.CompletedProcess[str]:
    """``forgeflare loop`` in ``project``, refused before it starts: in the test process."""
    return run_cli(LOOP, cwd=project.dir, env=base_env(FORGEFLARE_TRUST="1"))


def _loop_process(project: Project) -> subprocess.CompletedProcess[str]:
    """The same as a process: one that could hang is killed at the timeout."""
    argv = [sys.executable, "-m", "forgeflare", *LOOP]
    return run_text(argv, cwd=project.dir, env=base_env(FORGEFLARE_TRUST="1"), timeout=60)


def _one_line(done: subprocess.CompletedProcess[str], *words: str) -> None:
    assert done.returncode == 2, (done.returncode, done.stderr)
    errors = [line for line in done.stderr.splitlines() if line.startswith("forgeflare: error:")]
    assert len(errors) == 1, done.stderr
    assert "Traceback" not in done.stderr
    for word in words:
        assert word in errors[0], errors[0]


def test_a_committed_lock_link_is_not_written_through(clone: Project, victim: Path) -> None:
    lock = clone.dir / ".fresher" / "loop.lock"
    lock.parent.mkdir()
    lock.symlink_to(victim)
    _one_line(_loop(clone), "loop.lock", "symbolic link")
    assert victim.read_text() == OWN


def test_a_lock_that_is_a_fifo_is_refused_without_a_hang(clone: Project) -> None:
    lock = clone.dir / ".fresher" / "loop.lock"
    lock.parent.mkdir()
    os.mkfifo(lock)
    _one_line(_loop_process(clone), "loop.lock", "a FIFO, not a regular file")


@pytest.mark.parametrize("folder", [".fresher", ".fresher/runs", ".entire", ".forgeflare"])
def test_a_folder_link_out_of_the_project_is_refused(
    clone: Project, victim: Path, folder: str
) -> None:
    elsewhere = victim.parent / "records"
    elsewhere.mkdir()
    link = clone.dir / folder
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(elsewhere)
    _one_line(_loop(clone), folder, "leads outside the project")
    assert list(elsewhere.iterdir()) == []
    assert victim.read_text() == OWN


def test_a_log_dir_through_a_link_is_refused_and_needs_trust(clone: Project, victim: Path) -> None:
    elsewhere = victim.parent / "records"
    elsewhere.mkdir()
    (clone.dir / "logs").symlink_to(elsewhere)
    clone.write(".fresher/config.toml", '[paths]\nlog_dir = "logs/runs"\n')
    _one_line(_loop(clone), "logs/runs", "leads outside the project")
    assert list(elsewhere.iterdir()) == []
    # The [paths] check of trust resolves too: the setting is a trust item, not lexically inside.
    shown = run_cli(["trust", "--show"], cwd=clone.dir, env=base_env())
    assert "[paths] log_dir" in shown.stdout, shown.stdout


def test_run_refuses_a_transcript_folder_link(clone: Project, victim: Path) -> None:
    elsewhere = victim.parent / "transcripts"
    elsewhere.mkdir()
    (clone.dir / ".entire").symlink_to(elsewhere)
    done = run_text(
        [sys.executable, "-m", "forgeflare", "run", "--trust-project", "do it"],
        cwd=clone.dir,
        env=base_env(ANTHROPIC_API_KEY="k", ANTHROPIC_API_URL="http://127.0.0.1:9"),
        timeout=60,
    )
    _one_line(done, ".entire", "leads outside the project")
    assert list(elsewhere.iterdir()) == []
