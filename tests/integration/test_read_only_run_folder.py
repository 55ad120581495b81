"""A run folder that goes read-only mid-run: the iteration's commit is still in the record
(written whole beside the folder), and every reader sees the run finished."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from cli_inprocess import forgeflare_here
from forgeflare.supervisor.records import read_run
from platform_support import private_mounts_skip_reason, run_in_private_mounts
from project_support import git
from supervisor_agents.project import Project, base_env


def test_the_commit_of_the_iteration_that_lost_its_folder_is_kept(tmp_path: Path) -> None:
    reason = private_mounts_skip_reason()
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
    done = run_in_private_mounts(loop, base_env(), timeout=120)
    assert "Traceback" not in done.stderr
    assert "cannot write: Read-only file system" in done.stderr, done.stderr
    work = git(tmp_path, "rev-parse", "HEAD").strip()
    (run_dir,) = project.run_dirs()
    assert json.loads((run_dir / "run.json").read_text())["finished_at"] is None  # as it was
    listed = forgeflare_here(tmp_path, "runs", "--json")
    assert listed.returncode == 0, listed.stderr
    (row,) = json.loads(listed.stdout)
    assert row["finish_type"] == "error"
    record = read_run(run_dir / "run.json")  # what every reader reads
    (iteration,) = record.iterations
    assert (iteration.head_after, iteration.commits) == (work, 1)
    assert record.finish_type == "error"
