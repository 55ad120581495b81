"""``fleet run --resume`` of a fleet that died between a loop's finish and its landing."""

from __future__ import annotations

import functools
from pathlib import Path

import trio

from forgeflare.fleet import (
    FleetOptions,
    FleetRecord,
    LoopRecord,
    load_fleet_file,
    load_record,
    run_fleet,
    save_record,
    state_dir,
)
from project_support import git, new_repo


def test_a_finished_loop_is_landed_on_resume(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo")
    path = tmp_path / "fleet.toml"
    path.write_text('[fleet]\nname = "n"\n\n[[loop]]\nname = "a"\nrepo = "repo"\nprompt = "x"\n')
    sdir = state_dir(path, "n")
    tree = sdir / "worktrees" / "a"
    git(repo, "worktree", "add", "-q", "-b", "forgeflare/n/a", str(tree))
    (tree / "a.txt").write_text("a\n")
    git(tree, "add", "a.txt")
    git(tree, "commit", "-qm", "a")
    # what a fleet killed right after the loop finished leaves behind
    save_record(
        sdir / "fleet.json",
        FleetRecord(
            name="n",
            fleet_file=str(path),
            started_at="2026-11-24T01:00:00Z",
            loops=[
                LoopRecord(
                    name="a",
                    status="finished",
                    branch="forgeflare/n/a",
                    worktree=str(tree),
                    repo=str(repo),
                    finish_type="complete",
                    commits=1,
                    runs=["r1"],
                )
            ],
        ),
    )
    lines: list[str] = []
    opts = FleetOptions(
        fleet_file=path, fleet=load_fleet_file(path), resume=True, log=lines.append, grace=1
    )
    record = trio.run(functools.partial(run_fleet, opts))
    assert record.loop("a").status == "landed", lines
    assert git(repo, "log", "--format=%s", "main").splitlines() == ["a", "init"]
    saved = load_record(sdir / "fleet.json")
    assert saved is not None
    assert saved.finished_at is not None
    assert saved.loop("a").runs == ["r1"]
