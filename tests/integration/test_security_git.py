"""The supervisor's git runs nothing a repository's configuration names.

A copied tree (a tarball, a copied folder) brings its own ``.git/config``: ``core.fsmonitor``,
a ``filter`` driver that ``.gitattributes`` applies to every file, hooks. A plain ``git status``
runs them (checked first, so the trap is real); the loop's git status and commit counting, the
resume's and the report's never do.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from forgeflare.supervisor import run_git
from forgeflare.supervisor.evidence import (
    GIT_TIMEOUT,
    NETWORK_TIMEOUT,
    git_argv,
    git_env,
    git_timeout,
)
from supervisor_agents.project import Project, agent_cmd


def trapped_repo(root: Path, marker: Path) -> Path:
    repo = root / "copied"
    repo.mkdir()
    run = lambda *a: subprocess.run(["git", *a], cwd=repo, check=True)  # noqa: E731
    run("init", "-q")
    (repo / "a.txt").write_text("a\n")
    (repo / ".gitattributes").write_text("* filter=evil diff=evil\n")
    (repo / ".gitignore").write_text(".fresher/runs/\n")
    run("add", "-A")
    run("-c", "user.name=T", "-c", "user.email=t@example.invalid", "commit", "-qm", "init")
    hooks = repo / "hooks"
    hooks.mkdir()
    for name in ("post-checkout", "post-commit", "pre-commit", "post-merge", "post-rewrite"):
        (hooks / name).write_text(f"#!/bin/sh\necho hook >> {marker}\n")
        (hooks / name).chmod(0o755)
    for key, value in {
        "core.fsmonitor": f"echo fsmonitor >> {marker}; false",
        "filter.evil.clean": f"echo clean >> {marker}; cat",
        "filter.evil.smudge": f"echo smudge >> {marker}; cat",
        "filter.evil.required": "true",
        "core.hooksPath": str(hooks),
        "core.pager": f"echo pager >> {marker}; cat",
        "diff.external": f"sh -c 'echo external >> {marker}'",
        "diff.evil.command": f"sh -c 'echo command >> {marker}'",
        "diff.evil.textconv": f"sh -c 'echo textconv >> {marker}; cat \"$0\"'",
        "user.name": "T",
        "user.email": "t@example.invalid",
    }.items():
        run("config", key, value)
    # A copied tree: every file's stat differs from the index.
    for path in (repo / "a.txt", repo / ".gitattributes"):
        os.utime(path, (1, 1))
    return repo


def test_plain_git_springs_the_trap(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    repo = trapped_repo(tmp_path, marker)
    subprocess.run(["git", "status"], cwd=repo, capture_output=True, check=False)
    assert marker.exists()


async def test_the_loops_git_runs_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    repo = trapped_repo(tmp_path, marker)
    project = Project(repo)
    done = await project.arun("--agent-cmd", agent_cmd("--touch"), "--max-iterations", "2")
    assert done.code in (0, 10, 11), done.stderr
    rows = project.record()["iterations"]
    assert rows
    assert rows[0]["head_before"]
    assert rows[0]["changed"] is True  # and saw the agent's file
    assert not marker.exists(), marker.read_text()


def test_run_git_in_the_copied_tree_runs_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    repo = trapped_repo(tmp_path, marker)
    (repo / "a.txt").write_text("changed\n")
    for args in (
        ("status", "--porcelain"),
        ("diff", "--stat"),
        ("diff",),
        ("diff", "HEAD"),
        ("show", "HEAD"),
        ("log", "-p", "-1"),
        ("add", "-A"),
        ("commit", "-qm", "x"),
        ("worktree", "add", "-q", str(tmp_path / "wt")),
    ):
        done = run_git(repo, *args)
        assert done.ok, (args, done.stderr)
        if args in (("diff",), ("diff", "HEAD")):
            assert "+changed" in done.stdout, (args, done.stdout)  # git's own diff, shown
    assert not marker.exists(), marker.read_text()


def test_missing_git_and_a_timeout_are_results(tmp_path: Path) -> None:
    missing = run_git(tmp_path, "status", env={"PATH": str(tmp_path)})
    assert missing.returncode == 127
    assert "cannot run git" in missing.stderr
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    slow = run_git(tmp_path, "status", timeout=1e-6)
    assert (slow.returncode, slow.stderr) == (124, "git status timed out after 1e-06s")


def test_the_policy() -> None:
    argv = git_argv(["status"], ["evil"])
    assert argv[0] == "git"
    assert argv[-1] == "status"
    assert "core.fsmonitor=false" in argv
    assert "core.hooksPath=/dev/null" in argv
    assert "filter.evil.clean=" in argv
    assert "filter.evil.required=false" in argv
    assert git_timeout(["status"]) == GIT_TIMEOUT
    assert git_timeout(["push", "origin", "x"]) == git_timeout(["clone", "u"]) == NETWORK_TIMEOUT
    env = git_env({"PATH": "/bin", "GITHUB_TOKEN": "t", "SSH_AUTH_SOCK": "/s", "GIT_EDITOR": "vi"})
    assert env == {
        "PATH": "/bin",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_PAGER": "cat",
        "GIT_EDITOR": "true",
        "FORGEFLARE_GIT_EMPTY": "",  # the values --config-env gives drivers named with "="
        "FORGEFLARE_GIT_FALSE": "false",
        "GIT_ALLOW_PROTOCOL": "none",  # a local command fetches nothing (a promisor's ext::)
        "GIT_NO_LAZY_FETCH": "1",
    }
    remote = git_env({"SSH_AUTH_SOCK": "/s", "GH_TOKEN": "t"}, remote=True)
    assert remote["SSH_AUTH_SOCK"] == "/s"
    assert "GH_TOKEN" not in remote


def test_a_filter_added_during_the_run_is_switched_off_too(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    repo = trapped_repo(tmp_path, marker)
    subprocess.run(["git", "config", "--unset", "filter.evil.clean"], cwd=repo, check=True)
    assert run_git(repo, "status", "--porcelain").ok  # the drivers are remembered here
    # The agent (or anything) writes a new driver into .git/config between two calls.
    subprocess.run(
        ["git", "config", "filter.later.clean", f"echo later >> {marker}; cat"],
        cwd=repo,
        check=True,
    )
    (repo / ".gitattributes").write_text("* filter=later\n")
    os.utime(repo / "a.txt", (2, 2))
    assert run_git(repo, "status", "--porcelain").ok
    assert not marker.exists(), marker.read_text()


def test_a_worktree_of_the_copied_tree_runs_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    repo = trapped_repo(tmp_path, marker)
    tree = tmp_path / "tree"
    assert run_git(repo, "worktree", "add", "-q", str(tree)).ok
    os.utime(tree / "a.txt", (3, 3))
    (tree / "a.txt").write_text("changed\n")
    done = run_git(tree, "status", "--porcelain")
    assert done.stdout.split() == ["M", "a.txt"]
    assert not marker.exists(), marker.read_text()
