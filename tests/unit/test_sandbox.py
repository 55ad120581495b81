"""The box's plan: the shared folders it empties (``/var/tmp``, ``/srv``, ``/mnt``, ``/media``)
and what it shows again inside them, the order bwrap gets, the git parts kept read-only, the
generated gitconfig."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forgeflare.security._sandbox import (
    GIT_DIR_ENV,
    SHARED_DIRS,
    SandboxPlan,
    bwrap_argv,
    git_readonly_paths,
    gitconfig_text,
    sandbox_plan,
)
from project_support import git, new_repo

P = Path("/w/project")


def _tmpfs(argv: list[str]) -> list[str]:
    return [argv[i + 1] for i, a in enumerate(argv) if a == "--tmpfs"]


def test_shared_folders_are_emptied_before_the_home_and_the_stores_inside_them() -> None:
    plan = SandboxPlan(
        project=P,
        home=Path("/var/tmp/u/home"),
        hidden_dirs=(Path("/run"), Path("/var/tmp")),
        hidden_stores=(Path("/var/tmp/u/config/forgeflare"),),
        readable=(Path("/var/tmp/u/bin"),),
    )
    argv = bwrap_argv(plan, ["true"])
    assert _tmpfs(argv) == [
        "/tmp",
        "/run",
        "/var/tmp",
        "/var/tmp/u/home",
        "/var/tmp/u/config/forgeflare",
    ]
    # What is shown again comes after every folder that hides it.
    assert argv.index("/var/tmp/u/bin") > argv.index("/var/tmp/u/config/forgeflare")
    assert argv.index("/w/project") > argv.index("/var/tmp/u/bin")


@pytest.fixture
def in_var_tmp() -> Iterator[Path]:
    if not os.access("/var/tmp", os.W_OK) or not Path("/var/tmp").is_dir():
        pytest.skip("needs a writable /var/tmp")
    root = Path(tempfile.mkdtemp(prefix="forgeflare-shared-", dir="/var/tmp"))
    try:
        yield root.resolve()
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.mark.linux_only("the shared folders are Linux's")
def test_the_plan_empties_the_shared_folders_and_shows_path_dirs_in_them_again(
    in_var_tmp: Path,
) -> None:
    tools = in_var_tmp / "tools" / "bin"
    project = in_var_tmp / "project"
    for path in (tools, project):
        path.mkdir(parents=True)
    env = {"HOME": "", "PATH": f"{tools}:/usr/bin:/var/tmp", GIT_DIR_ENV: ""}
    plan = sandbox_plan(project, network=True, env=env)
    shared = [Path(d) for d in SHARED_DIRS if Path(d).is_dir() and not Path(d).is_symlink()]
    assert Path("/var/tmp") in shared
    assert set(shared) <= set(plan.hidden_dirs)
    assert tools in plan.readable  # a PATH folder in a hidden one is shown again, read-only
    assert Path("/usr/bin") not in plan.readable  # never hidden: nothing to show again
    assert Path("/var/tmp") not in plan.readable  # a hidden folder itself stays hidden


@given(st.text(max_size=40), st.text(max_size=40))
def test_the_generated_gitconfig_holds_only_who_commits(name: str, email: str) -> None:
    text = gitconfig_text(name, email)
    lines = text.splitlines()
    assert lines[0] == "[user]"
    assert len(lines) == 3
    assert lines[1].startswith('\tname = "')
    assert lines[2].startswith('\temail = "')


def test_the_generated_gitconfig_is_read_by_git_as_written(tmp_path: Path) -> None:
    path = tmp_path / "gitconfig"
    path.write_text(gitconfig_text('Ann "the" Dev\n[core]\npager = x', "a\\b@example.invalid"))
    out = subprocess.run(
        ["git", "config", "--file", str(path), "--list"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert out == ['user.name=Ann "the" Dev [core] pager = x', "user.email=a\\b@example.invalid"]


def test_home_hidden_first_then_what_is_shown_then_git_parts_read_only() -> None:
    home = Path("/h")
    plan = SandboxPlan(
        project=P,
        home=home,
        readable=(Path("/h/.rustup"),),
        hidden_stores=(Path("/x/config/forgeflare"),),
        writable=(Path("/h/.cache/pip"),),
        gitconfig=Path("/h/.cache/forgeflare/box-gitconfig"),
        git_pinned=(P / ".git",),
        git_readonly=(P / ".git" / "hooks", P / ".git" / "config"),
    )
    argv = bwrap_argv(plan, ["true"])
    at = argv.index
    assert argv[at("/h") - 1] == "--tmpfs"
    assert at("/h") < at("/x/config/forgeflare") < at("/h/.rustup")
    assert argv[at("/h/.gitconfig") - 2 : at("/h/.gitconfig") + 1] == [
        "--ro-bind",
        "/h/.cache/forgeflare/box-gitconfig",
        "/h/.gitconfig",
    ]
    assert at("/h/.rustup") < at("/w/project") < at("/h/.cache/pip")
    git = at("/w/project/.git")
    assert argv[git - 1] == "--bind"
    assert git < at("/w/project/.git/hooks") < at("/w/project/.git/config")
    assert argv[at("/w/project/.git/hooks") - 1] == "--ro-bind"


def test_git_parts_read_only_in_a_repository_and_a_worktree(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo")
    readonly, pinned = git_readonly_paths(repo, None)
    git_dir = repo / ".git"
    assert pinned == [git_dir]
    assert readonly == [git_dir / "hooks", git_dir / "config", git_dir / "info"]
    git(repo, "worktree", "add", "-q", str(tmp_path / "wt"), "-b", "side")
    wt = tmp_path / "wt"
    readonly, pinned = git_readonly_paths(wt, git_dir)
    assert pinned == []
    own = git_dir / "worktrees" / "wt"
    assert readonly == [
        wt / ".git",
        git_dir / "hooks",
        git_dir / "config",
        git_dir / "info",
        own / "commondir",
        own / "gitdir",
    ]
    assert git_readonly_paths(tmp_path, None) == ([], [])  # no git: nothing
