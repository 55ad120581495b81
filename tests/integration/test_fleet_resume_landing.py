"""``fleet run --resume`` of a fleet killed while it landed, or before it saw a loop finish:
the gate the dead fleet left is ended before the new one runs (one gate at a time), a loop
that finished is landed and never run again, and every loop is landed or listed."""

from __future__ import annotations

import functools
import os
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import psutil
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
from supervisor_agents.project import Project

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def _fleet(tmp_path: Path, gate: str = "") -> tuple[Path, Path, Path]:
    """A repo with one fleet loop ``a`` whose branch has one commit; (fleet file, repo, tree)."""
    repo = new_repo(tmp_path / "repo")
    path = tmp_path / "fleet.toml"
    gate_line = f"gate = {gate!r}\n" if gate else ""
    path.write_text(
        f'[fleet]\nname = "n"\n{gate_line}\n[[loop]]\nname = "a"\nrepo = "repo"\nprompt = "x"\n'
    )
    tree = state_dir(path, "n") / "worktrees" / "a"
    git(repo, "worktree", "add", "-q", "-b", "forgeflare/n/a", str(tree))
    (tree / "a.txt").write_text("a\n")
    git(tree, "add", "a.txt")
    git(tree, "commit", "-qm", "a")
    return path, repo, tree


def _save(path: Path, tree: Path, repo: Path, **loop: object) -> None:
    save_record(
        state_dir(path, "n") / "fleet.json",
        FleetRecord(
            name="n",
            fleet_file=str(path),
            started_at="2026-11-24T01:00:00Z",
            pid=2**22 + 1,  # no such process: the fleet is dead
            loops=[
                LoopRecord(
                    name="a",
                    branch="forgeflare/n/a",
                    worktree=str(tree),
                    repo=str(repo),
                    **loop,  # type: ignore[arg-type]
                )
            ],
        ),
    )


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _resume(path: Path, lines: list[str]) -> FleetRecord:
    opts = FleetOptions(
        fleet_file=path, fleet=load_fleet_file(path), resume=True, log=lines.append, grace=1
    )
    return trio.run(functools.partial(run_fleet, opts))


def test_a_fleet_killed_while_landing_ends_the_old_gate_before_its_own(tmp_path: Path) -> None:
    old_pid = tmp_path / "old-gate.pid"
    # The new gate passes only when the old one is gone: two gates at once fail it.
    gate = f'! kill -0 "$(cat {shlex.quote(str(old_pid))})" 2>/dev/null'
    path, repo, tree = _fleet(tmp_path, gate)
    # The gate the killed fleet left running (an orphan, not ours): it carries the marker.
    subprocess.run(
        ["setsid", "sh", "-c", f'sleep 600 & echo $! > "{old_pid}"'],
        env={**os.environ, "FORGEFLARE_FLEET_LAND": "m1"},
        check=True,
    )
    pid = int(old_pid.read_text())
    try:
        _save(path, tree, repo, status="landing", landing="m1", finish_type="complete")
        lines: list[str] = []
        record = _resume(path, lines)
        assert not _alive(pid)  # ended (TERM, grace, KILL) before the new gate ran
    finally:
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)
    loop = record.loop("a")
    assert (loop.status, loop.landing) == ("landed", None), (loop, lines)
    assert "a: ended the gate the dead fleet left running" in lines
    assert git(repo, "log", "--format=%s", "main").splitlines() == ["a", "init"]


def test_a_loop_that_finished_unseen_is_landed_not_run_again(tmp_path: Path) -> None:
    path, repo, tree = _fleet(tmp_path)
    # The loop ran to complete; its fleet died before it saw that (still "running").
    codex = shlex.join([sys.executable, str(FIXTURES / "fake_codex.py")])
    done = Project(tree).run("--mode", "planning", "--backend", "codex", "--agent-cmd", codex)
    assert done.code == 0, done.stderr
    runs = sorted((tree / ".fresher" / "runs").iterdir())
    assert len(runs) == 1
    _save(path, tree, repo, status="running", pid=2**22 + 2, pid_started=1.0)
    lines: list[str] = []
    record = _resume(path, lines)
    loop = record.loop("a")
    assert (loop.status, loop.finish_type) == ("landed", "complete"), (loop, lines)
    assert sorted((tree / ".fresher" / "runs").iterdir()) == runs  # not run again
    assert not any("starting" in line for line in lines), lines
    saved = load_record(state_dir(path, "n") / "fleet.json")
    assert saved is not None
    assert saved.finished_at is not None
    assert saved.loop("a").runs == [runs[0].name]
