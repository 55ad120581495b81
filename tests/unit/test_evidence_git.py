"""The git facts of the finish decision on real repositories: HEAD and a digest of the tree's
changes (forgeflare's own files left out, a file changed again seen), commits between two
heads, the tree a commit points at."""

from __future__ import annotations

import os
from pathlib import Path

from forgeflare.supervisor.evidence import (
    commits_and_tree,
    git_snapshot,
    snapshot_of,
    tree_of,
)
from forgeflare.supervisor.evidence._git import commits_between
from project_support import committed_repo, git


async def test_the_snapshot_changes_with_the_tree_and_not_with_our_own_files(
    tmp_path: Path,
) -> None:
    repo = committed_repo(tmp_path / "repo", {"a.py": "a\n"})
    clean = await git_snapshot(repo)
    assert clean is not None
    assert clean.head == git(repo, "rev-parse", "HEAD")
    (repo / ".forgeflare").mkdir()
    (repo / ".forgeflare" / "convergence.json").write_text("{}")
    runs = repo / "runs"
    runs.mkdir()
    (runs / "run.json").write_text("{}")
    assert await git_snapshot(repo, excluded=(runs, tmp_path / "elsewhere")) == clean
    (repo / "a.py").write_text("changed\n")
    once = await git_snapshot(repo)
    assert once is not None
    assert once.tree_digest != clean.tree_digest
    # Changed again while already modified: the same status line, another size and mtime.
    (repo / "a.py").write_text("changed again, longer\n")
    os.utime(repo / "a.py", ns=(1, 1))
    twice = await git_snapshot(repo)
    assert twice is not None
    assert twice.tree_digest != once.tree_digest


async def test_no_repository_is_no_snapshot(tmp_path: Path) -> None:
    assert await git_snapshot(tmp_path) is None


def test_a_status_output_read() -> None:
    initial = snapshot_of(Path("/nonexistent"), b"# branch.oid (initial)\0# branch.head main\0")
    assert initial.head is None
    head = "a" * 40
    some = snapshot_of(Path("/nonexistent"), f"# branch.oid {head}\0? new.txt\0".encode())
    other = snapshot_of(Path("/nonexistent"), f"# branch.oid {head}\0? other.txt\0".encode())
    assert some.head == head
    assert some.tree_digest != other.tree_digest
    assert snapshot_of(Path("/x"), b"# branch.oid (initial)\0").tree_digest == initial.tree_digest


async def test_commits_between_two_heads_and_the_tree(tmp_path: Path) -> None:
    repo = committed_repo(tmp_path / "repo", {"a.py": "a\n"})
    first = git(repo, "rev-parse", "HEAD")
    for n in range(2):
        (repo / f"f{n}").write_text(str(n))
        git(repo, "add", "-A")
        git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", f"c{n}")
    last = git(repo, "rev-parse", "HEAD")
    assert await commits_between(repo, first, last) == 2
    assert await commits_between(repo, last, last) == 0
    assert await commits_between(repo, first, None) == 0
    assert await commits_between(repo, None, last) == 3
    assert await commits_between(repo, "f" * 40, last) == 1  # history rewritten: one
    tree = git(repo, "rev-parse", f"{last}^{{tree}}")
    assert await commits_and_tree(repo, first, last) == (2, tree)
    assert await commits_and_tree(repo, last, last) == (0, None)
    assert await tree_of(repo, last) == tree
    assert await tree_of(repo, None) is None
    assert await tree_of(repo, "f" * 40) is None
