"""The morning says the truth: real loops, real git, then ``report`` and ``runs`` as a user
runs them (in the test process). A killed loop is dead in both; work left in the tree needs you."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import pytest

from cli_inprocess import forgeflare_here
from supervisor_agents.project import Project, agent_cmd, wait_for

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")


def todo(report: str) -> list[str]:
    """The "What needs you" lines of a text report."""
    lines = report.split("\n\n")[0].splitlines()
    assert lines[0] == "What needs you", report
    return [line.strip() for line in lines[1:]]


def test_a_killed_loop_is_dead_in_runs_and_needs_you_in_the_report(tmp_path: Path) -> None:
    project = Project(tmp_path)
    project.write("IMPLEMENTATION_PLAN.md", "- [ ] one\n")
    project.git_init()
    loop = project.popen("--agent-cmd", "sh -c 'echo started; sleep 60'", "--mode", "planning")
    try:
        wait_for(lambda: any((d / "iteration-001.log").exists() for d in project.run_dirs()))
        loop.send_signal(signal.SIGKILL)  # no record written after this
        loop.wait(timeout=30)
    finally:
        if loop.poll() is None:
            loop.kill()
    runs = forgeflare_here(project.dir, "runs")
    assert " dead " in runs.stdout, runs.stdout
    report = forgeflare_here(project.dir, "report", "--dir", str(project.dir))
    assert report.returncode == 0, report.stderr
    (item,) = todo(report.stdout)
    assert item.startswith("the loop died mid-run (its supervisor is gone; 0 iteration(s)"), (
        report.stdout
    )
    assert item.endswith(f"forgeflare loop --resume --dir {project.dir}")
    assert "still running" not in report.stdout
    assert "Nothing needs you" not in report.stdout


def test_work_left_in_the_tree_needs_you_until_committed(tmp_path: Path) -> None:
    project = Project(tmp_path)
    project.write("IMPLEMENTATION_PLAN.md", "- [ ] one\n")
    project.git_init()
    done = project.run("--agent-cmd", agent_cmd("--check", "--commit"), "--max-iterations", "3")
    assert done.code == 0, done.stderr
    clean = forgeflare_here(project.dir, "report", "--dir", str(project.dir))
    assert todo(clean.stdout) == [
        "Nothing needs you: no open question, no failed claim, stop or hook."
    ]
    # What an agent (or a checkpoint that could not commit) leaves behind after the run.
    project.write("src/fix.py", "x = 1\n")
    dirty = forgeflare_here(project.dir, "report", "--dir", str(project.dir))
    assert todo(dirty.stdout) == [
        f"uncommitted changes in 1 file(s) after the run: src/  →  git -C {project.dir} status"
    ]
    subprocess.run(["git", "add", "-A"], cwd=project.dir, check=True)
    subprocess.run(["git", "commit", "-qm", "the fix"], cwd=project.dir, check=True)
    # HEAD moved past the run: its tree is not the run's any more; a later edit is not its.
    project.write("later.txt", "y\n")
    after = forgeflare_here(project.dir, "report", "--dir", str(project.dir))
    assert "uncommitted" not in after.stdout


def test_an_undelivered_finish_needs_you_with_git_status(tmp_path: Path) -> None:
    project = Project(tmp_path)
    project.write("IMPLEMENTATION_PLAN.md", "- [ ] one\n")
    project.git_init()
    # An identity git refuses to commit with: the loop's checkpoint commit fails.
    subprocess.run(["git", "config", "user.name", "."], cwd=project.dir, check=True)
    done = project.run("--agent-cmd", agent_cmd("--touch"), "--max-iterations", "5")
    assert done.code == 22, done.stderr
    report = forgeflare_here(project.dir, "report", "--dir", str(project.dir))
    assert report.returncode == 0, report.stderr
    (item,) = todo(report.stdout)
    assert item.startswith("undelivered: 2 checkpoint commits failed in a row"), item
    assert item.endswith(f"→  git -C {project.dir} status")
    runs = forgeflare_here(project.dir, "runs")
    assert "undelivered" in runs.stdout
