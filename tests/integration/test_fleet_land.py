"""Landing a fleet loop's branch with real git repositories and worktrees."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from forgeflare.fleet import Landing, LandResult, land, land_pr, may_land
from project_support import git


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


def parser_branch(tree: Path, finish_type: str = "complete", **options: Any) -> Landing:
    """The loop's branch ``forgeflare/night/parser``, checked out in ``tree``, into ``main``."""
    return Landing(tree, "forgeflare/night/parser", "main", finish_type, **options)


def test_may_land_table() -> None:
    assert may_land("complete", 2) is None
    assert may_land("max_iterations", 5).status == "not_complete"  # type: ignore[union-attr]
    assert may_land("complete", 0).status == "no_commits"  # type: ignore[union-attr]
    assert may_land(None, 3).status == "not_complete"  # type: ignore[union-attr]


def test_lands_by_fast_forward_after_rebase_and_gate(repo: tuple[Path, Path]) -> None:
    main, tree = repo
    commit(tree, "parser.py", "x = 1\n")
    commit(main, "other.txt", "moved on\n")  # base moved: the branch is rebased first
    result = land(main, parser_branch(tree, gate="test -f parser.py && test -f other.txt"))
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
    result = land(main, parser_branch(tree))
    assert result.status == "conflict"
    assert "shared.txt" in result.reason
    assert git(tree, "rev-parse", "HEAD") == before
    assert git(tree, "status", "--porcelain") == ""
    assert (main / "shared.txt").read_text() == "user's\n"


def test_red_gate_and_dirty_base_do_not_land(repo: tuple[Path, Path]) -> None:
    main, tree = repo
    commit(tree, "parser.py", "x = 1\n")
    red = land(main, parser_branch(tree, gate="echo 2 failed >&2; exit 1"))
    assert red.status == "gate_failed"
    assert "exited 1: 2 failed" in red.reason
    (main / "shared.txt").write_text("uncommitted edit\n")
    dirty = land(main, parser_branch(tree))
    assert dirty.status == "base_dirty"
    assert not (main / "parser.py").exists()
    assert (main / "shared.txt").read_text() == "uncommitted edit\n"


def test_base_not_checked_out_anywhere_moves_only_forward(repo: tuple[Path, Path]) -> None:
    main, tree = repo
    git(main, "checkout", "-q", "--detach")
    commit(tree, "parser.py", "x = 1\n")
    result = land(main, parser_branch(tree))
    assert result.status == "landed", result.reason
    assert git(main, "rev-parse", "main") == git(tree, "rev-parse", "HEAD")


def test_no_commits_and_unfinished_never_land(repo: tuple[Path, Path]) -> None:
    main, tree = repo
    assert land(main, parser_branch(tree)).status == "no_commits"
    commit(tree, "parser.py", "x = 1\n")
    assert land(main, parser_branch(tree, "budget")).status == "not_complete"


def test_uncommitted_changes_in_the_worktree_are_not_landed(repo: tuple[Path, Path]) -> None:
    main, tree = repo
    commit(tree, "parser.py", "x = 1\n")
    (tree / "shared.txt").write_text("half done\n")
    result = land(main, parser_branch(tree))
    assert result.status == "error"
    assert result.reason == "uncommitted changes in the loop's worktree (shared.txt); not landed"
    assert git(main, "rev-list", "--count", "main") == "1"


GH = """#!/bin/sh
# stand-in gh: records its argv and stdin, prints a pull request URL
printf '%s\\n' "$@" > "$GH_LOG.argv"
cat > "$GH_LOG.stdin"
echo https://github.example/o/r/pull/7
"""


@pytest.fixture
def fake_gh(tmp_path: Path) -> dict[str, str]:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    gh = bindir / "gh"
    gh.write_text(GH)
    gh.chmod(0o755)
    return {"PATH": f"{bindir}:/usr/bin:/bin", "GH_LOG": str(tmp_path / "gh")}


def add_origin(main: Path, tmp_path: Path, refspec: str) -> Path:
    """A bare ``origin`` for ``main``, with ``refspec`` pushed to it."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(main, "remote", "add", "origin", str(remote))
    git(main, "push", "-q", "origin", refspec)
    return remote


def land_pr_in(main: Path, landing: Landing, env: dict[str, str]) -> LandResult:
    return land_pr(main, landing, title="night/parser: the parser", body="the report\n", env=env)


def test_land_pr_pushes_and_opens_a_pull_request(
    repo: tuple[Path, Path], tmp_path: Path, fake_gh: dict[str, str]
) -> None:
    main, tree = repo
    remote = add_origin(main, tmp_path, "main")
    commit(tree, "parser.py", "x = 1\n")
    commit(main, "other.txt", "moved on\n")
    result = land_pr_in(main, parser_branch(tree, gate="test -f parser.py"), fake_gh)
    assert result.status == "pr_opened", result
    assert result.reason == "pushed to origin; pull request https://github.example/o/r/pull/7"
    # the rebased branch is on the remote; the base branch is untouched
    pushed = git(remote, "rev-parse", "refs/heads/forgeflare/night/parser")
    assert pushed == git(tree, "rev-parse", "HEAD")
    assert git(remote, "rev-list", "--count", "main") == "1"
    argv = (tmp_path / "gh.argv").read_text().splitlines()
    assert argv[:2] == ["pr", "create"]
    assert argv[argv.index("--base") + 1] == "main"
    assert argv[argv.index("--head") + 1] == "forgeflare/night/parser"
    assert argv[argv.index("--title") + 1] == "night/parser: the parser"
    assert argv[-2:] == ["--body-file", "-"]
    assert (tmp_path / "gh.stdin").read_text() == "the report\n"


def test_land_pr_never_forces_a_push(
    repo: tuple[Path, Path], tmp_path: Path, fake_gh: dict[str, str]
) -> None:
    main, tree = repo
    remote = add_origin(main, tmp_path, "main:refs/heads/forgeflare/night/parser")
    commit(main, "elsewhere.txt", "someone else\n")
    git(main, "push", "-q", "origin", "main:refs/heads/forgeflare/night/parser")
    commit(tree, "parser.py", "x = 1\n")
    before = git(remote, "rev-parse", "refs/heads/forgeflare/night/parser")
    result = land_pr_in(main, replace(parser_branch(tree), base="main~1"), fake_gh)
    assert result.status == "error"
    assert result.reason.startswith("git push origin forgeflare/night/parser failed")
    assert git(remote, "rev-parse", "refs/heads/forgeflare/night/parser") == before
    assert not (tmp_path / "gh.argv").exists()


def test_land_pr_without_a_remote_or_gh_leaves_the_branch(
    repo: tuple[Path, Path], tmp_path: Path, fake_gh: dict[str, str]
) -> None:
    main, tree = repo
    commit(tree, "parser.py", "x = 1\n")
    tip = git(tree, "rev-parse", "HEAD")
    result = land_pr_in(main, parser_branch(tree), fake_gh)
    assert result.status == "no_pr"
    assert result.reason == (
        f"land = pr: {main} has no git remote; the work stays on forgeflare/night/parser"
    )
    git(main, "remote", "add", "origin", str(tmp_path / "nowhere.git"))
    result = land_pr_in(main, parser_branch(tree), {"PATH": str(tmp_path / "empty")})
    assert result.status == "no_pr"
    assert (
        result.reason == "land = pr: gh is not installed; the work stays on forgeflare/night/parser"
    )
    assert git(tree, "rev-parse", "HEAD") == tip
    assert git(main, "rev-list", "--count", "main") == "1"
