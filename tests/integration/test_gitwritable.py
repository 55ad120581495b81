"""A read-only ``.git`` fails the preflight only where the agent would be the one to commit:
``[fresher] checkpoint`` ``warn`` or ``off`` with a backend that commits itself.

The read-only ``.git`` is a real read-only bind mount in a private mount namespace
(``unshare -m``; root can write a ``chmod``-ed directory, not a read-only mount).
"""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest

from forgeflare.supervisor.evidence import git_write_problem
from platform_support import private_mounts_skip_reason
from project_support import run_text
from supervisor_agents.project import Project, base_env

GIT = Path("/repo/.git")


@pytest.mark.parametrize(
    ("checkpoint", "commits_itself", "writable", "fails"),
    [
        ("warn", True, False, True),
        ("off", True, False, True),
        ("commit", True, False, False),  # the loop commits, and says its own failures
        ("warn", True, True, False),
        ("off", False, False, False),  # cannot commit anyway: the other check says so
        ("commit", False, True, False),
    ],
)
def test_the_decision(checkpoint: str, commits_itself: bool, writable: bool, fails: bool) -> None:
    problem = git_write_problem(
        checkpoint=checkpoint, commits_itself=commits_itself, backend="claude", git=(GIT, writable)
    )
    assert (problem is not None) == fails
    assert (
        git_write_problem(checkpoint=checkpoint, commits_itself=True, backend="x", git=None) is None
    )
    if problem is not None:
        assert "\n" not in problem
        assert str(GIT) in problem
        assert f"checkpoint = {checkpoint!r}" in problem


def _loop_with_read_only_git(project: Project, checkpoint: str) -> subprocess.CompletedProcess[str]:
    reason = private_mounts_skip_reason()
    if reason is not None:
        pytest.skip(reason)
    project.dir.mkdir()
    project.git_init()
    project.write(
        ".fresher/config.toml",
        f'[fresher]\nmax_iterations = 1\ncheckpoint = "{checkpoint}"\n',
    )
    agent = shlex.join(["sh", "-c", "cat > /dev/null; touch agent-ran"])
    loop = shlex.join([*project.argv("--agent-cmd", agent)])
    git = shlex.quote(str(project.dir / ".git"))
    script = f"mount --bind {git} {git} && mount -o remount,bind,ro {git} && exec {loop}"
    return run_text(
        ["unshare", "-m", "sh", "-c", script],
        env=base_env(),
        timeout=120,
        cwd=project.dir,
    )


def test_a_read_only_git_with_checkpoint_warn_fails_before_any_iteration(tmp_path: Path) -> None:
    project = Project(tmp_path / "p")
    done = _loop_with_read_only_git(project, "warn")
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "is read-only" in lines[0]
    assert "checkpoint = 'warn'" in lines[0]
    assert not (project.dir / "agent-ran").exists()


def test_with_checkpoint_commit_the_loop_starts(tmp_path: Path) -> None:
    project = Project(tmp_path / "p")
    done = _loop_with_read_only_git(project, "commit")
    assert done.returncode != 2, done.stdout + done.stderr
    assert "is read-only" not in done.stderr
    assert (project.dir / "agent-ran").exists()
