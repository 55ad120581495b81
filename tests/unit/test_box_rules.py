"""The box's pure rules (where a gate runs, which git config runs a program, what changed, the
generated gitconfig, the bwrap order) and their small I/O edges on real files and real git."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forgeflare.security._gaterun import choose_gate_box
from forgeflare.security._gitguard import changes, describe_changes, git_fingerprint, runs_a_program
from forgeflare.security._sandbox import SandboxPlan, bwrap_argv, git_readonly_paths, gitconfig_text
from forgeflare.trust import GATE_NOTE, TrustCheck, TrustItem, review_lines
from project_support import git, new_repo

P = Path("/w/project")


@pytest.mark.parametrize(
    ("setting", "problem", "boxed", "said", "refused"),
    [
        ("auto", None, True, "gate: runs in the sandbox (bubblewrap), without secrets", ""),
        ("bwrap", None, True, "gate: runs in the sandbox (bubblewrap), without secrets", ""),
        ("off", None, False, 'gate: runs unconfined ([security] sandbox = "off")', ""),
        ("off", "no bwrap", False, 'gate: runs unconfined ([security] sandbox = "off")', ""),
        ("auto", "no bwrap", False, "gate: runs unconfined: no bwrap", ""),
        (
            "bwrap",
            "no bwrap",
            False,
            'gate: not run: [security] sandbox = "bwrap": no bwrap',
            'not run: [security] sandbox = "bwrap": no bwrap',
        ),
    ],
)
def test_where_a_gate_runs(
    setting: str, problem: str | None, boxed: bool, said: str, refused: str
) -> None:
    assert choose_gate_box(setting, problem) == (boxed, said, refused)


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


def test_trust_says_a_gate_runs_project_code(tmp_path: Path) -> None:
    items = [TrustItem(key="[limits] gate", definition='{"command": "pytest"}')]
    check = TrustCheck(trusted=False)
    assert f"         note: {GATE_NOTE}" in review_lines(items, check)
    other = [TrustItem(key="[notify] command", definition='{"command": "x"}')]
    assert not any("note:" in line for line in review_lines(other, check))


@pytest.mark.linux_only("PR_SET_DUMPABLE is Linux")
def test_a_forgeflare_process_is_not_dumpable() -> None:
    child = "from forgeflare.platform._dumpable import dumpable; print(dumpable())"
    code = (
        "import subprocess, sys; from forgeflare.platform._dumpable import dumpable, forbid_dumps; "
        "print(dumpable(), forbid_dumps(), dumpable(), flush=True); "
        f"subprocess.run([sys.executable, '-c', {child!r}])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    # What it starts is dumpable again (exec resets it): the flag guards the key holder only.
    assert out.split() == ["True", "True", "False", "True"]
