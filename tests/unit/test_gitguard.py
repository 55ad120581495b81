"""The git guard: which git config runs a program, what changed between two fingerprints, and
the fingerprint of a real repository (plants seen, samples not)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forgeflare.security._gitguard import changes, describe_changes, git_fingerprint, runs_a_program
from project_support import git, new_repo

P = Path("/w/project")


@pytest.mark.parametrize(
    ("key", "value", "runs"),
    [
        ("core.fsmonitor", "x", True),
        ("core.hooksPath", "githooks", True),
        ("core.pager", "less", True),
        ("core.editor", "vi", True),
        ("core.sshCommand", "ssh", True),
        ("alias.st", "!touch m", True),
        ("alias.st", "  !touch m", True),
        ("alias.st", "status -s", False),
        ("diff.external", "x", True),
        ("filter.lfs.clean", "x", True),
        ("include.path", "~/x", True),
        ("includeIf.gitdir:~/w/.path", "x", True),
        ("credential.helper", "store", True),
        ("merge.ours.driver", "true", True),
        ("remote.origin.uploadpack", "x", True),
        ("remote.origin.url", "https://example.invalid/r.git", False),
        ("protocol.ext.allow", "always", True),
        ("protocol.allow", "always", True),
        ("extensions.partialClone", "evil", True),
        ("user.email", "a@b", False),
        ("core.filemode", "true", False),
        ("merge.conflictstyle", "diff3", False),
    ],
)
def test_which_config_keys_run_a_program(key: str, value: str, runs: bool) -> None:
    assert runs_a_program(key, value) is runs


def test_changes_name_what_differs_appears_or_goes() -> None:
    before = {".git": "dir:1:2", "git config core.pager": "less", ".git/hooks/x": "a"}
    after = {".git": "dir:1:2", "git config core.pager": "evil", ".git/hooks/pre-commit": "b"}
    assert changes(before, after) == [
        ".git/hooks/pre-commit",
        ".git/hooks/x",
        "git config core.pager",
    ]
    assert changes(before, dict(before)) == []
    line = describe_changes([f"n{i}" for i in range(7)])
    assert "n4 and 2 more" in line
    assert "\n" not in line


@given(st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=6))
def test_no_change_against_itself_and_symmetric(d: dict[str, str]) -> None:
    assert changes(d, d) == []
    other = {**d, "extra": "1"}
    assert changes(d, other) == changes(other, d)


@pytest.mark.parametrize(
    ("plant", "named"),
    [
        (["config", "core.pager", "evil"], "git config core.pager"),
        (["config", "alias.st", "!evil"], "git config alias.st"),
        (["config", "include.path", "/x"], "git config include.path"),
    ],
)
def test_a_plant_shows_in_the_fingerprint(tmp_path: Path, plant: list[str], named: str) -> None:
    repo = new_repo(tmp_path / "repo")
    before = git_fingerprint(repo)
    git(repo, "config", "user.email", "other@example.invalid")  # not a program: unseen
    git(repo, "commit", "-q", "--allow-empty", "-m", "more")
    assert changes(before, git_fingerprint(repo)) == []
    git(repo, *plant)
    assert changes(before, git_fingerprint(repo)) == [named]


def test_hooks_count_samples_do_not(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo")
    before = git_fingerprint(repo)
    (repo / ".git" / "hooks" / "pre-push.sample").write_text("#!/bin/sh\n")
    assert changes(before, git_fingerprint(repo)) == []
    (repo / ".git" / "hooks" / "pre-commit").write_text("#!/bin/sh\n")
    assert changes(before, git_fingerprint(repo)) == [".git/hooks/pre-commit"]


def test_a_swapped_git_directory_is_seen(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo")
    before = git_fingerprint(repo)
    (repo / ".git").rename(repo / ".git-old")
    git(repo, "init", "-q")
    assert ".git" in changes(before, git_fingerprint(repo))
