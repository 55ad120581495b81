"""Landing a fleet loop's branch with real git repositories and worktrees."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from forgeflare.fleet._land import land, may_land


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


def commit(cwd: Path, name: str, text: str) -> None:
    (cwd / name).write_text(text)
    git(cwd, "add", name)
    git(cwd, "commit", "-qm", f"write {name}")


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, Path]:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "t")
    git(repo, "config", "user.email", "t@t")
    commit(repo, "shared.txt", "base\n")
    tree = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "-b", "forgeflare/night/parser", str(tree))
    return repo, tree


def test_may_land_table() -> None:
    assert may_land("complete", 2) is None
    assert may_land("max_iterations", 5).status == "not_complete"  # type: ignore[union-attr]
    assert may_land("complete", 0).status == "no_commits"  # type: ignore[union-attr]
    assert may_land(None, 3).status == "not_complete"  # type: ignore[union-attr]


def test_lands_by_fast_forward_after_rebase_and_gate(repo: tuple[Path, Path]) -> None:
    main, tree = repo
    commit(tree, "parser.py", "x = 1\n")
    commit(main, "other.txt", "moved on\n")  # base moved: the branch is rebased first
    result = land(
        repo=main,
        worktree=tree,
        branch="forgeflare/night/parser",
        base="main",
        gate="test -f parser.py && test -f other.txt",
        finish_type="complete",
    )
    assert result.status == "landed", result.reason
    assert (main / "parser.py").read_text() == "x = 1\n"  # the checked-out base moved with it
    log = git(main, "log", "--format=%s", "main")
    assert log.splitlines()[:2] == ["write parser.py", "write other.txt"]
    assert git(main, "rev-list", "--merges", "--count", "main") == "0"


def test_conflict_leaves_the_branch(repo: tuple[Path, Path]) -> None:
    main, tree = repo
    commit(tree, "shared.txt", "loop's\n")
    commit(main, "shared.txt", "user's\n")
    before = git(tree, "rev-parse", "HEAD")
    result = land(
        repo=main,
        worktree=tree,
        branch="forgeflare/night/parser",
        base="main",
        finish_type="complete",
    )
    assert result.status == "conflict"
    assert "shared.txt" in result.reason
    assert git(tree, "rev-parse", "HEAD") == before
    assert git(tree, "status", "--porcelain") == ""
    assert (main / "shared.txt").read_text() == "user's\n"


def test_red_gate_and_dirty_base_do_not_land(repo: tuple[Path, Path]) -> None:
    main, tree = repo
    commit(tree, "parser.py", "x = 1\n")
    red = land(
        repo=main,
        worktree=tree,
        branch="forgeflare/night/parser",
        base="main",
        gate="echo 2 failed >&2; exit 1",
        finish_type="complete",
    )
    assert red.status == "gate_failed"
    assert "exited 1: 2 failed" in red.reason
    (main / "shared.txt").write_text("uncommitted edit\n")
    dirty = land(
        repo=main,
        worktree=tree,
        branch="forgeflare/night/parser",
        base="main",
        finish_type="complete",
    )
    assert dirty.status == "base_dirty"
    assert not (main / "parser.py").exists()
    assert (main / "shared.txt").read_text() == "uncommitted edit\n"


def test_base_not_checked_out_anywhere_moves_only_forward(repo: tuple[Path, Path]) -> None:
    main, tree = repo
    git(main, "checkout", "-q", "--detach")
    commit(tree, "parser.py", "x = 1\n")
    result = land(
        repo=main,
        worktree=tree,
        branch="forgeflare/night/parser",
        base="main",
        finish_type="complete",
    )
    assert result.status == "landed", result.reason
    assert git(main, "rev-parse", "main") == git(tree, "rev-parse", "HEAD")


def test_no_commits_and_unfinished_never_land(repo: tuple[Path, Path]) -> None:
    main, tree = repo
    assert (
        land(
            repo=main,
            worktree=tree,
            branch="forgeflare/night/parser",
            base="main",
            finish_type="complete",
        ).status
        == "no_commits"
    )
    commit(tree, "parser.py", "x = 1\n")
    assert (
        land(
            repo=main,
            worktree=tree,
            branch="forgeflare/night/parser",
            base="main",
            finish_type="budget",
        ).status
        == "not_complete"
    )


def test_uncommitted_changes_in_the_worktree_are_not_landed(repo: tuple[Path, Path]) -> None:
    main, tree = repo
    commit(tree, "parser.py", "x = 1\n")
    (tree / "shared.txt").write_text("half done\n")
    result = land(
        repo=main,
        worktree=tree,
        branch="forgeflare/night/parser",
        base="main",
        finish_type="complete",
    )
    assert result.status == "error"
    assert result.reason == "uncommitted changes in the loop's worktree (shared.txt); not landed"
    assert git(main, "rev-list", "--count", "main") == "1"
