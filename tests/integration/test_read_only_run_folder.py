"""A run folder that goes read-only mid-run: the iteration's commit is still in the record
(written whole beside the folder), and every reader sees the run finished."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from forgeflare.supervisor._records import read_run
from project_support import git
from supervisor_agents.project import Project, base_env, forgeflare


def _private_mounts() -> str | None:
    if shutil.which("unshare") is None:
        return "unshare (util-linux) is not installed"
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"],
        capture_output=True,
        check=False,
    )
    return None if probe.returncode == 0 else "mounting a tmpfs needs root (unshare -m)"


def test_the_commit_of_the_iteration_that_lost_its_folder_is_kept(tmp_path: Path) -> None:
    reason = _private_mounts()
    if reason is not None:
        pytest.skip(reason)
    project = Project(tmp_path)
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "config", "user.name", "t")
    git(tmp_path, "config", "user.email", "t@t")
    project.write(".gitignore", ".fresher/runs/\n")
    git(tmp_path, "add", ".gitignore")
    git(tmp_path, "commit", "-qm", "init")
    # The agent commits its work, then the run folder goes read-only under the loop.
    agent = (
        "sh -c 'echo work > work.txt && git add work.txt && git commit -qm work && "
        'd="$FRESHER_PROJECT_DIR/.fresher/runs/$FRESHER_RUN_ID"; '
        'mount --bind "$d" "$d" && mount -o remount,ro,bind "$d"\''
    )
    loop = shlex.join(
        [sys.executable, "-m", "forgeflare", "loop", "--dir", str(tmp_path),
         "--agent-cmd", agent, "--max-iterations", "3", "--mode", "planning"]
    )  # fmt: skip
    done = subprocess.run(
        ["unshare", "-m", "sh", "-c", f"mount --make-rprivate / && exec {loop}"],
        capture_output=True,
        text=True,
        env=base_env(),
        timeout=120,
        check=False,
    )
    assert "Traceback" not in done.stderr
    assert "cannot write: Read-only file system" in done.stderr, done.stderr
    work = git(tmp_path, "rev-parse", "HEAD").strip()
    (run_dir,) = project.run_dirs()
    assert json.loads((run_dir / "run.json").read_text())["finished_at"] is None  # as it was
    listed = forgeflare(tmp_path, "runs", "--json")
    assert listed.returncode == 0, listed.stderr
    (row,) = json.loads(listed.stdout)
    assert row["finish_type"] == "error"
    record = read_run(run_dir / "run.json")  # what every reader reads
    (iteration,) = record.iterations
    assert (iteration.head_after, iteration.commits) == (work, 1)
    assert record.finish_type == "error"
