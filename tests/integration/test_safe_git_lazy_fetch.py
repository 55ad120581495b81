"""forgeflare's git never fetches for a local command: a partial clone's promisor can run a
program.

A copied tree (or an agent outside the box) can make the repository a partial clone whose
promisor remote is ``ext::sh -c …`` (allowed by ``protocol.ext.allow``) and delete one object:
``git diff`` then fetches the missing object from the promisor, running the program. Plain git
springs it (so the trap is real); forgeflare's git (``run_git``) and the reviewer's diff, on the
host with the sandbox off, do not, and still answer what they can.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import trio

from forgeflare.security import BoxSettings, collect_diff, gate_box, run_git
from project_support import committed_repo, git


def promisor_repo(root: Path, marker: Path) -> Path:
    repo = committed_repo(root / "repo", {"f.txt": "one\n"}, "1")
    (repo / "f.txt").write_text("two\n")
    git(repo, "-c", "user.name=T", "-c", "user.email=t@example.invalid", "commit", "-qam", "2")
    blob = git(repo, "rev-parse", "HEAD~1:f.txt")
    (repo / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    for key, value in {
        "core.repositoryformatversion": "1",
        "extensions.partialClone": "evil",
        "remote.evil.url": f"ext::sh -c touch% {marker}% >&2",
        "remote.evil.promisor": "true",
        "protocol.ext.allow": "always",
    }.items():
        git(repo, "config", key, value)
    return repo


def test_plain_git_fetches_from_the_promisor(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    repo = promisor_repo(tmp_path, marker)
    subprocess.run(["git", "diff", "HEAD~1"], cwd=repo, capture_output=True, check=False)
    assert marker.exists()


def test_forgeflares_git_fetches_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    repo = promisor_repo(tmp_path, marker)
    for args in (("diff", "HEAD~1"), ("log", "-p"), ("show", "HEAD~1"), ("status",)):
        run_git(repo, *args)
    assert not marker.exists()
    assert run_git(repo, "status", "--porcelain").ok  # what needs no missing object works

    async def reviewer_diff() -> str:
        box = await gate_box(repo, BoxSettings(sandbox="off"), os.environ)
        collected = await collect_diff(repo, "HEAD~1", box=box, env=os.environ, budget=10_000)
        return collected.diff

    trio.run(reviewer_diff)
    assert not marker.exists()
