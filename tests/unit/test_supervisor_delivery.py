"""The delivery decisions (pure): what a checkpoint adds, stale locks, undelivered claims."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgeflare.supervisor.evidence import FINISH_EXIT_CODES, FinishType
from forgeflare.supervisor.evidence._delivery import (
    MAX_FILE_BYTES,
    MAX_NEW_FILES,
    Change,
    CheckpointPlan,
    exclude_pathspec,
    lock_is_stale,
    plan_checkpoint,
    secret_shaped,
    undelivered_reason,
)


@pytest.mark.parametrize(
    ("path", "secret"),
    [
        (".env", True),
        (".env.local", True),
        ("config/.envrc", True),
        ("certs/server.pem", True),
        ("deploy.key", True),
        ("id_rsa", True),
        ("keys/id_ed25519.pub", True),
        ("src/environment.py", False),
        ("keyboard.py", False),
        ("docs/identity.md", False),
        ("README.md", False),
    ],
)
def test_secret_shaped_names(path: str, secret: bool) -> None:
    assert secret_shaped(path) is secret


@pytest.mark.parametrize(
    ("changes", "kwargs", "expected"),
    [
        ([Change("a.py")], {}, CheckpointPlan(add=("a.py",))),
        (
            [Change("a.py"), Change("new.txt", untracked=True, size=3)],
            {},
            CheckpointPlan(add=("a.py", "new.txt")),
        ),
        ([], {}, CheckpointPlan(skip="nothing to commit")),
        (
            [Change("a.py")],
            {"in_progress": "merge"},
            CheckpointPlan(skip="a merge is in progress"),
        ),
        (
            [Change("a.py")],
            {"in_progress": "rebase"},
            CheckpointPlan(skip="a rebase is in progress"),
        ),
        ([Change("a.py")], {"detached": True}, CheckpointPlan(skip="detached HEAD")),
        (
            [Change("a.py"), Change("notes.md")],
            {"at_start": ["notes.md"]},
            CheckpointPlan(add=("a.py",), left_out=("notes.md: changed before the loop started",)),
        ),
        (
            [Change(".env", untracked=True, size=10), Change("b.py")],
            {},
            CheckpointPlan(add=("b.py",), left_out=(".env: secret-shaped name",)),
        ),
        (
            [Change("model.bin", filtered=True)],
            {},
            CheckpointPlan(
                left_out=("model.bin: has a filter= attribute (LFS)",), skip="nothing to commit"
            ),
        ),
        (
            [Change("big.dat", untracked=True, size=MAX_FILE_BYTES), Change("c.py")],
            {},
            CheckpointPlan(add=("c.py",), left_out=("big.dat: 10 MB or more",)),
        ),
        (
            # a tracked file may grow past the cap: it is the project's own
            [Change("big.dat", size=MAX_FILE_BYTES * 2)],
            {},
            CheckpointPlan(add=("big.dat",)),
        ),
        (
            [Change(f"gen/{i}.o", untracked=True, size=1) for i in range(MAX_NEW_FILES + 1)],
            {},
            CheckpointPlan(skip=f"{MAX_NEW_FILES + 1} new files (more than 1,000)"),
        ),
    ],
)
def test_plan_checkpoint(
    changes: list[Change], kwargs: dict[str, object], expected: CheckpointPlan
) -> None:
    assert plan_checkpoint(changes, **kwargs) == expected  # type: ignore[arg-type]


_names = st.text(alphabet="abcdenv._/", min_size=1, max_size=8)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.builds(
            Change,
            _names,
            untracked=st.booleans(),
            size=st.none() | st.integers(0, 2 * MAX_FILE_BYTES),
            filtered=st.booleans(),
        ),
        max_size=8,
        unique_by=lambda c: c.path,  # git status names a path once
    ),
    st.sets(_names, max_size=3),
)
def test_plan_never_adds_what_it_must_not(changes: list[Change], at_start: set[str]) -> None:
    plan = plan_checkpoint(changes, at_start=at_start)
    for path in plan.add:
        assert path not in at_start
        assert not secret_shaped(path)
        change = next(c for c in changes if c.path == path)
        assert not change.filtered
        assert not (change.untracked and (change.size or 0) >= MAX_FILE_BYTES)
    assert (plan.skip is None) == bool(plan.add)


@pytest.mark.parametrize(
    ("mtime", "since", "holders", "stale"),
    [
        (100.0, 200.0, [], True),  # left before the agent ended, nobody holds it: a crash
        (100.0, 200.0, [4242], False),  # a live git of ours works there
        (300.0, 200.0, [], False),  # newer than the agent's exit: someone is at work
        (200.0, 200.0, [], False),
    ],
)
def test_lock_is_stale(mtime: float, since: float, holders: list[int], stale: bool) -> None:
    assert lock_is_stale(lock_mtime=mtime, since=since, holders=holders) is stale


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({}, None),
        (
            {"checkpoint_failed": "fatal: Unable to create index.lock"},
            "undelivered: the loop's checkpoint commit failed (fatal: Unable to create "
            "index.lock); see `git -C /p status`",
        ),
        (
            {"dirty": ["a.py"]},
            "undelivered: uncommitted changes left (a.py); see `git -C /p status`",
        ),
        (
            {"dirty": ["a", "b", "c", "d", "e"]},
            "undelivered: uncommitted changes left (a, b, c and 2 more); see `git -C /p status`",
        ),
        (
            {"commits": 0, "boxes_checked": 3},
            "undelivered: 3 plan box(es) checked but no commit was made; see `git -C /p log`",
        ),
        ({"commits": 1, "boxes_checked": 3}, None),
        ({"commits": 0, "boxes_checked": 0}, None),  # nothing claimed to be done, nothing owed
    ],
)
def test_undelivered_reason(kwargs: dict[str, object], expected: str | None) -> None:
    given_: dict[str, object] = {
        "checkpoint_failed": None,
        "dirty": [],
        "commits": 1,
        "boxes_checked": 0,
        "where": "/p",
        **kwargs,
    }
    assert undelivered_reason(**given_) == expected  # type: ignore[arg-type]


def test_undelivered_is_exit_22() -> None:
    assert FINISH_EXIT_CODES[FinishType.UNDELIVERED] == 22
    assert FinishType("undelivered") is FinishType.UNDELIVERED


def test_pathspec_leaves_out_runtime_files_with_real_git(tmp_path: Path) -> None:
    """The one pathspec, checked against a real ``git status``: runtime files, run records in
    a custom log_dir and the stop-hook's files are not work; everything else is."""

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=tmp_path, check=True, capture_output=True, text=True
        ).stdout

    git("init", "-q")
    for rel in (
        ".forgeflare/convergence.json",
        ".forgeflare/hooks.log",
        ".fresher/runs/r1/run.json",
        ".fresher/loop.lock",
        ".entire/metadata/s/x.jsonl",
        "logs/runs/r1/run.json",
        ".forgeflare/loop-reviews/r.json",
        ".claude/idle-loop.local.md",
        "src/app.py",
        ".fresher/hooks/started",
    ):
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")
    out = git("status", "--porcelain", "--untracked-files=all", *exclude_pathspec("logs/runs"))
    assert sorted(line[3:] for line in out.splitlines()) == [
        ".fresher/hooks/started",
        "src/app.py",
    ]
